import { createHash, randomUUID, webcrypto } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { SignJWT, importJWK, type CryptoKey, type JWK } from 'jose';
import type { BaseLogger } from 'pino';
import { firstLanAddress } from '../config/lan-address.js';
import type { Config } from '../config/schema.js';
import { createOnce, replaceFile } from '../platform/durable-files.js';
import type { SecretBox } from '../platform/secret-box.js';
import { LocalIssuerError } from './errors.js';

const KEY_FILE = 'local-issuer.key.json';
const SEAL_LABEL = 'local-issuer-key';
const FORMAT_VERSION = 2;
const DEFAULT_CLIENT_ID = 'edge-gateway-cli';

export interface LocalIssuerOptions {
  dataDir: string;
  secretBox: SecretBox;
  issuer: string;
  audience: string;
  /**
   * How long a retired key stays published, in seconds: at least the longest access-token
   * lifetime plus the verifiers' clock tolerance, or tokens signed just before a rotation fail early.
   */
  retiredKeyLifetimeS: number;
  /** Seconds since the epoch; defaults to the wall clock. */
  nowS?: () => number;
}

export interface IssueOptions {
  subject: string;
  scope: string;
  ttlS: number;
  clientId?: string;
  /** Defaults to a random UUID; callers that record issued tokens choose it themselves. */
  jti?: string;
  /** Seconds since the epoch; defaults to the issuer's clock. */
  nowS?: number;
}

interface EcPublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

interface EcPrivateJwk extends EcPublicJwk {
  d: string;
}

interface StoredKey {
  kid: string;
  createdAtS: number;
  /** Null for the one key that signs. */
  retiredAtS: number | null;
  publicJwk: EcPublicJwk;
  sealedPrivateJwk: string;
}

interface KeyRing {
  current: StoredKey;
  retired: StoredKey[];
  currentPrivateJwk: EcPrivateJwk;
}

/**
 * The gateway's own token issuer, for installations without an identity provider and for the
 * `edge-gateway token` CLI. Signs with one ES256 key at a time, kept sealed at rest; rotation keeps
 * the retired keys published until the tokens they signed have expired.
 *
 * Only one process may rotate (the daemon): a rotation rewrites the key file from this process's
 * view of it. Other processes (the CLI) only read the file when they open it.
 */
