import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  createLocalJWKSet,
  errors,
  importJWK,
  type CryptoKey,
  type FlattenedJWSInput,
  type JWK,
  type JWSHeaderParameters,
  type LocalJWKSet,
} from 'jose';
import type { BaseLogger } from 'pino';
import { replaceFile } from '../platform/durable-files.js';
import { InvalidTokenError, KeysUnavailableError } from './errors.js';

const FETCH_TIMEOUT_MS = 5_000;
const MAX_RESPONSE_BYTES = 256 * 1024;
const MIN_RSA_BITS = 2048;
const JITTER = 0.1;

export interface JwksStoreOptions {
  issuer: string;
  jwksUri: string;
  dataDir: string;
  maxStaleS: number;
  refreshS: number;
  cooldownS: number;
  logger: BaseLogger;
  now?: () => number;
  /** Called once per refresh attempt that reached an outcome. */
  onRefresh?: (result: 'ok' | 'error') => void;
  /** Called after a refresh that dropped a key we had: tokens verified with it must not be served from a cache. */
  onKeysRemoved?: () => void;
}

interface CacheFile {
  issuer: string;
  jwks_uri: string;
  fetched_at: number;
  jwks: { keys: JWK[] };
}

interface KeySet {
  keys: JWK[];
  resolve: LocalJWKSet;
  fetchedAt: number;
}

/** Path of an issuer's key cache; hashed so an issuer URL never has to become a file name. */
export function jwksCacheFile(dataDir: string, issuer: string): string {
  const name = createHash('sha256').update(issuer, 'utf8').digest('hex').slice(0, 16);
  return path.join(dataDir, 'jwks', `${name}.json`);
}

/**
 * One remote issuer's key set, persisted so that after a restart the gateway verifies tokens
 * without the network, and refreshed in the background, on unknown kids and when stale.
 */
export class JwksStore {
  readonly issuer: string;
  readonly jwksUri: string;
  private readonly file: string;
  private readonly now: () => number;
  private current: KeySet | null = null;
  private inFlight: Promise<boolean> | null = null;
  private lastAttemptAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly closing = new AbortController();
  private started = false;

  constructor(private readonly opts: JwksStoreOptions) {
    this.issuer = opts.issuer;
    this.jwksUri = opts.jwksUri;
    this.file = jwksCacheFile(opts.dataDir, opts.issuer);
    this.now = opts.now ?? Date.now;
  }

  /** When the keys in use were fetched (ms), or null without keys. */
  get fetchedAt(): number | null {
    return this.current?.fetchedAt ?? null;
  }

  get keyCount(): number {
    return this.current?.keys.length ?? 0;
  }

  /** Usable for verification without touching the network: has keys and they are not stale. */
  isFresh(): boolean {
    return this.current !== null && !this.isStale();
  }

  /** Loads the cache file, kicks off a refresh without awaiting it, and schedules the next ones. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.loadCache();
    void this.refresh().finally(() => this.schedule());
  }

  close(): void {
    this.closing.abort();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Fetches the key set now, ignoring the cooldown; concurrent callers share one request.
   * Resolves true when the keys were replaced; on failure the old keys stay and it resolves false.
   */
  refresh(): Promise<boolean> {
    if (this.inFlight !== null) return this.inFlight;
    this.lastAttemptAt = this.now();
    const attempt = this.fetchAndReplace()
      // Background callers `void` this promise: a rejection would take the daemon down.
      .catch((err: unknown) => {
        this.opts.logger.error({ issuer: this.issuer, err: errorMessage(err) }, 'JWKS refresh crashed');
        return false;
      })
      .finally(() => {
        this.inFlight = null;
      });
    this.inFlight = attempt;
    return attempt;
  }

