import { describe, expect, it } from 'vitest';
import {
  RtspParseError,
  RtspStreamReader,
  answerChallenge,
  chooseChallenge,
  digestResponse,
  formatAuthorization,
  formatChallenge,
  parseAuthorization,
  parseChallenges,
  verifyDigest,
  type Authorization,
  type Challenge,
  type DigestAlgorithm,
  type DigestChallenge,
  type VerifyDigestOptions,
} from '../../../src/media/rtsp/index.js';
import { makeRng, mutate, type Rng } from '../../support/fuzz.js';
import { FFMPEG_REQUESTS, GSTREAMER_REQUESTS, statusOf } from './fixtures.js';

const ALGORITHMS: DigestAlgorithm[] = ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess'];

function server(over: Partial<VerifyDigestOptions> & Pick<VerifyDigestOptions, 'method' | 'uri' | 'realm'>, users: Record<string, string>): VerifyDigestOptions {
  return { password: (u) => (Object.hasOwn(users, u) ? users[u] : undefined), checkNonce: () => true, ...over };
}

describe('RFC 7616 §3.9.1 (Mufasa, Circle of Life)', () => {
  const realm = 'http-auth@example.org';
  const nonce = '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v';
  const opaque = 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS';
  const cnonce = 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ';
  const headers = [
    `Digest realm="${realm}", qop="auth, auth-int", algorithm=SHA-256, nonce="${nonce}", opaque="${opaque}"`,
    `Digest realm="${realm}", qop="auth, auth-int", algorithm=MD5, nonce="${nonce}", opaque="${opaque}"`,
  ];
  const vectors: Array<[DigestAlgorithm, string]> = [
    ['MD5', '8ca523f5e9506fed4657c9700eebdbec'],
    ['SHA-256', '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1'],
  ];

  it('parses both challenges and prefers SHA-256', () => {
    const challenges = parseChallenges(headers);
    expect(challenges).toEqual([
      { scheme: 'Digest', realm, nonce, algorithm: 'SHA-256', qop: ['auth', 'auth-int'], opaque },
      { scheme: 'Digest', realm, nonce, algorithm: 'MD5', qop: ['auth', 'auth-int'], opaque },
    ]);
    expect(chooseChallenge(challenges)).toBe(challenges[0]);
  });

  for (const [algorithm, response] of vectors) {
    it(`computes, answers and verifies the ${algorithm} response`, () => {
      const input = { algorithm, username: 'Mufasa', password: 'Circle of Life', realm, nonce, method: 'GET', uri: '/dir/index.html', qop: 'auth', nc: '00000001', cnonce };
      expect(digestResponse(input)).toBe(response);
      expect(digestResponse({ ...input, nc: 1 })).toBe(response);

      const ch = parseChallenges(headers).find((c) => c.scheme === 'Digest' && c.algorithm === algorithm);
      if (ch === undefined) throw new Error('challenge missing');
      const header = answerChallenge(ch, { username: 'Mufasa', password: 'Circle of Life', method: 'GET', uri: '/dir/index.html', cnonce, nc: 1 });
      expect(parseAuthorization(header)).toEqual({
        scheme: 'Digest',
        username: 'Mufasa',
        realm,
        nonce,
        uri: '/dir/index.html',
        response,
        algorithm,
        cnonce,
        opaque,
        qop: 'auth',
        nc: '00000001',
      });

      // The RFC's own Authorization header, field order and all.
      const rfc = `Digest username="Mufasa", realm="${realm}", uri="/dir/index.html", algorithm=${algorithm}, nonce="${nonce}", nc=00000001, cnonce="${cnonce}", qop=auth, response="${response}", opaque="${opaque}"`;
      expect(verifyDigest(rfc, server({ method: 'GET', uri: '/dir/index.html', realm }, { Mufasa: 'Circle of Life' }))).toEqual({ ok: true, username: 'Mufasa', algorithm });
    });
  }

  it('decodes the username* of §3.9.2', () => {
    const auth = parseAuthorization(
      `Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm="api@example.org", uri="/doe.json", algorithm=SHA-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", nc=00000001, cnonce="NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", qop=auth, response="ae66e67d6b427bd3f120414a82e4acff38e8ecd9101d6c861229025f607a79dd", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS"`,
    );
    expect(auth.scheme === 'Digest' && auth.username).toBe('Jäsøn Doe');
  });
});

