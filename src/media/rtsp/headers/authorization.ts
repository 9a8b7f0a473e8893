import { randomBytes } from 'node:crypto';
import { RtspParseError } from '../errors.js';
import { isTrue, param, parseAuthList } from './auth-params.js';
import {
  digestAlgorithm,
  digestResponse,
  formatNonceCount,
  isDigestAlgorithm,
  type DigestAlgorithm,
} from './digest.js';
import { fail, isToken } from './syntax.js';
import type { Challenge } from './www-authenticate.js';

// Authorization (RFC 2326 §12.5) for Basic (RFC 7617) and Digest (RFC 2617, RFC 7616): the
// credentials a request carries, and the client's answer to a challenge. The server's check of
// Digest credentials is digest-check.ts.

export interface BasicCredentials {
  scheme: 'Basic';
  username: string;
  password: string;
}

export interface DigestCredentials {
  scheme: 'Digest';
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  /** Hex digest as sent (compare case-insensitively). */
  response: string;
  /** Absent means MD5; kept absent so a relayed header is reproduced as it came. */
  algorithm?: DigestAlgorithm;
  cnonce?: string;
  opaque?: string;
  /** `auth` or `auth-int`, lower-cased. */
  qop?: string;
  /** Nonce count exactly as sent (8 hex digits); the digest covers this text, not its value. */
  nc?: string;
  userhash?: boolean;
}

export type Authorization = BasicCredentials | DigestCredentials;

