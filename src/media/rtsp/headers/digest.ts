import { createHash } from 'node:crypto';

// The Digest arithmetic (RFC 7616 §3.4.1–3.4.3, RFC 2617, RFC 2069): the algorithms by name and
// the `response` value both sides compute. The headers that carry it are www-authenticate.ts and
// authorization.ts.

export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

const ALGORITHMS: ReadonlyMap<string, DigestAlgorithm> = new Map<string, DigestAlgorithm>([
  ['md5', 'MD5'],
  ['md5-sess', 'MD5-sess'],
  ['sha-256', 'SHA-256'],
  ['sha-256-sess', 'SHA-256-sess'],
]);

/** The algorithm a header's `algorithm` value names (MD5 when it names none); null when unsupported. */
export function digestAlgorithm(text: string | undefined): DigestAlgorithm | null {
  if (text === undefined) return 'MD5';
  return ALGORITHMS.get(text.toLowerCase()) ?? null;
}

/** Whether a value typed as a DigestAlgorithm really is one (callers outside TypeScript can pass anything). */
export function isDigestAlgorithm(name: string): boolean {
  return ALGORITHMS.has(name.toLowerCase());
}

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
  if (!isDigestAlgorithm(algorithm)) throw new TypeError(`unsupported algorithm ${algorithm}`);
  const { username, password, realm, nonce, method, uri, qop, cnonce } = input;
  if (qop !== undefined && qop !== 'auth') throw new TypeError(`unsupported qop ${qop}`);
  if ((qop !== undefined || algorithm.endsWith('-sess')) && cnonce === undefined)
    throw new TypeError('a cnonce is needed');
  let ha1 = hashHex(algorithm, `${username}:${realm}:${password}`);
  if (algorithm.endsWith('-sess')) ha1 = hashHex(algorithm, `${ha1}:${nonce}:${cnonce ?? ''}`);
  const ha2 = hashHex(algorithm, `${method}:${uri}`);
  if (qop === undefined) return hashHex(algorithm, `${ha1}:${nonce}:${ha2}`);
  if (input.nc === undefined) throw new TypeError('a nonce count is needed with qop');
  const nc = typeof input.nc === 'number' ? formatNonceCount(input.nc) : input.nc;
  return hashHex(algorithm, `${ha1}:${nonce}:${nc}:${cnonce ?? ''}:${qop}:${ha2}`);
}
