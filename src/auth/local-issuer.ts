import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SignJWT, calculateJwkThumbprint, importJWK, type CryptoKey, type JWK } from 'jose';
import { createOnce } from '../store/files.js';
import type { SecretBox } from '../store/secret-box.js';

const KEY_FILE = 'local-issuer.key.json';
const SEAL_LABEL = 'local-issuer-key';
const FORMAT_VERSION = 1;
const DEFAULT_CLIENT_ID = 'edge-gateway-cli';

export interface LocalIssuerOptions {
  dataDir: string;
  secretBox: SecretBox;
  issuer: string;
  audience: string;
}

export interface IssueOptions {
  subject: string;
  scope: string;
  ttlS: number;
  clientId?: string;
  /** Seconds since the epoch; defaults to the wall clock. */
  nowS?: number;
}

interface EcPublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

export class LocalIssuerError extends Error {
  override readonly name = 'LocalIssuerError';
}

/**
 * The gateway's own token issuer, for installations without an identity provider and for the
 * `edge-gateway token` CLI. One ES256 key, created on first use and kept sealed at rest.
 */
export class LocalIssuer {
  private constructor(
    readonly issuer: string,
    readonly audience: string,
    private readonly kid: string,
    private readonly publicJwk: EcPublicJwk,
    private readonly privateKey: CryptoKey,
  ) {}

  static async open(opts: LocalIssuerOptions): Promise<LocalIssuer> {
    if (opts.issuer === '') throw new LocalIssuerError('the local issuer needs a non-empty issuer');
    if (opts.audience === '') throw new LocalIssuerError('the local issuer needs a non-empty audience');
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(opts.dataDir, KEY_FILE);
    // createOnce settles a race between the daemon and the CLI starting together: both end up
    // with whichever key pair was linked into place first.
    const content = createOnce(file, () => makeKeyFile(opts.secretBox), 0o600);
    const { publicJwk, privateJwk } = readKeyFile(file, content, opts.secretBox);
    const privateKey = await importJWK({ ...privateJwk, alg: 'ES256' }, 'ES256');
    if (privateKey instanceof Uint8Array) throw new LocalIssuerError(`${file} does not hold an EC key`);
    const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
    return new LocalIssuer(opts.issuer, opts.audience, kid, publicJwk, privateKey);
  }

  /** The verification key set, safe to publish. */
  publicJwks(): { keys: JWK[] } {
    return { keys: [{ ...this.publicJwk, kid: this.kid, alg: 'ES256', use: 'sig' }] };
  }

  /** An RFC 9068 JWT access token. */
  async issue(opts: IssueOptions): Promise<string> {
    if (opts.subject === '') throw new LocalIssuerError('subject must not be empty');
    if (!Number.isInteger(opts.ttlS) || opts.ttlS <= 0) throw new LocalIssuerError('ttlS must be a positive integer');
    const nowS = opts.nowS ?? Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: opts.scope, client_id: opts.clientId ?? DEFAULT_CLIENT_ID })
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setSubject(opts.subject)
      .setAudience(this.audience)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + opts.ttlS)
      .setJti(randomUUID())
      .sign(this.privateKey);
  }
}

function makeKeyFile(box: SecretBox): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string' || typeof jwk.y !== 'string' || typeof jwk.d !== 'string') {
    throw new LocalIssuerError('key generation returned an incomplete EC key');
  }
  const publicJwk: EcPublicJwk = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
  const sealed = box.seal(JSON.stringify({ ...publicJwk, d: jwk.d }), SEAL_LABEL);
  return `${JSON.stringify({ version: FORMAT_VERSION, alg: 'ES256', public_jwk: publicJwk, sealed_private_jwk: sealed }, null, 2)}\n`;
}

function readKeyFile(file: string, content: Buffer, box: SecretBox): { publicJwk: EcPublicJwk; privateJwk: EcPublicJwk & { d: string } } {
  const broken = (why: string): LocalIssuerError =>
    new LocalIssuerError(`${file} is unusable (${why}); move it away to create a new key, which invalidates tokens already issued`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    throw broken('not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) throw broken('not an object');
  const record = parsed as Record<string, unknown>;
  if (record.version !== FORMAT_VERSION) throw broken('unknown version');
  const publicJwk = asEcJwk(record.public_jwk);
  if (publicJwk === null) throw broken('bad public key');
  if (typeof record.sealed_private_jwk !== 'string') throw broken('no sealed private key');
  let privateRaw: unknown;
  try {
    privateRaw = JSON.parse(box.open(record.sealed_private_jwk, SEAL_LABEL).toString('utf8'));
  } catch (err) {
    throw broken(err instanceof Error ? err.message : 'private key does not open');
  }
  const privatePublic = asEcJwk(privateRaw);
  const d = typeof privateRaw === 'object' && privateRaw !== null ? (privateRaw as Record<string, unknown>).d : undefined;
  if (privatePublic === null || typeof d !== 'string') throw broken('bad private key');
  // The published key and the signing key must be one pair, or every token we issue fails.
  if (privatePublic.x !== publicJwk.x || privatePublic.y !== publicJwk.y) throw broken('public and private keys differ');
  return { publicJwk, privateJwk: { ...publicJwk, d } };
}

function asEcJwk(value: unknown): EcPublicJwk | null {
  if (typeof value !== 'object' || value === null) return null;
  const { kty, crv, x, y } = value as Record<string, unknown>;
  if (kty !== 'EC' || crv !== 'P-256' || typeof x !== 'string' || typeof y !== 'string') return null;
  return { kty, crv, x, y };
}
