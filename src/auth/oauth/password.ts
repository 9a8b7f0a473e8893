// Local user passwords: scrypt hashes in a self-describing string. Pure: no files; the caller
// stores the strings.

import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { PasswordPolicyError } from './errors.js';

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  /** Block size. */
  r: number;
  /** Parallelisation. */
  p: number;
}

/**
 * 2^15 × 8 × 128 bytes = 32 MiB and some tens of milliseconds per hash: the usual interactive
 * scrypt setting, chosen over OWASP's 2^17 (128 MiB) because the gateway runs on small boxes
 * next to recorders and a burst of logins must not starve them. Raising it later is cheap:
 * needsRehash() flags older hashes and the login path rehashes them.
 */
export const DEFAULT_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

export const MAX_PASSWORD_LENGTH = 1024;

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const PREFIX = 'scrypt';

// Limits on what a stored hash may ask of us, so a tampered or corrupt users file cannot make one
// login attempt allocate gigabytes or spin for minutes.
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const MIN_STORED_BYTES = 16;
const MAX_STORED_BYTES = 64;

const DECIMAL = /^[1-9][0-9]{0,9}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

interface StoredHash {
  params: ScryptParams;
  salt: Buffer;
  hash: Buffer;
}

/**
 * `scrypt$N$r$p$salt$hash`, salt and hash base64url without padding. The parameters travel with
 * the hash so they can be raised without invalidating existing users.
 */
export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  checkParams(params);
  if (password === '') throw new PasswordPolicyError('empty', MAX_PASSWORD_LENGTH);
  if (password.length > MAX_PASSWORD_LENGTH) throw new PasswordPolicyError('too long', MAX_PASSWORD_LENGTH);
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, params, KEY_BYTES);
  return [PREFIX, params.N, params.r, params.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * Whether `password` is the one `stored` was made from. False for a stored string in any other
 * format. Pass `stored` null for an unknown user: the same scrypt work is done with `params` and
 * the answer is false, so response time does not tell which usernames exist.
 */
export async function verifyPassword(
  password: string,
  stored: string | null,
  params: ScryptParams = DEFAULT_SCRYPT_PARAMS,
): Promise<boolean> {
  if (typeof password !== 'string' || password === '' || password.length > MAX_PASSWORD_LENGTH) return false;
  if (stored === null) {
    checkParams(params);
    await derive(password, randomBytes(SALT_BYTES), params, KEY_BYTES);
    return false;
  }
  const parsed = parseStored(stored);
  if (parsed === null) return false;
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.hash.length);
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * Whether a stored hash should be replaced by one made with `params` after the next successful
 * login: weaker parameters, another salt or hash size, or a format we no longer read.
 */
export function needsRehash(stored: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): boolean {
  const parsed = parseStored(stored);
  if (parsed === null) return true;
  const p = parsed.params;
  return (
    p.N < params.N ||
    p.r < params.r ||
    p.p < params.p ||
    parsed.salt.length !== SALT_BYTES ||
    parsed.hash.length !== KEY_BYTES
  );
}

function parseStored(stored: string): StoredHash | null {
  if (typeof stored !== 'string') return null;
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== PREFIX) return null;
  const [, nText, rText, pText, saltText, hashText] = parts as [string, string, string, string, string, string];
  if (!DECIMAL.test(nText) || !DECIMAL.test(rText) || !DECIMAL.test(pText)) return null;
  const params = { N: Number(nText), r: Number(rText), p: Number(pText) };
  if (!paramsWithinLimits(params)) return null;
  const salt = decodeBase64url(saltText);
  const hash = decodeBase64url(hashText);
  if (salt === null || hash === null) return null;
  return { params, salt, hash };
}

function decodeBase64url(text: string): Buffer | null {
  if (!BASE64URL.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  // Node's decoder skips what it cannot read; a round trip catches truncated or padded input.
  if (bytes.toString('base64url') !== text) return null;
  if (bytes.length < MIN_STORED_BYTES || bytes.length > MAX_STORED_BYTES) return null;
  return bytes;
}

function paramsWithinLimits({ N, r, p }: ScryptParams): boolean {
  return (
    Number.isSafeInteger(N) &&
    Number.isSafeInteger(r) &&
    Number.isSafeInteger(p) &&
    N >= 2 &&
    N <= MAX_N &&
    (N & (N - 1)) === 0 &&
    r >= 1 &&
    r <= MAX_R &&
    p >= 1 &&
    p <= MAX_P &&
    memoryOf({ N, r, p }) <= MAX_MEMORY_BYTES
  );
}

function checkParams(params: ScryptParams): void {
  if (!paramsWithinLimits(params))
    throw new RangeError(
      'scrypt parameters out of range (N a power of two 2..2^20, r 1..32, p 1..16, at most 256 MiB)',
    );
}

/** OpenSSL's accounting: 128·r·(N+2) for V plus 128·r·p for B. */
function memoryOf({ N, r, p }: ScryptParams): number {
  return 128 * r * (N + 2) + 128 * r * p;
}

function derive(password: string, salt: Buffer, params: ScryptParams, keyBytes: number): Promise<Buffer> {
  // NFC: the same password typed on two keyboards may arrive composed or decomposed
  // (RFC 8265's OpaqueString profile normalises the same way).
  const secret = Buffer.from(password.normalize('NFC'), 'utf8');
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: memoryOf(params) + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, keyBytes, options, (err, key) => (err === null ? resolve(key) : reject(err)));
  });
}