/** RFC 8187 ext-value, as RFC 7616 §3.4.4 uses for `username*`; only UTF-8 is accepted. */
function decodeExtValue(text: string): string {
  const m = /^([^']*)'[^']*'(.*)$/.exec(text);
  if (m === null || (m[1] ?? '').toLowerCase() !== 'utf-8') fail('invalid username*');
  try {
    return decodeURIComponent(m[2] ?? '');
  } catch {
    return fail('invalid username*');
  }
}

function decodeBasic(token68: string | null): BasicCredentials {
  if (token68 === null || !/^[A-Za-z0-9+/]+={0,2}$/.test(token68)) fail('invalid Basic credentials');
  const decoded = Buffer.from(token68, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) fail('Basic credentials without a colon');
  return { scheme: 'Basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function decodeDigest(p: Map<string, string>): DigestCredentials {
  const plain = p.get('username');
  const ext = p.get('username*');
  if (plain !== undefined && ext !== undefined) fail('both username and username*');
  const username = ext !== undefined ? decodeExtValue(ext) : plain;
  const realm = p.get('realm');
  const nonce = p.get('nonce');
  const uri = p.get('uri');
  const response = p.get('response');
  if (
    username === undefined ||
    realm === undefined ||
    nonce === undefined ||
    uri === undefined ||
    response === undefined
  ) {
    fail('Digest credentials need username, realm, nonce, uri and response');
  }
  if (!/^[0-9A-Fa-f]+$/.test(response)) fail('Digest response is not hex');
  const out: DigestCredentials = { scheme: 'Digest', username, realm, nonce, uri, response };
  const alg = p.get('algorithm');
  if (alg !== undefined) {
    const algorithm = digestAlgorithm(alg);
    if (algorithm === null) fail(`unsupported Digest algorithm ${alg}`);
    out.algorithm = algorithm;
  }
  const cnonce = p.get('cnonce');
  if (cnonce !== undefined) out.cnonce = cnonce;
  const opaque = p.get('opaque');
  if (opaque !== undefined) out.opaque = opaque;
  const qop = p.get('qop');
  if (qop !== undefined) out.qop = qop.toLowerCase();
  const nc = p.get('nc');
  if (nc !== undefined) {
    if (!/^[0-9A-Fa-f]{1,8}$/.test(nc)) fail('invalid nonce count');
    out.nc = nc;
  }
  const userhash = isTrue(p.get('userhash'));
  if (userhash !== undefined) out.userhash = userhash;
  if (out.qop !== undefined && (out.nc === undefined || out.cnonce === undefined)) fail('qop needs nc and cnonce');
  if (out.algorithm?.endsWith('-sess') === true && out.cnonce === undefined) fail('-sess needs a cnonce');
  return out;
}

/**
 * The credentials of an Authorization header. A scheme other than Basic or Digest fails with
 * 401 (answer with a challenge), malformed credentials with 400.
 */
export function parseAuthorization(value: string): Authorization {
  const list = parseAuthList(value);
  const raw = list[0];
  if (raw === undefined || list.length > 1) fail('Authorization needs exactly one set of credentials');
  const scheme = raw.scheme.toLowerCase();
  if (scheme === 'basic') {
    if (raw.params.size > 0) fail('Basic credentials are a single token');
    return decodeBasic(raw.token68);
  }
  if (scheme === 'digest') {
    if (raw.token68 !== null) fail('Digest credentials are parameters');
    return decodeDigest(raw.params);
  }
  throw new RtspParseError(401, `unsupported authorization scheme ${raw.scheme}`);
}

export function formatAuthorization(a: Authorization): string {
  if (a.scheme === 'Basic') {
    if (a.username.includes(':')) throw new TypeError('a Basic username cannot contain a colon');
    return `Basic ${Buffer.from(`${a.username}:${a.password}`, 'utf8').toString('base64')}`;
  }
  if (!/^[0-9A-Fa-f]+$/.test(a.response)) throw new TypeError('Digest response must be hex');
  const parts = [
    param('username', a.username),
    param('realm', a.realm),
    param('nonce', a.nonce),
    param('uri', a.uri),
    param('response', a.response),
  ];
  if (a.algorithm !== undefined) {
    if (!isDigestAlgorithm(a.algorithm)) throw new TypeError(`unsupported algorithm ${a.algorithm}`);
    parts.push(`algorithm=${a.algorithm}`);
  }
  if (a.cnonce !== undefined) parts.push(param('cnonce', a.cnonce));
  if (a.opaque !== undefined) parts.push(param('opaque', a.opaque));
  if (a.qop !== undefined) {
    if (!isToken(a.qop)) throw new TypeError('invalid qop');
    parts.push(`qop=${a.qop}`);
  }
  if (a.nc !== undefined) {
    if (!/^[0-9A-Fa-f]{1,8}$/.test(a.nc)) throw new TypeError('invalid nonce count');
    parts.push(`nc=${a.nc}`);
  }
  if (a.userhash !== undefined) parts.push(`userhash=${a.userhash ? 'true' : 'false'}`);
  return `Digest ${parts.join(', ')}`;
}

export interface ChallengeAnswer {
  username: string;
  password: string;
  method: string;
  uri: string;
  /** Random when omitted. */
  cnonce?: string;
  /** 1 when omitted; a client reusing a nonce must count up. */
  nc?: number;
}

/**
 * The Authorization value answering a challenge: qop=auth when the challenge offers it,
 * the RFC 2069 form when it offers no qop, the challenge's opaque echoed.
 */
export function answerChallenge(ch: Challenge, a: ChallengeAnswer): string {
  if (ch.scheme === 'Basic')
    return formatAuthorization({ scheme: 'Basic', username: a.username, password: a.password });
  if (ch.qop.length > 0 && !ch.qop.includes('auth'))
    throw new TypeError('the challenge offers no qop this client supports');
  const qop = ch.qop.length > 0 ? 'auth' : undefined;
  const needsCnonce = qop !== undefined || ch.algorithm.endsWith('-sess');
  const cnonce = needsCnonce ? (a.cnonce ?? randomBytes(16).toString('hex')) : undefined;
  const nc = qop !== undefined ? formatNonceCount(a.nc ?? 1) : undefined;
  const creds: DigestCredentials = {
    scheme: 'Digest',
    username: a.username,
    realm: ch.realm,
    nonce: ch.nonce,
    uri: a.uri,
    response: digestResponse({
      algorithm: ch.algorithm,
      username: a.username,
      password: a.password,
      realm: ch.realm,
      nonce: ch.nonce,
      method: a.method,
      uri: a.uri,
      ...(qop !== undefined ? { qop } : {}),
      ...(nc !== undefined ? { nc } : {}),
      ...(cnonce !== undefined ? { cnonce } : {}),
    }),
    algorithm: ch.algorithm,
  };
  if (cnonce !== undefined) creds.cnonce = cnonce;
  if (ch.opaque !== undefined) creds.opaque = ch.opaque;
  if (qop !== undefined) creds.qop = qop;
  if (nc !== undefined) creds.nc = nc;
  return formatAuthorization(creds);
}
