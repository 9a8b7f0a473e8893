import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { RtspParseError } from '../errors.js';
import { fail, hasControlChar, isToken, isTokenChar, quote, readQuoted, trimLws } from './syntax.js';

// WWW-Authenticate and Authorization for Basic (RFC 7617) and Digest (RFC 2617, RFC 7616),
// which RTSP borrows from HTTP unchanged (RFC 2326 §12.5, §12.44).
//
// What real peers do (observed with ffmpeg 5.1 and GStreamer 1.22 against a test server):
// ffmpeg keeps the *last* Digest challenge of a 401 and sends nothing if its algorithm is not
// MD5, so a server offering SHA-256 and MD5 must send SHA-256 first and MD5 last (RFC 7616
// clients take the first one they support, so that order suits both). GStreamer, like live555,
// answers with MD5 and without qop whatever was offered, so a server that wants those clients
// must accept qop-less answers (RFC 2069 style) and offer MD5.

export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

export interface BasicChallenge {
  scheme: 'Basic';
  /** `''` when a camera sends a bare `Basic`. */
  realm: string;
  charset?: string;
}

export interface DigestChallenge {
  scheme: 'Digest';
  realm: string;
  nonce: string;
  /** MD5 when the challenge names none. */
  algorithm: DigestAlgorithm;
  /** Offered qop values, lower-cased; empty for an RFC 2069 challenge without qop. */
  qop: string[];
  opaque?: string;
  stale?: boolean;
  domain?: string;
  charset?: string;
  userhash?: boolean;
}

export type Challenge = BasicChallenge | DigestChallenge;

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

const ALGORITHMS: ReadonlyMap<string, DigestAlgorithm> = new Map<string, DigestAlgorithm>([
  ['md5', 'MD5'],
  ['md5-sess', 'MD5-sess'],
  ['sha-256', 'SHA-256'],
  ['sha-256-sess', 'SHA-256-sess'],
]);

/** Lower ranks win in chooseChallenge. */
const RANK: Readonly<Record<DigestAlgorithm | 'Basic', number>> = {
  'SHA-256': 0,
  'SHA-256-sess': 1,
  MD5: 2,
  'MD5-sess': 3,
  Basic: 4,
};

// ---------------------------------------------------------------------------------------------
// Tokenizer for RFC 7235's `1#challenge` / `credentials`:
//   auth-scheme [ 1*SP ( token68 / #( token BWS "=" BWS ( token / quoted-string ) ) ) ]

interface RawAuth {
  scheme: string;
  token68: string | null;
  /** Lower-cased names, unquoted values. */
  params: Map<string, string>;
}

function parseAuthList(value: string): RawAuth[] {
  if (hasControlChar(value)) fail('control character in an authentication header');
  // Sticky (so a fresh one per call: lastIndex is state), and anchored by a following `,` or
  // the end, so it cannot backtrack past one token.
  const token68 = /[A-Za-z0-9\-._~+/]+=*[ \t]*(?=,|$)/y;
  const out: RawAuth[] = [];
  const n = value.length;
  let i = 0;
  let current: RawAuth | null = null;
  const skipWs = (): void => {
    while (i < n && (value.charCodeAt(i) === 0x20 || value.charCodeAt(i) === 0x09)) i++;
  };
  while (i < n) {
    skipWs();
    if (i >= n) break;
    if (value.charCodeAt(i) === 0x2c) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && isTokenChar(value.charCodeAt(i))) i++;
    if (i === start) fail('invalid character in an authentication header');
    const name = value.slice(start, i);
    skipWs();
    if (value.charCodeAt(i) !== 0x3d) {
      // A token not followed by `=` starts the next challenge; an optional token68 follows it.
      current = { scheme: name, token68: null, params: new Map() };
      out.push(current);
      skipWs();
      token68.lastIndex = i;
      const m = token68.exec(value);
      if (m !== null) {
        current.token68 = trimLws(m[0]);
        i += m[0].length;
      }
      continue;
    }
    if (current === null) fail('auth-param before an auth-scheme');
    i++; // '='
    skipWs();
    let v: string;
    if (value.charCodeAt(i) === 0x22) {
      const q = readQuoted(value, i);
      v = q.text;
      i = q.end;
    } else {
      // Cameras send unquoted values that are not tokens (`nonce=abc/def==`): take up to the next separator.
      const vs = i;
      while (i < n && value.charCodeAt(i) !== 0x2c && value.charCodeAt(i) !== 0x20 && value.charCodeAt(i) !== 0x09) i++;
      v = value.slice(vs, i);
    }
    const key = name.toLowerCase();
    if (current.params.has(key)) fail(`duplicate auth-param ${key}`);
    current.params.set(key, v);
  }
  return out;
}