describe('RFC 2617 §3.5 (Mufasa, Circle Of Life)', () => {
  const challenge = 'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"';
  const authorization =
    'Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41"';

  it('reads the challenge as MD5 with qop auth and auth-int', () => {
    expect(parseChallenges([challenge])).toEqual([
      { scheme: 'Digest', realm: 'testrealm@host.com', nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093', algorithm: 'MD5', qop: ['auth', 'auth-int'], opaque: '5ccc069c403ebaf9f0171e9517f40e41' },
    ]);
  });

  it('computes and verifies the response', () => {
    expect(
      digestResponse({
        username: 'Mufasa',
        password: 'Circle Of Life',
        realm: 'testrealm@host.com',
        nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
        method: 'GET',
        uri: '/dir/index.html',
        qop: 'auth',
        nc: '00000001',
        cnonce: '0a4f113b',
      }),
    ).toBe('6629fae49393a05397450978507c4ef1');
    expect(verifyDigest(authorization, server({ method: 'GET', uri: '/dir/index.html', realm: 'testrealm@host.com' }, { Mufasa: 'Circle Of Life' }))).toEqual({
      ok: true,
      username: 'Mufasa',
      algorithm: 'MD5',
    });
  });
});

describe('real clients (captured)', () => {
  it('verifies every Authorization ffmpeg and GStreamer sent to gst-rtsp-server', () => {
    const r = new RtspStreamReader();
    r.push(Buffer.from([...FFMPEG_REQUESTS, ...GSTREAMER_REQUESTS].join('')));
    let verified = 0;
    for (let item = r.next(); item !== null; item = r.next()) {
      if (item.kind !== 'request') continue;
      const auth = item.msg.headers.get('authorization');
      if (auth === undefined) continue;
      const opts = server({ method: item.msg.method, uri: item.msg.uri, realm: 'GStreamer RTSP Server' }, { admin: 'open-sesame' });
      expect(verifyDigest(auth, opts)).toEqual({ ok: true, username: 'admin', algorithm: 'MD5' });
      expect(verifyDigest(auth, { ...opts, method: 'OPTIONS' })).toEqual({ ok: false, reason: 'credentials' });
      verified++;
    }
    expect(verified).toBe(11);
  });

  // Both answered `WWW-Authenticate: Digest realm="cam", nonce="abc123", algorithm=SHA-256, qop="auth", opaque="op"`
  // followed by the same with algorithm=MD5, for DESCRIBE rtsp://127.0.0.1:8660/x as Mufasa / Circle of Life.
  const opts = server({ method: 'DESCRIBE', uri: 'rtsp://127.0.0.1:8660/x', realm: 'cam' }, { Mufasa: 'Circle of Life' });

  it('verifies ffmpeg 5.1, which quotes algorithm and qop', () => {
    const ffmpeg =
      'Digest username="Mufasa", realm="cam", nonce="abc123", uri="rtsp://127.0.0.1:8660/x", response="ec64f7accf0e02706e7f24d8ff2ed62e", algorithm="MD5", opaque="op", qop="auth", cnonce="ea0a51cc9e75af2f", nc=00000001';
    expect(verifyDigest(ffmpeg, opts)).toEqual({ ok: true, username: 'Mufasa', algorithm: 'MD5' });
  });

  it('verifies GStreamer 1.22, which answers without qop even when offered', () => {
    const gst = 'Digest username="Mufasa", realm="cam", nonce="abc123", uri="rtsp://127.0.0.1:8660/x", response="a5cedc6695932e77559dff82f80c8150", opaque="op"';
    expect(verifyDigest(gst, opts)).toEqual({ ok: true, username: 'Mufasa', algorithm: 'MD5' });
    expect(verifyDigest(gst, { ...opts, requireQop: true })).toEqual({ ok: false, reason: 'qop' });
  });
});

describe('parseChallenges', () => {
  const cases: Array<[string, string[], Challenge[]]> = [
    [
      'a Hikvision-style pair',
      ['Digest realm="IP Camera(C6934)", nonce="8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61", stale="FALSE"', 'Basic realm="IP Camera(C6934)"'],
      [
        { scheme: 'Digest', realm: 'IP Camera(C6934)', nonce: '8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61', algorithm: 'MD5', qop: [], stale: false },
        { scheme: 'Basic', realm: 'IP Camera(C6934)' },
      ],
    ],
    [
      'several challenges in one header, unknown schemes skipped',
      ['Negotiate YWJjZA==, Digest realm="a", nonce="n", algorithm=md5-sess, qop=auth, Bearer realm="x", Basic realm="a", charset="UTF-8"'],
      [
        { scheme: 'Digest', realm: 'a', nonce: 'n', algorithm: 'MD5-sess', qop: ['auth'] },
        { scheme: 'Basic', realm: 'a', charset: 'UTF-8' },
      ],
    ],
    ['an unsupported algorithm skipped', ['Digest realm="a", nonce="n", algorithm=SHA-512-256', 'Digest realm="a", nonce="n", algorithm=sha-256'], [{ scheme: 'Digest', realm: 'a', nonce: 'n', algorithm: 'SHA-256', qop: [] }]],
    [
      'unquoted values, missing commas, escapes, every field',
      ['digest REALM="say \\"hi\\" \\\\o/"  nonce=abc/def== ,opaque=x, stale=true, domain="/ rtsp://cam/", userhash=TRUE, charset=UTF-8'],
      [{ scheme: 'Digest', realm: 'say "hi" \\o/', nonce: 'abc/def==', algorithm: 'MD5', qop: [], opaque: 'x', stale: true, domain: '/ rtsp://cam/', userhash: true, charset: 'UTF-8' }],
    ],
    ['a bare Basic', ['Basic'], [{ scheme: 'Basic', realm: '' }]],
    [
      'a good header beside a malformed one',
      ['Digest realm=IP Camera, nonce=abc', 'Digest realm="IP Camera", nonce="abc"'],
      [{ scheme: 'Digest', realm: 'IP Camera', nonce: 'abc', algorithm: 'MD5', qop: [] }],
    ],
    ['nothing usable', ['Bearer realm="x"', 'NTLM'], []],
  ];
  for (const [name, values, expected] of cases) {
    it(`parses ${name}`, () => {
      expect(parseChallenges(values)).toEqual(expected);
    });
  }

  for (const value of ['Digest realm="a"', 'Digest nonce="n"', 'Digest realm="unterminated, nonce="n"', 'realm="a"', 'Digest realm="a", realm="b", nonce="n"', 'Digest @', 'Digest realm="a\u0000", nonce="n"']) {
    it(`answers 400 to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseChallenges([value]))).toBe(400);
    });
  }
});

describe('chooseChallenge', () => {
  const [sha, md5, md5sess, basic, authIntOnly, rfc2069] = parseChallenges([
    'Digest realm="r", nonce="n", algorithm=SHA-256, qop="auth"',
    'Digest realm="r", nonce="n", algorithm=MD5, qop="auth"',
    'Digest realm="r", nonce="n", algorithm=MD5-sess, qop="auth"',
    'Basic realm="r"',
    'Digest realm="r", nonce="n", algorithm=SHA-256, qop="auth-int"',
    'Digest realm="r", nonce="n"',
  ]) as [Challenge, Challenge, Challenge, Challenge, Challenge, Challenge];

  it('prefers SHA-256 over MD5 over Basic, whatever the order', () => {
    expect(chooseChallenge([basic, md5, sha])).toBe(sha);
    expect(chooseChallenge([basic, md5sess, md5])).toBe(md5);
    expect(chooseChallenge([basic, rfc2069])).toBe(rfc2069);
    expect(chooseChallenge([basic])).toBe(basic);
  });

  it('passes over challenges it cannot answer', () => {
    expect(chooseChallenge([authIntOnly, md5])).toBe(md5);
    expect(chooseChallenge([authIntOnly])).toBeNull();
    expect(chooseChallenge([])).toBeNull();
  });
});

describe('Authorization', () => {
  it('reads and writes Basic (RFC 7617 §2)', () => {
    expect(parseAuthorization('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==')).toEqual({ scheme: 'Basic', username: 'Aladdin', password: 'open sesame' });
    expect(formatAuthorization({ scheme: 'Basic', username: 'Aladdin', password: 'open sesame' })).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
    expect(parseAuthorization(formatAuthorization({ scheme: 'Basic', username: 'admin', password: 'a:b:c ünï' }))).toEqual({ scheme: 'Basic', username: 'admin', password: 'a:b:c ünï' });
    expect(() => formatAuthorization({ scheme: 'Basic', username: 'a:b', password: '' })).toThrow(TypeError);
  });

  const digest = 'Digest username="u", realm="r", nonce="n", uri="rtsp://cam/", response="0123abcd"';
  const errors: Array<[string, number]> = [
    ['', 400],
    ['Bearer abc.def', 401],
    ['Negotiate YWJj', 401],
    ['Basic !!!', 400],
    ['Basic', 400],
    [`Basic ${Buffer.from('no colon').toString('base64')}`, 400],
    ['Basic abc, Basic def', 400],
    ['Digest username="u", realm="r", nonce="n", uri="rtsp://cam/"', 400],
    [digest.replace('0123abcd', 'xyz'), 400],
    [`${digest}, qop=auth`, 400],
    [`${digest}, qop=auth, nc=00000001`, 400],
    [`${digest}, qop=auth, nc=zz, cnonce="c"`, 400],
    [`${digest}, algorithm=MD5-sess`, 400],
    [`${digest}, algorithm=SHA-512-256`, 400],
    [`${digest}, username*=UTF-8''u`, 400],
    [digest.replace('username="u"', "username*=ISO-8859-1''u"), 400],
    [digest.replace('username="u"', "username*=UTF-8''%ZZ"), 400],
    ['Digest abc', 400],
  ];
  for (const [value, status] of errors) {
    it(`answers ${status} to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseAuthorization(value))).toBe(status);
    });
  }

  it('writes Digest fields the way RTSP servers expect', () => {
    expect(
      formatAuthorization({ scheme: 'Digest', username: 'ad"min', realm: 'r', nonce: 'n', uri: 'rtsp://cam/', response: 'abcd', algorithm: 'MD5', cnonce: 'c', opaque: 'o', qop: 'auth', nc: '00000001' }),
    ).toBe('Digest username="ad\\"min", realm="r", nonce="n", uri="rtsp://cam/", response="abcd", algorithm=MD5, cnonce="c", opaque="o", qop=auth, nc=00000001');
    expect(() => formatAuthorization({ scheme: 'Digest', username: 'u', realm: 'r\r\n', nonce: 'n', uri: 'u', response: 'ab' })).toThrow(TypeError);
    expect(() => formatAuthorization({ scheme: 'Digest', username: 'u', realm: 'r', nonce: 'n', uri: 'u', response: 'not hex' })).toThrow(TypeError);
  });
});