  /** A key resolver for jose's jwtVerify. */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    if (this.current === null) {
      await this.refreshUnlessCoolingDown();
      if (this.current === null) throw new KeysUnavailableError(this.issuer, 'no keys');
    }
    // Fail closed: a key set we could not confirm for this long may hold a key the issuer revoked.
    if (this.isStale()) {
      await this.refreshUnlessCoolingDown();
      if (this.isStale()) throw new KeysUnavailableError(this.issuer, 'keys stale');
    }
    const first = await this.tryResolve(header, token);
    if (first !== null) return first;
    // An unknown kid is how we learn of a rotation; the cooldown stops a stream of made-up
    // kids from turning into a stream of requests to the issuer.
    await this.refreshUnlessCoolingDown();
    const second = await this.tryResolve(header, token);
    if (second !== null) return second;
    throw new InvalidTokenError('unknown key');
  };

  private async tryResolve(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey | null> {
    const set = this.current;
    if (set === null) return null;
    try {
      return await set.resolve(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) return null;
      throw err;
    }
  }

  private isStale(): boolean {
    const set = this.current;
    return set !== null && this.now() - set.fetchedAt > this.opts.maxStaleS * 1000;
  }

  private refreshUnlessCoolingDown(): Promise<boolean> {
    if (this.inFlight !== null) return this.inFlight;
    if (this.lastAttemptAt !== null && this.now() - this.lastAttemptAt < this.opts.cooldownS * 1000) {
      return Promise.resolve(false);
    }
    return this.refresh();
  }

  private schedule(): void {
    if (this.closing.signal.aborted) return;
    const jitter = 1 - JITTER + Math.random() * 2 * JITTER;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.refresh().finally(() => this.schedule());
      },
      Math.round(this.opts.refreshS * 1000 * jitter),
    );
    // A pending refresh must not keep the process (or a test run) alive.
    this.timer.unref();
  }

  private async loadCache(): Promise<void> {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.opts.logger.warn(
          { issuer: this.issuer, file: this.file, err: errorMessage(err) },
          'cannot read JWKS cache',
        );
      }
      return;
    }
    try {
      const cached = parseCacheFile(JSON.parse(text));
      if (cached === null) throw new Error('unexpected shape');
      // A cache written for another jwks_uri may hold keys the operator meant to stop trusting.
      if (cached.issuer !== this.issuer || cached.jwks_uri !== this.jwksUri) {
        this.opts.logger.info(
          { issuer: this.issuer, file: this.file },
          'JWKS cache is for another issuer or jwks_uri, ignoring it',
        );
        return;
      }
      const keys = await usableKeys(cached.jwks.keys);
      if (keys.length === 0) throw new Error('no usable keys');
      // A lookup before start() may already have fetched newer keys than the file holds.
      if (this.current !== null) return;
      this.current = { keys, resolve: createLocalJWKSet({ keys }), fetchedAt: cached.fetched_at };
    } catch (err) {
      this.opts.logger.warn(
        { issuer: this.issuer, file: this.file, err: errorMessage(err) },
        'ignoring unusable JWKS cache',
      );
    }
  }

  private async fetchAndReplace(): Promise<boolean> {
    let keys: JWK[];
    try {
      keys = await this.fetchKeys();
    } catch (err) {
      if (this.closing.signal.aborted) return false;
      this.opts.logger.warn(
        { issuer: this.issuer, jwks_uri: this.jwksUri, err: errorMessage(err), keeping_keys: this.keyCount },
        'JWKS refresh failed, keeping the keys we have',
      );
      this.opts.onRefresh?.('error');
      return false;
    }
    const previous = this.current;
    const fetchedAt = this.now();
    this.current = { keys, resolve: createLocalJWKSet({ keys }), fetchedAt };
    this.opts.onRefresh?.('ok');
    this.persist({ issuer: this.issuer, jwks_uri: this.jwksUri, fetched_at: fetchedAt, jwks: { keys } });
    if (previous !== null && lostAKey(previous.keys, keys)) this.opts.onKeysRemoved?.();
    return true;
  }

  private async fetchKeys(): Promise<JWK[]> {
    const signal = AbortSignal.any([AbortSignal.timeout(FETCH_TIMEOUT_MS), this.closing.signal]);
    // A redirect could take us off the https origin the operator configured.
    const res = await fetch(this.jwksUri, { signal, redirect: 'error', headers: { accept: 'application/json' } });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`HTTP ${res.status}`);
    }
    const body = await readCapped(res, MAX_RESPONSE_BYTES);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new Error('response is not JSON');
    }
    const raw = parseKeySet(parsed);
    if (raw === null) throw new Error('response is not a JWK set');
    const keys = await usableKeys(raw);
    if (raw.length > keys.length) {
      this.opts.logger.debug(
        { issuer: this.issuer, dropped: raw.length - keys.length },
        'dropped JWKS keys we cannot use',
      );
    }
    if (keys.length === 0) throw new Error('JWK set holds no usable keys');
    return keys;
  }

  private persist(content: CacheFile): void {
    try {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      replaceFile(this.file, JSON.stringify(content), 0o600);
    } catch (err) {
      // The keys in memory are good; only the next offline restart loses out.
      this.opts.logger.warn(
        { issuer: this.issuer, file: this.file, err: errorMessage(err) },
        'cannot write JWKS cache',
      );
    }
  }
}

