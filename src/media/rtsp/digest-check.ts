import { timingSafeEqual } from 'node:crypto';
import { RtspParseError } from './errors.js';
import { parseAuthorization, type Authorization } from './headers/authorization.js';
import { digestResponse, type DigestAlgorithm } from './headers/digest.js';

// The server's side of Digest: whether a request's Authorization answers this server's
// challenge, and if not, why (so the server knows whether to challenge again with stale=TRUE).

export interface VerifyDigestOptions {
  method: string;
  /** The Request-URI; the credentials' `uri` must be the same text, or they were made for another request. */
  uri: string;
  realm: string;
  /** The user's password, or undefined for no such user. */
  password(username: string): string | undefined;
  /**
   * Whether this server issued the nonce and still accepts it (and, with qop, this nonce count:
   * a count that does not grow is a replay). Called only for otherwise correct credentials, so
   * a server may record the count here.
   */
  checkNonce(nonce: string, nc: number | null): boolean;
  /** Default: all four. */
  algorithms?: readonly DigestAlgorithm[];
  /** Default false: GStreamer and live555 never send qop. */
  requireQop?: boolean;
}

export type DigestFailure =
  'missing' | 'malformed' | 'scheme' | 'realm' | 'uri' | 'algorithm' | 'qop' | 'userhash' | 'credentials' | 'stale';

export type DigestVerification =
  | { ok: true; username: string; algorithm: DigestAlgorithm }
  /** On `stale` the password was right but the nonce is not: challenge again with stale=TRUE. */
  | { ok: false; reason: DigestFailure };

function safeEqualHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'latin1');
  const b = Buffer.from(given.toLowerCase(), 'latin1');
  if (a.length !== b.length) {
    timingSafeEqual(a, a); // same work either way; only the length, which is public, differs
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Checks a request's Authorization header value against Digest credentials. */
export function verifyDigest(authorization: string | undefined, opts: VerifyDigestOptions): DigestVerification {
  if (authorization === undefined || authorization.trim() === '') return { ok: false, reason: 'missing' };
  let creds: Authorization;
  try {
    creds = parseAuthorization(authorization);
  } catch (err) {
    if (err instanceof RtspParseError) return { ok: false, reason: err.status === 401 ? 'scheme' : 'malformed' };
    throw err;
  }
  if (creds.scheme !== 'Digest') return { ok: false, reason: 'scheme' };
  const algorithm = creds.algorithm ?? 'MD5';
  if (!(opts.algorithms ?? ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess']).includes(algorithm))
    return { ok: false, reason: 'algorithm' };
  if (creds.realm !== opts.realm) return { ok: false, reason: 'realm' };
  if (creds.uri !== opts.uri) return { ok: false, reason: 'uri' };
  if (creds.qop !== undefined ? creds.qop !== 'auth' : opts.requireQop === true) return { ok: false, reason: 'qop' };
  if (creds.userhash === true) return { ok: false, reason: 'userhash' };
  const password = opts.password(creds.username);
  // An unknown user costs the same hashing as a known one, so response time does not tell them apart.
  const expected = digestResponse({
    algorithm,
    username: creds.username,
    password: password ?? '',
    realm: opts.realm,
    nonce: creds.nonce,
    method: opts.method,
    uri: creds.uri,
    ...(creds.qop !== undefined ? { qop: creds.qop } : {}),
    ...(creds.nc !== undefined ? { nc: creds.nc } : {}),
    ...(creds.cnonce !== undefined ? { cnonce: creds.cnonce } : {}),
  });
  const matches = safeEqualHex(expected, creds.response);
  if (!matches || password === undefined) return { ok: false, reason: 'credentials' };
  if (!opts.checkNonce(creds.nonce, creds.nc === undefined ? null : parseInt(creds.nc, 16)))
    return { ok: false, reason: 'stale' };
  return { ok: true, username: creds.username, algorithm };
}