describe('formatChallenge', () => {
  it('writes Digest and Basic challenges', () => {
    expect(formatChallenge({ scheme: 'Digest', realm: 'Edge Gateway', nonce: 'abc', algorithm: 'SHA-256', qop: ['auth'], opaque: 'o', stale: true })).toBe(
      'Digest realm="Edge Gateway", nonce="abc", algorithm=SHA-256, qop="auth", opaque="o", stale=TRUE',
    );
    expect(formatChallenge({ scheme: 'Digest', realm: 'r', nonce: 'n', algorithm: 'MD5', qop: [] })).toBe('Digest realm="r", nonce="n", algorithm=MD5');
    expect(formatChallenge({ scheme: 'Basic', realm: 'a "b"', charset: 'UTF-8' })).toBe('Basic realm="a \\"b\\"", charset=UTF-8');
    expect(() => formatChallenge({ scheme: 'Basic', realm: 'a\nb' })).toThrow(TypeError);
  });
});

describe('verifyDigest', () => {
  const realm = 'Edge Gateway';
  const uri = 'rtsp://gw.local:8554/cam1/main';
  const ch: DigestChallenge = { scheme: 'Digest', realm, nonce: 'nonce-1', algorithm: 'SHA-256', qop: ['auth'], opaque: 'op' };
  const good = answerChallenge(ch, { username: 'viewer', password: 'pw', method: 'DESCRIBE', uri, nc: 3 });
  const opts = server({ method: 'DESCRIBE', uri, realm }, { viewer: 'pw' });

  it('accepts good credentials and hands the nonce and count to the server', () => {
    const seen: Array<[string, number | null]> = [];
    expect(verifyDigest(good, { ...opts, checkNonce: (n, nc) => (seen.push([n, nc]), true) })).toEqual({ ok: true, username: 'viewer', algorithm: 'SHA-256' });
    expect(seen).toEqual([['nonce-1', 3]]);
  });

  it('says why it refuses', () => {
    const calls: string[] = [];
    const counting = { ...opts, checkNonce: (n: string) => (calls.push(n), true) };
    const cases: Array<[string | undefined, Partial<VerifyDigestOptions>, string]> = [
      [undefined, {}, 'missing'],
      ['  ', {}, 'missing'],
      ['Digest realm="', {}, 'malformed'],
      ['Basic dmlld2VyOnB3', {}, 'scheme'],
      ['Bearer abc', {}, 'scheme'],
      [good, { realm: 'other' }, 'realm'],
      [good, { uri: 'rtsp://gw.local:8554/cam2/main' }, 'uri'],
      [good, { algorithms: ['MD5'] }, 'algorithm'],
      [good.replace('qop=auth', 'qop=auth-int'), {}, 'qop'],
      [`${good}, userhash=true`, {}, 'userhash'],
      [good, { password: () => 'wrong' }, 'credentials'],
      [good, { password: () => undefined }, 'credentials'],
      [good, { method: 'PLAY' }, 'credentials'],
      [good.replace(/response="[0-9a-f]+"/, 'response="00"'), {}, 'credentials'],
    ];
    for (const [header, over, reason] of cases) expect(verifyDigest(header, { ...counting, ...over })).toEqual({ ok: false, reason });
    expect(calls).toEqual([]); // the nonce store is never touched for bad credentials
    expect(verifyDigest(good, { ...opts, checkNonce: () => false })).toEqual({ ok: false, reason: 'stale' });
  });

  it('accepts the answer to an RFC 2069 challenge (no qop), as live555 and GStreamer send', () => {
    const legacy = answerChallenge({ ...ch, algorithm: 'MD5', qop: [] }, { username: 'viewer', password: 'pw', method: 'DESCRIBE', uri });
    expect(legacy).not.toMatch(/qop|nc=|cnonce/);
    const seen: Array<number | null> = [];
    expect(verifyDigest(legacy, { ...opts, checkNonce: (_n, nc) => (seen.push(nc), true) })).toEqual({ ok: true, username: 'viewer', algorithm: 'MD5' });
    expect(seen).toEqual([null]);
  });

  it('answers Basic challenges with Basic credentials', () => {
    expect(answerChallenge({ scheme: 'Basic', realm: 'r' }, { username: 'Aladdin', password: 'open sesame', method: 'DESCRIBE', uri })).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
  });
});