async function readCapped(res: Response, cap: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > cap) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`response larger than ${cap} bytes`);
  }
  if (res.body === null) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`response larger than ${cap} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ keys: [...] }` where every key is an object with a string kty, else null. */
function parseKeySet(value: unknown): Record<string, unknown>[] | null {
  if (!isRecord(value) || !Array.isArray(value.keys)) return null;
  const keys: Record<string, unknown>[] = [];
  for (const key of value.keys as unknown[]) {
    if (!isRecord(key) || typeof key.kty !== 'string') return null;
    keys.push(key);
  }
  return keys;
}

function parseCacheFile(
  value: unknown,
): { issuer: string; jwks_uri: string; fetched_at: number; jwks: { keys: Record<string, unknown>[] } } | null {
  if (!isRecord(value)) return null;
  const { issuer, jwks_uri, fetched_at, jwks } = value;
  if (
    typeof issuer !== 'string' ||
    typeof jwks_uri !== 'string' ||
    typeof fetched_at !== 'number' ||
    !Number.isFinite(fetched_at)
  )
    return null;
  const keys = parseKeySet(jwks);
  return keys === null ? null : { issuer, jwks_uri, fetched_at, jwks: { keys } };
}

type VerifyAlg = 'RS256' | 'ES256' | 'EdDSA';

/**
 * Reduces each key to its public members and keeps only those the verifier's algorithms can use,
 * proven by importing them, so a bad key is dropped here instead of failing tokens later.
 */
async function usableKeys(raw: readonly Record<string, unknown>[]): Promise<JWK[]> {
  const out: JWK[] = [];
  for (const key of raw) {
    const candidate = publicVerificationKey(key);
    if (candidate === null) continue;
    try {
      await importJWK(candidate.jwk, candidate.alg);
      out.push(candidate.jwk);
    } catch {
      // Malformed key material: dropped like an unsupported kty.
    }
  }
  return out;
}

function publicVerificationKey(key: Record<string, unknown>): { jwk: JWK; alg: VerifyAlg } | null {
  // Private members in a public key set mean the issuer is misconfigured; using such a key
  // would not be wrong in itself, but we refuse to store private material on disk.
  if ('d' in key || 'p' in key || 'q' in key || 'k' in key) return null;
  if (key.use !== undefined && key.use !== 'sig') return null;
  if (key.key_ops !== undefined && !(Array.isArray(key.key_ops) && key.key_ops.includes('verify'))) return null;
  const kid = typeof key.kid === 'string' ? key.kid : undefined;
  const base = (jwk: JWK, alg: VerifyAlg): { jwk: JWK; alg: VerifyAlg } => ({
    jwk: {
      ...jwk,
      ...(kid !== undefined ? { kid } : {}),
      ...(key.alg !== undefined ? { alg } : {}),
      ...(key.use !== undefined ? { use: 'sig' } : {}),
    },
    alg,
  });
  switch (key.kty) {
    case 'RSA': {
      if (key.alg !== undefined && key.alg !== 'RS256') return null;
      if (typeof key.n !== 'string' || typeof key.e !== 'string') return null;
      if (modulusBits(key.n) < MIN_RSA_BITS) return null;
      return base({ kty: 'RSA', n: key.n, e: key.e }, 'RS256');
    }
    case 'EC': {
      if (key.alg !== undefined && key.alg !== 'ES256') return null;
      if (key.crv !== 'P-256' || typeof key.x !== 'string' || typeof key.y !== 'string') return null;
      return base({ kty: 'EC', crv: 'P-256', x: key.x, y: key.y }, 'ES256');
    }
    case 'OKP': {
      if (key.alg !== undefined && key.alg !== 'EdDSA') return null;
      if (key.crv !== 'Ed25519' || typeof key.x !== 'string') return null;
      return base({ kty: 'OKP', crv: 'Ed25519', x: key.x }, 'EdDSA');
    }
    default:
      return null;
  }
}

function modulusBits(n: string): number {
  const bytes = Buffer.from(n, 'base64url');
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i] as number));
}

function keyIdentity(jwk: JWK): string {
  return JSON.stringify([jwk.kty, jwk.kid ?? null, jwk.crv ?? null, jwk.n ?? null, jwk.x ?? null, jwk.y ?? null]);
}

function lostAKey(before: readonly JWK[], after: readonly JWK[]): boolean {
  const kept = new Set(after.map(keyIdentity));
  return before.some((k) => !kept.has(keyIdentity(k)));
}

function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // fetch() reports the useful part (ECONNREFUSED, certificate errors) in its cause.
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
