// Generators and samples shared by the tests of WWW-Authenticate, Authorization and the server's
// Digest check.

import type {
  Authorization,
  Challenge,
  DigestAlgorithm,
  DigestChallenge,
  VerifyDigestOptions,
} from '../../../src/media/rtsp/index.js';
import { mutate, type Rng } from '../../support/fuzz.js';

export const ALGORITHMS: DigestAlgorithm[] = ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess'];

/** A server's options with these users and a nonce store that accepts every nonce. */
export function server(
  over: Partial<VerifyDigestOptions> & Pick<VerifyDigestOptions, 'method' | 'uri' | 'realm'>,
  users: Record<string, string>,
): VerifyDigestOptions {
  return { password: (u) => (Object.hasOwn(users, u) ? users[u] : undefined), checkNonce: () => true, ...over };
}

/** RFC 7616 §3.9.1's example: Mufasa, password "Circle of Life", GET /dir/index.html. */
export const RFC7616 = (() => {
  const realm = 'http-auth@example.org';
  const nonce = '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v';
  const opaque = 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS';
  return {
    realm,
    nonce,
    opaque,
    cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
    /** The 401's two WWW-Authenticate headers. */
    headers: [
      `Digest realm="${realm}", qop="auth, auth-int", algorithm=SHA-256, nonce="${nonce}", opaque="${opaque}"`,
      `Digest realm="${realm}", qop="auth, auth-int", algorithm=MD5, nonce="${nonce}", opaque="${opaque}"`,
    ],
  };
})();

export const QUOTED = 'abcXYZ019 "\\,;=/@:()ü€';

export function genChallenge(rng: Rng): Challenge {
  if (rng.int(4) === 0) {
    const basic: Challenge = { scheme: 'Basic', realm: rng.string(20, QUOTED) };
    if (rng.int(2) === 0) basic.charset = 'UTF-8';
    return basic;
  }
  const ch: DigestChallenge = {
    scheme: 'Digest',
    realm: rng.string(20, QUOTED),
    nonce: rng.string(40, QUOTED),
    algorithm: rng.pick(ALGORITHMS),
    qop: rng.pick([[], ['auth'], ['auth', 'auth-int'], ['auth-int']]),
  };
  if (rng.int(2) === 0) ch.opaque = rng.string(20, QUOTED);
  if (rng.int(3) === 0) ch.stale = rng.int(2) === 0;
  if (rng.int(4) === 0) ch.domain = rng.string(20, QUOTED);
  if (rng.int(4) === 0) ch.charset = 'UTF-8';
  if (rng.int(4) === 0) ch.userhash = rng.int(2) === 0;
  return ch;
}

export function genAuthorization(rng: Rng): Authorization {
  if (rng.int(3) === 0)
    return { scheme: 'Basic', username: rng.string(12, QUOTED.replace(':', '')), password: rng.string(12, QUOTED) };
  const a: Authorization = {
    scheme: 'Digest',
    username: rng.string(12, QUOTED),
    realm: rng.string(12, QUOTED),
    nonce: rng.string(30, QUOTED),
    uri: `rtsp://cam/${rng.string(12, QUOTED)}`,
    response: `${rng.string(64, '0123456789abcdef')}f`,
  };
  if (rng.int(2) === 0) {
    a.qop = rng.pick(['auth', 'auth-int']);
    a.nc = rng.string(7, '0123456789abcdef').padStart(8, '0');
    a.cnonce = rng.string(20, QUOTED);
  }
  if (rng.int(2) === 0) a.algorithm = rng.pick(ALGORITHMS);
  if (a.algorithm?.endsWith('-sess') === true && a.cnonce === undefined) a.cnonce = 'c';
  if (rng.int(2) === 0) a.opaque = rng.string(12, QUOTED);
  if (rng.int(4) === 0) a.userhash = rng.int(2) === 0;
  return a;
}

const SAMPLES = [
  'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe"',
  'Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1"',
  'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==, Negotiate abc=, Digest realm="a", nonce="b"',
];

/** 3000 header values: every fourth random, the others authentication headers mutated. */
export function mutatedAuthHeaders(rng: Rng): string[] {
  const out: string[] = [];
  for (let i = 0; i < 3000; i++)
    out.push(i % 4 === 0 ? rng.string(120) : mutate(rng, rng.pick(SAMPLES), '"\\,= ;:*\'%abcBasicDigest\u0000'));
  return out;
}