const QUOTED = 'abcXYZ019 "\\,;=/@:()ü€';

function genChallenge(rng: Rng): Challenge {
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

function genAuthorization(rng: Rng): Authorization {
  if (rng.int(3) === 0) return { scheme: 'Basic', username: rng.string(12, QUOTED.replace(':', '')), password: rng.string(12, QUOTED) };
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

describe('auth fuzz', () => {
  const rng1 = makeRng();
  it(`parseChallenges(formatChallenge(x)) returns x (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 1000; i++) {
      const list = Array.from({ length: 1 + rng1.int(3) }, () => genChallenge(rng1));
      expect(parseChallenges(list.map(formatChallenge))).toEqual(list);
      expect(parseChallenges([list.map(formatChallenge).join(', ')])).toEqual(list);
    }
  });

  const rng2 = makeRng();
  it(`parseAuthorization(formatAuthorization(x)) returns x (seed ${rng2.seed})`, () => {
    for (let i = 0; i < 1000; i++) {
      const a = genAuthorization(rng2);
      expect(parseAuthorization(formatAuthorization(a))).toEqual(a);
    }
  });

  const rng3 = makeRng();
  it(`a client's answer verifies on the server for any credentials (seed ${rng3.seed})`, () => {
    for (let i = 0; i < 300; i++) {
      const username = rng3.string(12, QUOTED);
      const password = rng3.string(16, QUOTED);
      const ch = genChallenge(rng3);
      if (ch.scheme !== 'Digest' || (ch.qop.length > 0 && !ch.qop.includes('auth'))) continue;
      const uri = `rtsp://gw/${rng3.string(10, 'abc/=')}`;
      const header = answerChallenge(ch, { username, password, method: 'PLAY', uri, nc: 1 + rng3.int(1000) });
      const opts = server({ method: 'PLAY', uri, realm: ch.realm }, { [username]: password });
      expect(verifyDigest(header, opts)).toEqual({ ok: true, username, algorithm: ch.algorithm });
      expect(verifyDigest(header, { ...opts, password: () => `${password}x` })).toEqual({ ok: false, reason: 'credentials' });
    }
  });

  const rng4 = makeRng();
  it(`never throws anything but RtspParseError on mutated or random input (seed ${rng4.seed})`, () => {
    const samples = [
      'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe"',
      'Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1"',
      'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==, Negotiate abc=, Digest realm="a", nonce="b"',
    ];
    const opts = server({ method: 'GET', uri: '/dir/index.html', realm: 'testrealm@host.com' }, { Mufasa: 'Circle Of Life' });
    for (let i = 0; i < 3000; i++) {
      const input = i % 4 === 0 ? rng4.string(120) : mutate(rng4, rng4.pick(samples), '"\\,= ;:*\'%abcBasicDigest\u0000');
      const s1 = statusOf(() => parseChallenges([input]));
      const s2 = statusOf(() => parseAuthorization(input));
      expect(s1 === null || s1 === 400).toBe(true);
      expect(s2 === null || s2 === 400 || s2 === 401).toBe(true);
      expect(typeof verifyDigest(input, opts).ok).toBe('boolean');
    }
  });
});