export class LocalIssuer {
  private version = 0;
  private rotation: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly issuer: string,
    readonly audience: string,
    private readonly file: string,
    private readonly box: SecretBox,
    private readonly retiredKeyLifetimeS: number,
    private readonly clock: () => number,
    private current: StoredKey,
    private retired: StoredKey[],
    private signingKey: CryptoKey,
  ) {}

  static async open(opts: LocalIssuerOptions): Promise<LocalIssuer> {
    if (opts.issuer === '') throw new LocalIssuerError('the local issuer needs a non-empty issuer');
    if (opts.audience === '') throw new LocalIssuerError('the local issuer needs a non-empty audience');
    if (!Number.isInteger(opts.retiredKeyLifetimeS) || opts.retiredKeyLifetimeS < 0) {
      throw new LocalIssuerError('retiredKeyLifetimeS must be a non-negative integer');
    }
    const clock = opts.nowS ?? (() => Math.floor(Date.now() / 1000));
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(opts.dataDir, KEY_FILE);
    // createOnce settles a race between the daemon and the CLI starting together: both end up
    // with whichever key pair was linked into place first. Key generation is asynchronous and
    // createOnce is not, so a candidate key is made first; it is dropped when the file exists.
    const candidate = await makeKey(opts.secretBox, clock());
    const content = createOnce(file, () => serializeKeys([candidate.stored]), 0o600);
    const ring = readKeyFile(file, content, opts.secretBox);
    const signingKey = await importSigningKey(file, ring.currentPrivateJwk);
    return new LocalIssuer(
      opts.issuer,
      opts.audience,
      file,
      opts.secretBox,
      opts.retiredKeyLifetimeS,
      clock,
      ring.current,
      ring.retired,
      signingKey,
    );
  }

  /** The RFC 7638 thumbprint of the signing key, the `kid` of tokens issued now. */
  get currentKid(): string {
    return this.current.kid;
  }

  /**
   * Changes whenever the published key set does: on every rotation, and when a retired key's
   * lifetime ends. Verifiers compare it to know when to reload publicJwks().
   */
  get keysVersion(): number {
    this.forgetExpired();
    return this.version;
  }

  /** The verification key set, safe to publish: the signing key and the retired keys still in their lifetime. */
  publicJwks(): { keys: JWK[] } {
    this.forgetExpired();
    return {
      keys: [this.current, ...this.retired].map((k) => ({ ...k.publicJwk, kid: k.kid, alg: 'ES256', use: 'sig' })),
    };
  }

  /** An RFC 9068 JWT access token. */
  async issue(opts: IssueOptions): Promise<string> {
    if (opts.subject === '') throw new LocalIssuerError('subject must not be empty');
    if (!Number.isInteger(opts.ttlS) || opts.ttlS <= 0) throw new LocalIssuerError('ttlS must be a positive integer');
    if (opts.jti === '') throw new LocalIssuerError('jti must not be empty');
    const nowS = opts.nowS ?? this.clock();
    return new SignJWT({ scope: opts.scope, client_id: opts.clientId ?? DEFAULT_CLIENT_ID })
      .setProtectedHeader({ alg: 'ES256', kid: this.current.kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setSubject(opts.subject)
      .setAudience(this.audience)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + opts.ttlS)
      .setJti(opts.jti ?? randomUUID())
      .sign(this.signingKey);
  }

  /** Makes a new signing key; the previous one stays published for retiredKeyLifetimeS. */
  rotate(): Promise<void> {
    return this.serially(() => this.rotateNow());
  }

  /** Rotates when the signing key was created more than maxAgeS seconds ago; true when it did. */
  async rotateIfOlderThan(maxAgeS: number): Promise<boolean> {
    if (!Number.isFinite(maxAgeS) || maxAgeS < 0) throw new LocalIssuerError('maxAgeS must be a non-negative number');
    // Checked inside the queue, so two schedules firing together rotate once.
    return this.serially(async () => {
      if (this.clock() - this.current.createdAtS <= maxAgeS) return false;
      await this.rotateNow();
      return true;
    });
  }

  private async rotateNow(): Promise<void> {
    const nowS = this.clock();
    const fresh = await makeKey(this.box, nowS);
    const signingKey = await importSigningKey(this.file, fresh.privateJwk);
    const retired = [{ ...this.current, retiredAtS: nowS }, ...this.retired].filter((k) => this.published(k, nowS));
    // The file first: if writing fails, this process keeps signing with a key the file still holds.
    replaceFile(this.file, serializeKeys([fresh.stored, ...retired]), 0o600);
    this.current = fresh.stored;
    this.retired = retired;
    this.signingKey = signingKey;
    this.version += 1;
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.rotation.then(task);
    this.rotation = run.catch(() => undefined);
    return run;
  }

  private published(key: StoredKey, nowS: number): boolean {
    return key.retiredAtS === null || key.retiredAtS + this.retiredKeyLifetimeS > nowS;
  }

  /** Expired keys leave memory here and the file at the next rotation. */
  private forgetExpired(): void {
    const nowS = this.clock();
    const kept = this.retired.filter((k) => this.published(k, nowS));
    if (kept.length === this.retired.length) return;
    this.retired = kept;
    this.version += 1;
  }
}

const ISSUER_FILE = 'local-issuer.url';

/**
 * The local issuer identifier (RFC 8414: the https URL apps reach the authorization server at):
 * auth.local.issuer, else https://{api.public_host}:{port}, where no public_host means the API's
 * own address, or this box's first LAN address when it listens on every interface.
 */