function algorithmOf(text: string | undefined): DigestAlgorithm | null {
  if (text === undefined) return 'MD5';
  return ALGORITHMS.get(text.toLowerCase()) ?? null;
}

function isTrue(text: string | undefined): boolean | undefined {
  return text === undefined ? undefined : text.toLowerCase() === 'true';
}

function toChallenge(raw: RawAuth): Challenge | null {
  const scheme = raw.scheme.toLowerCase();
  const p = raw.params;
  if (scheme === 'basic') {
    const out: BasicChallenge = { scheme: 'Basic', realm: p.get('realm') ?? '' };
    const charset = p.get('charset');
    if (charset !== undefined) out.charset = charset;
    return out;
  }
  if (scheme !== 'digest') return null;
  const realm = p.get('realm');
  const nonce = p.get('nonce');
  if (realm === undefined || nonce === undefined) fail('Digest challenge without realm or nonce');
  const algorithm = algorithmOf(p.get('algorithm'));
  if (algorithm === null) return null; // e.g. SHA-512-256: skipped so the caller can pick another
  const out: DigestChallenge = {
    scheme: 'Digest',
    realm,
    nonce,
    algorithm,
    qop: (p.get('qop') ?? '').split(',').map((q) => trimLws(q).toLowerCase()).filter((q) => q !== ''),
  };
  const opaque = p.get('opaque');
  if (opaque !== undefined) out.opaque = opaque;
  const stale = isTrue(p.get('stale'));
  if (stale !== undefined) out.stale = stale;
  const domain = p.get('domain');
  if (domain !== undefined) out.domain = domain;
  const charset = p.get('charset');
  if (charset !== undefined) out.charset = charset;
  const userhash = isTrue(p.get('userhash'));
  if (userhash !== undefined) out.userhash = userhash;
  return out;
}

/**
 * Every challenge of a 401's WWW-Authenticate headers (each header may hold several), in order.
 * Schemes other than Basic and Digest, and Digest algorithms other than MD5 and SHA-256 (and
 * their -sess variants), are left out. A malformed header is left out too as long as another
 * header yields a challenge, since one camera quirk should not hide a usable challenge;
 * otherwise its RtspParseError is thrown.
 */
export function parseChallenges(values: readonly string[]): Challenge[] {
  const out: Challenge[] = [];
  let firstError: RtspParseError | null = null;
  for (const value of values) {
    let parsed: Challenge[];
    try {
      parsed = parseAuthList(value)
        .map(toChallenge)
        .filter((ch): ch is Challenge => ch !== null);
    } catch (err) {
      if (!(err instanceof RtspParseError)) throw err;
      firstError ??= err;
      continue;
    }
    out.push(...parsed);
  }
  if (out.length === 0 && firstError !== null) throw firstError;
  return out;
}

function param(name: string, value: string): string {
  return `${name}=${quote(value)}`;
}

/** Token-valued parameters are written bare, as RFC 7616's examples do; others quoted. */
function bareOrQuoted(name: string, value: string): string {
  return isToken(value) ? `${name}=${value}` : param(name, value);
}

export function formatChallenge(ch: Challenge): string {
  if (ch.scheme === 'Basic') {
    const parts = [param('realm', ch.realm)];
    if (ch.charset !== undefined) parts.push(bareOrQuoted('charset', ch.charset));
    return `Basic ${parts.join(', ')}`;
  }
  if (!ALGORITHMS.has(ch.algorithm.toLowerCase())) throw new TypeError(`unsupported algorithm ${ch.algorithm}`);
  for (const q of ch.qop) if (!isToken(q)) throw new TypeError(`invalid qop ${q}`);
  const parts = [param('realm', ch.realm), param('nonce', ch.nonce), `algorithm=${ch.algorithm}`];
  if (ch.qop.length > 0) parts.push(param('qop', ch.qop.join(',')));
  if (ch.opaque !== undefined) parts.push(param('opaque', ch.opaque));
  if (ch.stale !== undefined) parts.push(`stale=${ch.stale ? 'TRUE' : 'FALSE'}`);
  if (ch.domain !== undefined) parts.push(param('domain', ch.domain));
  if (ch.charset !== undefined) parts.push(bareOrQuoted('charset', ch.charset));
  if (ch.userhash !== undefined) parts.push(`userhash=${ch.userhash ? 'true' : 'false'}`);
  return `Digest ${parts.join(', ')}`;
}

/**
 * The challenge a client should answer: SHA-256 over MD5 over Basic (plain before -sess).
 * Digest challenges that offer qop but not `auth` (only `auth-int`, which needs a body hash
 * this module does not compute) are passed over. Null when nothing is usable.
 */
