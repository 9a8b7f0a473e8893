import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type CryptoKey,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose';
import type { BaseLogger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { mirroredCounter } from '../metrics/mirrored-counter.js';
import { InvalidTokenError, KeysUnavailableError } from './errors.js';
import { JwksStore } from './jwks-store.js';
import type { LocalIssuer } from './local-issuer.js';
import { parseScope } from './scope-claim.js';

export const MAX_TOKEN_LENGTH = 8192;

/**
 * Three base64url parts: a JWS in compact serialisation. The third may be empty, so that an
 * unsecured JWT (`alg: none`) is refused for its algorithm, which says more than "malformed".
 */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

const MAX_CACHE_ENTRIES = 10_000;
/** 43 base64url characters: 256 bits of the signature, the shortest we accept (ES256, EdDSA) has 86. */
const CACHE_KEY_LENGTH = 43;
/** The token text the cache holds at most: ~8,000 tokens of a usual 1 KB, fewer of the longest (8 KB). */
const MAX_CACHE_CHARS = 8 * 1024 * 1024;
const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
const REQUIRED_CLAIMS = ['iss', 'exp', 'aud', 'sub', 'iat'];

export interface VerifierOptions {
  issuers: ReadonlyArray<{ issuer: string; jwks_uri: string; audience: string }>;
  /** Trusted with its in-memory public keys, no fetch. */
  localIssuer: LocalIssuer | null;
  dataDir: string;
  /** 0..60 */
  clockToleranceS: number;
  requireAtJwt: boolean;
  jwksMaxStaleS: number;
  jwksRefreshS: number;
  jwksCooldownS: number;
  logger: BaseLogger;
  /** Metrics are registered here, never in prom-client's global registry. One verifier per registry. */
  registry: Registry;
  /** ms, for tests */
  now?: () => number;
  /** For tests: the cache's bound on token text (characters; default MAX_CACHE_CHARS). */
  cacheChars?: number;
}

export interface VerifiedToken {
  issuer: string;
  subject: string;
  scopes: ReadonlySet<string>;
  /** ms */
  expiresAt: number;
  clientId: string | null;
  tokenId: string | null;
}

/**
 * What checks a bearer token and says what it grants (InvalidTokenError, KeysUnavailableError when
 * it cannot): the TokenVerifier, or it wrapped by withRevocation. The API's authentication hook calls it.
 */
export interface TokenCheck {
  verify(token: string): Promise<VerifiedToken>;
  /**
   * verify's answer at once when it needs no wait: a token verified before and still in the cache,
   * checked for expiry, key freshness (and revocation, when wrapped) exactly as verify checks it.
   * Throws what verify would reject with; null: not cached, call verify. Every request pays for a
   * promise and a turn of the microtask queue per async layer otherwise. A token it answers for is
   * one verify accepted, so a compact JWS and an RFC 6750 b64token: the API's hook does not scan
   * the characters of such a token again.
   */
  cached?(token: string): VerifiedToken | null;
}

type KeyLookup = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

interface TrustedIssuer {
  issuer: string;
  audience: string;
  getKey: KeyLookup;
  /** Null for the local issuer, whose keys are in memory and never go stale. */
  store: JwksStore | null;
}

interface CacheEntry {
  /** The whole bearer token: a hit is one whose token equals it, character for character. */
  bearer: string;
  token: VerifiedToken;
  /** The token's iat, ms: checked again on every hit in case the clock stepped back. */
  issuedAt: number;
}

type VerificationResult = 'ok' | 'invalid' | 'unavailable';

export class TokenVerifier implements TokenCheck {
  private readonly issuers = new Map<string, TrustedIssuer>();
  private readonly stores: JwksStore[] = [];
  private readonly cache = new Map<string, CacheEntry>();
  /** Characters of token text in the cache, bounded by MAX_CACHE_CHARS as its entries are by MAX_CACHE_ENTRIES. */
  private cachedChars = 0;
  private readonly now: () => number;
  // Plain numbers on the hot path, mirrored into prom-client at scrape time (label hashing on every
  // request cost ~1.5 µs).
  private readonly verifications: Record<VerificationResult, number> = { ok: 0, invalid: 0, unavailable: 0 };
  private readonly cacheHits = { total: 0 };

  constructor(private readonly opts: VerifierOptions) {
    if (!(opts.clockToleranceS >= 0 && opts.clockToleranceS <= 60))
      throw new RangeError('clockToleranceS must be within 0..60');
    this.now = opts.now ?? Date.now;

    mirroredCounter(
      opts.registry,
      'edge_gateway_token_verifications_total',
      'Access token verifications by outcome (cache hits included)',
      () => this.verifications,
      'result',
    );
    const refreshes = new Counter({
      name: 'edge_gateway_jwks_refresh_total',
      help: 'JWKS fetches by issuer and outcome',
      labelNames: ['issuer', 'result'],
      registers: [opts.registry],
    });
    mirroredCounter(
      opts.registry,
      'edge_gateway_token_cache_hits_total',
      'Verifications answered from the verified-token cache',
      () => this.cacheHits,
    );
    const cache = this.cache;
    // Read at scrape time: the cache's size is not kept twice.
    new Gauge({
      name: 'edge_gateway_token_cache_entries',
      help: 'Verified tokens held in the cache',
      registers: [opts.registry],
      collect() {
        this.set(cache.size);
      },
    });

    for (const entry of opts.issuers) {
      const store = new JwksStore({
        issuer: entry.issuer,
        jwksUri: entry.jwks_uri,
        dataDir: opts.dataDir,
        maxStaleS: opts.jwksMaxStaleS,
        refreshS: opts.jwksRefreshS,
        cooldownS: opts.jwksCooldownS,
        logger: opts.logger,
        now: this.now,
        onRefresh: (result) => refreshes.inc({ issuer: entry.issuer, result }),
        onKeysRemoved: () => this.forgetIssuer(entry.issuer),
      });
      this.addIssuer({ issuer: entry.issuer, audience: entry.audience, getKey: store.getKey, store });
      this.stores.push(store);
    }
    const local = opts.localIssuer;
    if (local !== null) {
      // Rebuilt when the issuer rotates or a retired key's lifetime ends, so tokens signed by a
      // dropped key stop verifying here at the same moment it leaves the published JWKS.
      let keys: ReturnType<typeof createLocalJWKSet> | null = null;
      let keysVersion = -1;
      const getKey: KeyLookup = async (header, token) => {
        const version = local.keysVersion;
        if (keys === null || version !== keysVersion) {
          keys = createLocalJWKSet(local.publicJwks());
          keysVersion = version;
        }
        try {
          return await keys(header, token);
        } catch (err) {
          if (err instanceof errors.JWKSNoMatchingKey) throw new InvalidTokenError('unknown key');
          throw err;
        }
      };
      this.addIssuer({ issuer: local.issuer, audience: local.audience, getKey, store: null });
    }
  }

  /** Loads the key caches and starts background refreshes; resolves without waiting for the network. */
  async start(): Promise<void> {
    await Promise.all(this.stores.map((s) => s.start()));
  }

  /** Fetches every remote issuer's keys now, ignoring the cooldown (for operators and tests). */
  async refreshNow(): Promise<void> {
    await Promise.all(this.stores.map((s) => s.refresh()));
  }

  close(): void {
    for (const store of this.stores) store.close();
    this.cache.clear();
    this.cachedChars = 0;
  }

  async verify(token: string): Promise<VerifiedToken> {
    try {
      const verified = await this.verifyUncounted(token);
      this.verifications.ok++;
      return verified;
    } catch (err) {
      throw this.countedFailure(err);
    }
  }

  cached(token: string): VerifiedToken | null {
    try {
      const verified = this.fromCache(token, this.cacheKey(token));
      // A miss is counted by the verify that follows it.
      if (verified !== null) this.verifications.ok++;
      return verified;
    } catch (err) {
      throw this.countedFailure(err);
    }
  }

  private countedFailure(err: unknown): InvalidTokenError | KeysUnavailableError {
    if (err instanceof KeysUnavailableError) {
      this.verifications.unavailable++;
      return err;
    }
    this.verifications.invalid++;
    if (err instanceof InvalidTokenError) return err;
    return this.toInvalidToken(err);
  }

  /**
   * The cache's key for a token: its last CACHE_KEY_LENGTH characters, which for a JWS are its
   * signature's. A hit still needs the whole token to be equal (fromCache), so two tokens sharing a
   * tail only make each other miss; only verified tokens are cached, so nobody without a valid token
   * can evict one. Slicing and comparing cost a sixth of a sha256 of the ~800-character token, and
   * a Map keyed by the whole token costs more still (V8 hashes every character of a new string).
   */
  private cacheKey(token: string): string {
    if (typeof token !== 'string') throw new InvalidTokenError('malformed token');
    // Before any parsing, so an oversized header costs us nothing but a length check.
    if (token.length > MAX_TOKEN_LENGTH) throw new InvalidTokenError('token too long');
    return token.length > CACHE_KEY_LENGTH ? token.slice(-CACHE_KEY_LENGTH) : token;
  }

  private addIssuer(entry: TrustedIssuer): void {
    if (this.issuers.has(entry.issuer)) throw new Error(`issuer ${entry.issuer} is configured twice`);
    this.issuers.set(entry.issuer, entry);
  }

  private async verifyUncounted(token: string): Promise<VerifiedToken> {
    const cacheKey = this.cacheKey(token);
    const cached = this.fromCache(token, cacheKey);
    if (cached !== null) return cached;

    // jose reads base64url leniently (it skips blanks in a segment), so a token could verify in more
    // than one spelling; only the compact serialisation itself (RFC 7515 §7.1) is taken. Every
    // token cached is then an RFC 6750 b64token, which the API's hook relies on (cachedOrWellFormed).
    if (!COMPACT_JWS.test(token)) throw new InvalidTokenError('malformed token');
    let header: ProtectedHeaderParameters;
    let unverified: JWTPayload;
    try {
      header = decodeProtectedHeader(token);
      unverified = decodeJwt(token);
    } catch {
      throw new InvalidTokenError('malformed token');
    }
    // Checked on the unverified header only to reject early; the signature covers the header,
    // so a token that passes below carries exactly this typ.
    this.checkTyp(header.typ);
    // The unverified iss only picks which keys to try; jwtVerify checks it again once signed.
    if (typeof unverified.iss !== 'string') throw new InvalidTokenError('missing claim iss');
    const trusted = this.issuers.get(unverified.iss);
    if (trusted === undefined) throw new InvalidTokenError('issuer not accepted');

    const { payload } = await jwtVerify(token, trusted.getKey, {
      algorithms: ALGORITHMS,
      issuer: trusted.issuer,
      audience: trusted.audience,
      clockTolerance: this.opts.clockToleranceS,
      requiredClaims: REQUIRED_CLAIMS,
      currentDate: new Date(this.now()),
    });

    if (typeof payload.sub !== 'string' || payload.sub === '') throw new InvalidTokenError('invalid claim sub');
    if (typeof payload.exp !== 'number') throw new InvalidTokenError('invalid claim exp');
    // jose checks iat only against a maximum age; a token minted ahead of our clock (beyond the
    // tolerance) is refused like one not yet valid (RFC 8725 §3.10, RFC 9068 §4).
    if (typeof payload.iat !== 'number') throw new InvalidTokenError('invalid claim iat');
    const issuedAt = payload.iat * 1000;
    this.checkIssuedAt(issuedAt);
    const verified: VerifiedToken = {
      issuer: trusted.issuer,
      subject: payload.sub,
      scopes: parseScope(payload.scope),
      expiresAt: payload.exp * 1000,
      clientId: typeof payload.client_id === 'string' ? payload.client_id : null,
      tokenId: typeof payload.jti === 'string' ? payload.jti : null,
    };
    this.remember(cacheKey, token, verified, issuedAt);
    return verified;
  }

  private checkIssuedAt(issuedAt: number): void {
    if (issuedAt > this.now() + this.opts.clockToleranceS * 1000)
      throw new InvalidTokenError('token issued in the future');
  }

  private checkTyp(typ: unknown): void {
    if (typ === undefined) {
      if (this.opts.requireAtJwt) throw new InvalidTokenError('token type not accepted');
      return;
    }
    if (typeof typ !== 'string') throw new InvalidTokenError('token type not accepted');
    const normalised = typ.toLowerCase().replace(/^application\//, '');
    if (normalised === 'at+jwt') return;
    // An ID token or other plain JWT from the same issuer must not pass as an access token
    // unless the operator opted in for issuers that cannot mint RFC 9068 tokens.
    if (normalised === 'jwt' && !this.opts.requireAtJwt) return;
    throw new InvalidTokenError('token type not accepted');
  }

  private fromCache(bearer: string, key: string): VerifiedToken | null {
    const entry = this.cache.get(key);
    if (entry === undefined || entry.bearer !== bearer) return null;
    const trusted = this.issuers.get(entry.token.issuer);
    // Stale keys fail closed for cached tokens too, or the cache would outlive the staleness limit.
    const keysOk = trusted !== undefined && (trusted.store === null || trusted.store.isFresh());
    if (this.now() >= entry.token.expiresAt || !keysOk) {
      this.forget(key);
      return null;
    }
    this.checkIssuedAt(entry.issuedAt);
    this.cacheHits.total++;
    return entry.token;
  }

  private remember(key: string, bearer: string, token: VerifiedToken, issuedAt: number): void {
    // Accepted only through the clock tolerance: nothing left to cache.
    if (token.expiresAt <= this.now()) return;
    // A cached token that shares this one's tail gives way to it.
    this.forget(key);
    const maxChars = this.opts.cacheChars ?? MAX_CACHE_CHARS;
    for (const oldest of this.cache.keys()) {
      if (this.cache.size < MAX_CACHE_ENTRIES && this.cachedChars + bearer.length <= maxChars) break;
      this.forget(oldest);
    }
    this.cache.set(key, { bearer, token, issuedAt });
    this.cachedChars += bearer.length;
  }

  private forget(key: string): void {
    const entry = this.cache.get(key);
    if (entry === undefined) return;
    this.cache.delete(key);
    this.cachedChars -= entry.bearer.length;
  }

  private forgetIssuer(issuer: string): void {
    for (const [key, entry] of this.cache) {
      if (entry.token.issuer === issuer) this.forget(key);
    }
  }

  private toInvalidToken(err: unknown): InvalidTokenError {
    const reason = joseReason(err);
    if (reason !== null) return new InvalidTokenError(reason);
    // Not a jose error: most likely an issuer key jose refused late. Fail closed as a 401, and
    // log it because the client cannot fix this.
    this.opts.logger.warn(
      { err: err instanceof Error ? err.message : String(err) },
      'token verification failed unexpectedly',
    );
    return new InvalidTokenError('token rejected');
  }
}

function joseReason(err: unknown): string | null {
  if (err instanceof errors.JWTExpired) return 'token expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    // claim names come from jose's fixed list, never from the token.
    if (err.reason === 'missing') return `missing claim ${err.claim}`;
    switch (err.claim) {
      case 'nbf':
        return 'token not yet valid';
      case 'aud':
        return 'audience not accepted';
      case 'iss':
        return 'issuer not accepted';
      case 'exp':
      case 'iat':
      case 'sub':
        return `invalid claim ${err.claim}`;
      default:
        return 'claim check failed';
    }
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature invalid';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (err instanceof errors.JWKSNoMatchingKey) return 'unknown key';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'key not unique';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'malformed token';
  if (err instanceof errors.JOSENotSupported) return 'not supported';
  if (err instanceof errors.JOSEError) return 'token rejected';
  return null;
}