export function localIssuerName(config: Config, port = config.api.port): string {
  if (config.auth.local.issuer !== null) return config.auth.local.issuer;
  const listen = config.api.host;
  const wildcard = listen === '0.0.0.0' || listen === '::';
  const host = config.api.public_host ?? (wildcard ? (firstLanAddress() ?? '127.0.0.1') : listen);
  return `https://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/**
 * Opens the local issuer's keys. The daemon (`port` given: the one it listens on) settles the
 * issuer URL and records it in data_dir; the `token` command (no port) signs with the recorded
 * one, so its tokens carry the `iss` the running daemon checks even when the port was chosen at
 * start or the LAN address changed since.
 */
export async function openLocalIssuer(config: Config, secretBox: SecretBox, port?: number): Promise<LocalIssuer> {
  const file = path.join(config.gateway.data_dir, ISSUER_FILE);
  let issuer: string;
  if (port === undefined) {
    issuer = config.auth.local.issuer ?? readRecordedIssuer(file) ?? localIssuerName(config);
  } else {
    issuer = localIssuerName(config, port);
    mkdirSync(config.gateway.data_dir, { recursive: true, mode: 0o700 });
    replaceFile(file, `${issuer}\n`, 0o644);
  }
  return LocalIssuer.open({
    dataDir: config.gateway.data_dir,
    secretBox,
    issuer,
    audience: config.auth.local.audience,
    // `edge-gateway token --ttl` may issue for up to a day, longer than access_ttl_s.
    retiredKeyLifetimeS: Math.max(config.auth.local.access_ttl_s, 86_400) + config.auth.clock_tolerance_s,
  });
}

function readRecordedIssuer(file: string): string | null {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return /^https:\/\/\S+$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

/**
 * The daemon's rotation schedule: the signing key is replaced when it is older than
 * key_rotation_days (checked now, then hourly); the old one stays in the JWKS until its tokens have
 * expired (docs/oauth.md). A failed rotation is logged and the current key keeps signing. Returns
 * the function that stops the schedule.
 */
export async function startKeyRotation(
  issuer: LocalIssuer,
  keyRotationDays: number,
  log: BaseLogger,
): Promise<() => void> {
  const maxAgeS = keyRotationDays * 86_400;
  const rotate = () =>
    issuer
      .rotateIfOlderThan(maxAgeS)
      .then((rotated) => rotated && log.info({ kid: issuer.currentKid }, 'local issuer signing key rotated'))
      .catch((err: unknown) => log.error({ err }, 'local issuer key rotation failed; the current key keeps signing'));
  await rotate();
  const timer = setInterval(() => void rotate(), 3600_000);
  timer.unref();
  return () => clearInterval(timer);
}

/** RFC 7638: SHA-256 over the required EC members in lexicographic order, without whitespace. */
function thumbprint(jwk: EcPublicJwk): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical, 'utf8').digest('base64url');
}

/**
 * WebCrypto rather than generateKeyPairSync + KeyObject.export({ format: 'jwk' }): on Node 20 that
 * pair deadlocks the process now and then (test/auth/local-issuer-jwk-stress.test.ts).
 */
async function makeKey(box: SecretBox, nowS: number): Promise<{ stored: StoredKey; privateJwk: EcPrivateJwk }> {
  const { privateKey } = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ]);
  const jwk = await webcrypto.subtle.exportKey('jwk', privateKey);
  if (typeof jwk.x !== 'string' || typeof jwk.y !== 'string' || typeof jwk.d !== 'string') {
    throw new LocalIssuerError('key generation returned an incomplete EC key');
  }
  const publicJwk: EcPublicJwk = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
  const privateJwk: EcPrivateJwk = { ...publicJwk, d: jwk.d };
  const sealedPrivateJwk = box.seal(JSON.stringify(privateJwk), SEAL_LABEL);
  return {
    stored: { kid: thumbprint(publicJwk), createdAtS: nowS, retiredAtS: null, publicJwk, sealedPrivateJwk },
    privateJwk,
  };
}

async function importSigningKey(file: string, jwk: EcPrivateJwk): Promise<CryptoKey> {
  const key = await importJWK({ ...jwk, alg: 'ES256' }, 'ES256');
  if (key instanceof Uint8Array) throw new LocalIssuerError(`${file} does not hold an EC key`);
  return key;
}

function serializeKeys(keys: StoredKey[]): string {
  const entries = keys.map((k) => ({
    kid: k.kid,
    created_at: k.createdAtS,
    retired_at: k.retiredAtS,
    public_jwk: k.publicJwk,
    sealed_private_jwk: k.sealedPrivateJwk,
  }));
  return `${JSON.stringify({ version: FORMAT_VERSION, keys: entries }, null, 2)}\n`;
}

function readKeyFile(file: string, content: Buffer, box: SecretBox): KeyRing {
  const broken = (why: string): LocalIssuerError =>
    new LocalIssuerError(
      `${file} is unusable (${why}); move it away to create a new key, which invalidates tokens already issued`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    throw broken('not JSON');
  }
  if (!isRecord(parsed)) throw broken('not an object');

  let keys: StoredKey[];
  if (parsed.version === 1) {
    // Version 1 recorded no creation time; the file was written once, when the key was made.
    const createdAtS = Math.floor(statSync(file).mtimeMs / 1000);
    keys = [readKey(parsed, null, createdAtS, null, broken)];
  } else if (parsed.version === FORMAT_VERSION) {
    const entries: unknown = parsed.keys;
    if (!Array.isArray(entries) || entries.length === 0) throw broken('no keys');
    keys = entries.map((entry: unknown, i) => {
      const fail = (why: string): LocalIssuerError => broken(`key ${i}: ${why}`);
      if (!isRecord(entry)) throw fail('not an object');
      const { kid, created_at: createdAt, retired_at: retiredAt } = entry;
      if (typeof kid !== 'string') throw fail('no kid');
      if (!isTimestamp(createdAt)) throw fail('bad created_at');
      if (retiredAt !== null && !isTimestamp(retiredAt)) throw fail('bad retired_at');
      return readKey(entry, kid, createdAt, retiredAt, fail);
    });
  } else {
    throw broken('unknown version');
  }

  // Verifiers pick the key by kid alone, so two entries with one kid make tokens ambiguous.
  if (new Set(keys.map((k) => k.kid)).size !== keys.length) throw broken('duplicate kid');
  const current = keys.filter((k) => k.retiredAtS === null);
  if (current.length === 0) throw broken('no current key');
  if (current.length > 1) throw broken('more than one current key');
  const [signing] = current as [StoredKey];
  return {
    current: signing,
    retired: keys.filter((k) => k !== signing),
    currentPrivateJwk: openPrivateJwk(signing, box, broken),
  };
}

/**
 * Checks one key entry's public half. Only the signing key's sealed private half is opened (at
 * load): a retired key never signs again, so a damaged one must not stop the gateway.
 */
function readKey(
  entry: Record<string, unknown>,
  kid: string | null,
  createdAtS: number,
  retiredAtS: number | null,
  fail: (why: string) => LocalIssuerError,
): StoredKey {
  const publicJwk = asEcJwk(entry.public_jwk);
  if (publicJwk === null) throw fail('bad public key');
  if (typeof entry.sealed_private_jwk !== 'string') throw fail('no sealed private key');
  const expectedKid = thumbprint(publicJwk);
  if (kid !== null && kid !== expectedKid) throw fail('kid is not the key thumbprint');
  return { kid: expectedKid, createdAtS, retiredAtS, publicJwk, sealedPrivateJwk: entry.sealed_private_jwk };
}

function openPrivateJwk(key: StoredKey, box: SecretBox, fail: (why: string) => LocalIssuerError): EcPrivateJwk {
  let raw: unknown;
  try {
    raw = JSON.parse(box.open(key.sealedPrivateJwk, SEAL_LABEL).toString('utf8'));
  } catch (err) {
    throw fail(err instanceof Error ? err.message : 'private key does not open');
  }
  const publicPart = asEcJwk(raw);
  const d = isRecord(raw) ? raw.d : undefined;
  if (publicPart === null || typeof d !== 'string') throw fail('bad private key');
  // The published key and the signing key must be one pair, or every token we issue fails.
  if (publicPart.x !== key.publicJwk.x || publicPart.y !== key.publicJwk.y)
    throw fail('public and private keys differ');
  return { ...key.publicJwk, d };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTimestamp(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function asEcJwk(value: unknown): EcPublicJwk | null {
  if (!isRecord(value)) return null;
  const { kty, crv, x, y } = value;
  if (kty !== 'EC' || crv !== 'P-256' || typeof x !== 'string' || typeof y !== 'string') return null;
  return { kty, crv, x, y };
}