export function chooseChallenge(challenges: readonly Challenge[]): Challenge | null {
  let best: Challenge | null = null;
  let bestRank = Infinity;
  for (const ch of challenges) {
    if (ch.scheme === 'Digest' && ch.qop.length > 0 && !ch.qop.includes('auth')) continue;
    const rank = RANK[ch.scheme === 'Basic' ? 'Basic' : ch.algorithm];
    if (rank < bestRank) {
      best = ch;
      bestRank = rank;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Authorization

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
  if (username === undefined || realm === undefined || nonce === undefined || uri === undefined || response === undefined) {
    fail('Digest credentials need username, realm, nonce, uri and response');
  }
  if (!/^[0-9A-Fa-f]+$/.test(response)) fail('Digest response is not hex');
  const out: DigestCredentials = { scheme: 'Digest', username, realm, nonce, uri, response };
  const alg = p.get('algorithm');
  if (alg !== undefined) {
    const algorithm = algorithmOf(alg);
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
  const parts = [param('username', a.username), param('realm', a.realm), param('nonce', a.nonce), param('uri', a.uri), param('response', a.response)];
  if (a.algorithm !== undefined) {
    if (!ALGORITHMS.has(a.algorithm.toLowerCase())) throw new TypeError(`unsupported algorithm ${a.algorithm}`);
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

// ---------------------------------------------------------------------------------------------
// Digest computation (RFC 7616 §3.4.1–3.4.3)

export interface DigestInput {
  /** MD5 when omitted, as for a challenge that names no algorithm. */
  algorithm?: DigestAlgorithm;
  username: string;
  password: string;
  realm: string;
  nonce: string;
  method: string;
  uri: string;
  /** Only `auth`; omit for RFC 2069 style (what GStreamer and live555 send). */
  qop?: string;
  /** A number is written as the 8 hex digits peers send; a string is used verbatim. */
  nc?: string | number;
  cnonce?: string;
}

function hashHex(algorithm: DigestAlgorithm, text: string): string {
  return createHash(algorithm.startsWith('SHA-256') ? 'sha256' : 'md5')
    .update(text, 'utf8')
    .digest('hex');
}

export function formatNonceCount(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new TypeError('nonce count must be in 1..2^32-1');
  return n.toString(16).padStart(8, '0');
}

/** The lower-case hex `response` value for these inputs. */
export function digestResponse(input: DigestInput): string {
  const algorithm = input.algorithm ?? 'MD5';
  if (!ALGORITHMS.has(algorithm.toLowerCase())) throw new TypeError(`unsupported algorithm ${algorithm}`);
  const { username, password, realm, nonce, method, uri, qop, cnonce } = input;
  if (qop !== undefined && qop !== 'auth') throw new TypeError(`unsupported qop ${qop}`);
  if ((qop !== undefined || algorithm.endsWith('-sess')) && cnonce === undefined) throw new TypeError('a cnonce is needed');
  let ha1 = hashHex(algorithm, `${username}:${realm}:${password}`);
  if (algorithm.endsWith('-sess')) ha1 = hashHex(algorithm, `${ha1}:${nonce}:${cnonce ?? ''}`);
  const ha2 = hashHex(algorithm, `${method}:${uri}`);
  if (qop === undefined) return hashHex(algorithm, `${ha1}:${nonce}:${ha2}`);
  if (input.nc === undefined) throw new TypeError('a nonce count is needed with qop');
  const nc = typeof input.nc === 'number' ? formatNonceCount(input.nc) : input.nc;
  return hashHex(algorithm, `${ha1}:${nonce}:${nc}:${cnonce ?? ''}:${qop}:${ha2}`);
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
  if (ch.scheme === 'Basic') return formatAuthorization({ scheme: 'Basic', username: a.username, password: a.password });
  if (ch.qop.length > 0 && !ch.qop.includes('auth')) throw new TypeError('the challenge offers no qop this client supports');
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

// ---------------------------------------------------------------------------------------------
// Server side

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

export type DigestFailure = 'missing' | 'malformed' | 'scheme' | 'realm' | 'uri' | 'algorithm' | 'qop' | 'userhash' | 'credentials' | 'stale';

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
  if (!(opts.algorithms ?? ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess']).includes(algorithm)) return { ok: false, reason: 'algorithm' };
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
  if (!opts.checkNonce(creds.nonce, creds.nc === undefined ? null : parseInt(creds.nc, 16))) return { ok: false, reason: 'stale' };
  return { ok: true, username: creds.username, algorithm };
}
