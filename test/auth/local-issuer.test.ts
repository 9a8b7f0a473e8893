import { webcrypto } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidTokenError, LocalIssuerError } from '../../src/auth/errors.js';
import { LocalIssuer } from '../../src/auth/local-issuer.js';
import { TokenVerifier } from '../../src/auth/verifier.js';
import { localIssuerName, openLocalIssuer, startKeyRotation } from '../../src/auth/local-issuer.js';
import { validateConfig } from '../../src/config/load.js';
import { SecretBox } from '../../src/platform/secret-box.js';

const ISSUER = 'https://gateway.local:8443';
const AUDIENCE = 'edge-gateway';
const T0_S = 1_750_000_000;
/** A retired key's lifetime for a 600 s token lifetime and 30 s clock tolerance. */
const LIFETIME_S = 630;
const KEY_FILE = 'local-issuer.key.json';

interface KeyEntry {
  kid: string;
  created_at: number;
  retired_at: number | null;
  public_jwk: JWK;
  sealed_private_jwk: string;
}

interface KeyFileV2 {
  version: 2;
  keys: KeyEntry[];
}

const tempDirs: string[] = [];
const verifiers: TokenVerifier[] = [];

afterEach(() => {
  for (const v of verifiers.splice(0)) v.close();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'edge-gw-issuer-'));
  tempDirs.push(dir);
  return dir;
}

function openIssuer(dataDir: string, clock: { s: number }): Promise<LocalIssuer> {
  return LocalIssuer.open({
    dataDir,
    secretBox: SecretBox.openInDir(dataDir),
    issuer: ISSUER,
    audience: AUDIENCE,
    retiredKeyLifetimeS: LIFETIME_S,
    nowS: () => clock.s,
  });
}

function makeVerifier(localIssuer: LocalIssuer, dataDir: string, clock: { s: number }): TokenVerifier {
  const verifier = new TokenVerifier({
    issuers: [],
    localIssuer,
    dataDir,
    clockToleranceS: 30,
    requireAtJwt: true,
    jwksMaxStaleS: 86_400,
    jwksRefreshS: 3600,
    jwksCooldownS: 30,
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
    now: () => clock.s * 1000,
  });
  verifiers.push(verifier);
  return verifier;
}

function readKeyFile(dataDir: string): KeyFileV2 {
  return JSON.parse(readFileSync(path.join(dataDir, KEY_FILE), 'utf8')) as KeyFileV2;
}

function writeKeyFile(dataDir: string, content: unknown): void {
  writeFileSync(path.join(dataDir, KEY_FILE), typeof content === 'string' ? content : JSON.stringify(content), {
    mode: 0o600,
  });
}

function kids(issuer: LocalIssuer): Array<string | undefined> {
  return issuer.publicJwks().keys.map((k) => k.kid);
}

/** A key file as the version-1 issuer wrote it. WebCrypto: see local-issuer-jwk-stress.test.ts. */
async function writeV1KeyFile(dataDir: string, mtimeS: number): Promise<JWK> {
  const { privateKey } = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
  const jwk = await webcrypto.subtle.exportKey('jwk', privateKey);
  const publicJwk = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
  const sealed = SecretBox.openInDir(dataDir).seal(JSON.stringify({ ...publicJwk, d: jwk.d }), 'local-issuer-key');
  writeKeyFile(
    dataDir,
    `${JSON.stringify({ version: 1, alg: 'ES256', public_jwk: publicJwk, sealed_private_jwk: sealed }, null, 2)}\n`,
  );
  utimesSync(path.join(dataDir, KEY_FILE), mtimeS, mtimeS);
  return publicJwk;
}

async function expectInvalid(promise: Promise<unknown>, reason: string): Promise<void> {
  const err: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidTokenError);
  expect((err as InvalidTokenError).reason).toBe(reason);
}

describe('LocalIssuer key file', () => {
  it('creates a version-2 file with one current key, 0600, kid the RFC 7638 thumbprint', async () => {
    const dataDir = tempDir();
    const issuer = await openIssuer(dataDir, { s: T0_S });
    const file = readKeyFile(dataDir);
    expect(statSync(path.join(dataDir, KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(file.version).toBe(2);
    expect(file.keys).toHaveLength(1);
    const [key] = file.keys as [KeyEntry];
    expect(key).toMatchObject({ kid: issuer.currentKid, created_at: T0_S, retired_at: null });
    expect(issuer.currentKid).toBe(await calculateJwkThumbprint(key.public_jwk, 'sha256'));
    expect(issuer.publicJwks()).toEqual({
      keys: [{ ...key.public_jwk, kid: issuer.currentKid, alg: 'ES256', use: 'sig' }],
    });
  });

  it('reads a version-1 file as the current key, created at its mtime, and leaves it as is', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const publicJwk = await writeV1KeyFile(dataDir, T0_S - 1000);
    const before = readFileSync(path.join(dataDir, KEY_FILE), 'utf8');
    const issuer = await openIssuer(dataDir, clock);

    expect(issuer.currentKid).toBe(await calculateJwkThumbprint(publicJwk, 'sha256'));
    expect(kids(issuer)).toEqual([issuer.currentKid]);
    const verifier = makeVerifier(issuer, dataDir, clock);
    const verified = await verifier.verify(await issuer.issue({ subject: 'admin', scope: 'devices:read', ttlS: 300 }));
    expect(verified).toMatchObject({ issuer: ISSUER, subject: 'admin', expiresAt: (T0_S + 300) * 1000 });
    expect(readFileSync(path.join(dataDir, KEY_FILE), 'utf8')).toBe(before);

    // created_at came from the mtime: 1000 s old.
    expect(await issuer.rotateIfOlderThan(1000)).toBe(false);
    expect(await issuer.rotateIfOlderThan(999)).toBe(true);
    const rewritten = readKeyFile(dataDir);
    expect(rewritten.version).toBe(2);
    expect(rewritten.keys.map((k) => [k.kid, k.created_at, k.retired_at])).toEqual([
      [issuer.currentKid, T0_S, null],
      [await calculateJwkThumbprint(publicJwk, 'sha256'), T0_S - 1000, T0_S],
    ]);
  });

  it('sees the same current and retired keys when reopened after a rotation', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const first = await openIssuer(dataDir, clock);
    const oldKid = first.currentKid;
    const oldToken = await first.issue({ subject: 'admin', scope: 'devices:read', ttlS: 600 });
    clock.s += 60;
    await first.rotate();

    const second = await openIssuer(dataDir, clock);
    expect(second.currentKid).toBe(first.currentKid);
    expect(second.currentKid).not.toBe(oldKid);
    expect(second.publicJwks()).toEqual(first.publicJwks());
    expect(readKeyFile(dataDir).keys.find((k) => k.kid === oldKid)?.retired_at).toBe(T0_S + 60);

    const verifier = makeVerifier(second, dataDir, clock);
    expect((await verifier.verify(oldToken)).subject).toBe('admin');
    const newToken = await second.issue({ subject: 'svc', scope: '', ttlS: 600 });
    expect(decodeProtectedHeader(newToken).kid).toBe(first.currentKid);
    expect((await makeVerifier(first, tempDir(), clock).verify(newToken)).subject).toBe('svc');
  });

  it('refuses a negative retiredKeyLifetimeS', async () => {
    const dataDir = tempDir();
    const opening = LocalIssuer.open({
      dataDir,
      secretBox: SecretBox.openInDir(dataDir),
      issuer: ISSUER,
      audience: AUDIENCE,
      retiredKeyLifetimeS: -1,
    });
    await expect(opening).rejects.toThrow(LocalIssuerError);
  });
});

describe('LocalIssuer broken key files', () => {
  /** A valid two-key file (current and retired) to break. */
  async function twoKeyDir(): Promise<{ dataDir: string; file: KeyFileV2 }> {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const issuer = await openIssuer(dataDir, clock);
    clock.s += 10;
    await issuer.rotate();
    const file = readKeyFile(dataDir);
    expect(file.keys.map((k) => k.retired_at)).toEqual([null, T0_S + 10]);
    return { dataDir, file };
  }

  const breakages: Array<[string, (file: KeyFileV2) => unknown, RegExp]> = [
    ['bad JSON', () => '{ "version": 2, "keys": [', /not JSON/],
    ['no current key', (f) => ({ ...f, keys: f.keys.map((k) => ({ ...k, retired_at: T0_S + 10 })) }), /no current key/],
    [
      'two current keys',
      (f) => ({ ...f, keys: f.keys.map((k) => ({ ...k, retired_at: null })) }),
      /more than one current key/,
    ],
    ['no keys', (f) => ({ ...f, keys: [] }), /no keys/],
    ['an unknown version', (f) => ({ ...f, version: 3 }), /unknown version/],
    [
      'a kid that is not the thumbprint',
      (f) => ({ ...f, keys: f.keys.map((k, i) => (i === 1 ? { ...k, kid: 'other' } : k)) }),
      /key 1: kid is not the key thumbprint/,
    ],
    [
      'one kid twice',
      (f) => ({ ...f, keys: [...f.keys, { ...(f.keys[1] as KeyEntry), retired_at: T0_S }] }),
      /duplicate kid/,
    ],
    [
      'a tampered sealed key',
      (f) => ({
        ...f,
        keys: f.keys.map((k, i) => (i === 0 ? { ...k, sealed_private_jwk: tamper(k.sealed_private_jwk) } : k)),
      }),
      /does not open/,
    ],
    [
      'the retired key sealed under the current key',
      (f) => ({
        ...f,
        keys: f.keys.map((k, i) => (i === 0 ? { ...k, sealed_private_jwk: f.keys[1]?.sealed_private_jwk } : k)),
      }),
      /public and private keys differ/,
    ],
  ];

  it.each(breakages)('refuses a file with %s, naming the file and the way out', async (_name, breakFile, reason) => {
    const { dataDir, file } = await twoKeyDir();
    writeKeyFile(dataDir, breakFile(file));
    const err: unknown = await openIssuer(dataDir, { s: T0_S + 20 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LocalIssuerError);
    const message = (err as LocalIssuerError).message;
    expect(message).toMatch(reason);
    expect(message).toContain(path.join(dataDir, KEY_FILE));
    expect(message).toContain('move it away');
  });
});

/** Changes one character in the middle of the ciphertext of a SecretBox value. */
function tamper(sealed: string): string {
  const parts = sealed.split('.');
  const body = parts[2] as string;
  const at = Math.floor(body.length / 2);
  parts[2] = `${body.slice(0, at)}${body[at] === 'A' ? 'B' : 'A'}${body.slice(at + 1)}`;
  return parts.join('.');
}

describe('LocalIssuer tokens', () => {
  it('issues RFC 9068 access tokens: typ at+jwt, ES256, the current kid, the required claims', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const issuer = await openIssuer(dataDir, clock);
    const token = await issuer.issue({
      subject: 'admin',
      scope: 'devices:read users:write',
      ttlS: 300,
      clientId: 'console',
      jti: 'grant-7.1',
    });

    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: issuer.currentKid, typ: 'at+jwt' });
    expect(decodeJwt(token)).toEqual({
      iss: ISSUER,
      sub: 'admin',
      aud: AUDIENCE,
      client_id: 'console',
      iat: T0_S,
      exp: T0_S + 300,
      jti: 'grant-7.1',
      scope: 'devices:read users:write',
    });
    const verified = await makeVerifier(issuer, dataDir, clock).verify(token);
    expect(verified).toMatchObject({ clientId: 'console', tokenId: 'grant-7.1', expiresAt: (T0_S + 300) * 1000 });
  });

  it('defaults jti to a fresh UUID per token and refuses an empty one', async () => {
    const issuer = await openIssuer(tempDir(), { s: T0_S });
    const jtis = await Promise.all(
      [1, 2].map(async () => decodeJwt(await issuer.issue({ subject: 'a', scope: '', ttlS: 60 })).jti),
    );
    expect(jtis[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(jtis[1]).not.toBe(jtis[0]);
    await expect(issuer.issue({ subject: 'a', scope: '', ttlS: 60, jti: '' })).rejects.toThrow(LocalIssuerError);
  });
});

describe('LocalIssuer rotation', () => {
  it('signs with a new key and keeps the old one published and accepted', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const issuer = await openIssuer(dataDir, clock);
    const verifier = makeVerifier(issuer, dataDir, clock);
    const oldKid = issuer.currentKid;
    const version = issuer.keysVersion;
    const before = await issuer.issue({ subject: 'before', scope: '', ttlS: 600 });
    // Builds the verifier's key set before the rotation, so the new key must reach it later.
    expect((await verifier.verify(before)).subject).toBe('before');

    clock.s += 100;
    await issuer.rotate();
    expect(issuer.currentKid).not.toBe(oldKid);
    expect(issuer.keysVersion).toBeGreaterThan(version);
    expect(kids(issuer)).toEqual([issuer.currentKid, oldKid]);
    const file = path.join(dataDir, KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toMatch(/"d"\s*:/);

    const after = await issuer.issue({ subject: 'after', scope: '', ttlS: 600 });
    expect(decodeProtectedHeader(after).kid).toBe(issuer.currentKid);
    expect((await verifier.verify(after)).subject).toBe('after');
    const beforeTwo = await makeVerifier(issuer, tempDir(), clock).verify(before);
    expect(beforeTwo.subject).toBe('before');
  });

  it('drops a retired key once retiredKeyLifetimeS has passed, and its tokens with it', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const issuer = await openIssuer(dataDir, clock);
    const verifier = makeVerifier(issuer, dataDir, clock);
    const oldKid = issuer.currentKid;
    // Longer-lived than the lifetime allows, so only the key's removal can refuse them.
    const [early, late] = await Promise.all(
      ['early', 'late'].map((subject) => issuer.issue({ subject, scope: '', ttlS: 10 * LIFETIME_S })),
    );
    await issuer.rotate();
    const newKid = issuer.currentKid;

    clock.s = T0_S + LIFETIME_S - 1;
    expect(kids(issuer)).toEqual([newKid, oldKid]);
    expect((await verifier.verify(early as string)).subject).toBe('early');
    const version = issuer.keysVersion;

    clock.s = T0_S + LIFETIME_S;
    expect(kids(issuer)).toEqual([newKid]);
    expect(issuer.keysVersion).toBeGreaterThan(version);
    await expectInvalid(verifier.verify(late as string), 'unknown key');
    expect((await verifier.verify(await issuer.issue({ subject: 'now', scope: '', ttlS: 60 }))).subject).toBe('now');

    // The file forgets the key at the next rotation.
    expect(readKeyFile(dataDir).keys.map((k) => k.kid)).toEqual([newKid, oldKid]);
    await issuer.rotate();
    expect(readKeyFile(dataDir).keys.map((k) => k.kid)).toEqual([issuer.currentKid, newKid]);
    expect((await openIssuer(dataDir, clock)).publicJwks().keys.map((k) => k.kid)).toEqual([issuer.currentKid, newKid]);
  });

  it('rotateIfOlderThan rotates only a key older than maxAgeS', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const issuer = await openIssuer(dataDir, clock);
    const firstKid = issuer.currentKid;
    const fileBefore = readFileSync(path.join(dataDir, KEY_FILE), 'utf8');

    clock.s += 100;
    expect(await issuer.rotateIfOlderThan(100)).toBe(false);
    expect(issuer.currentKid).toBe(firstKid);
    expect(readFileSync(path.join(dataDir, KEY_FILE), 'utf8')).toBe(fileBefore);

    expect(await issuer.rotateIfOlderThan(99)).toBe(true);
    expect(issuer.currentKid).not.toBe(firstKid);
    expect(readKeyFile(dataDir).keys[0]).toMatchObject({
      kid: issuer.currentKid,
      created_at: T0_S + 100,
      retired_at: null,
    });
    // The new key is brand new.
    expect(await issuer.rotateIfOlderThan(99)).toBe(false);
  });

  it('rotates once when two rotateIfOlderThan calls overlap', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const issuer = await openIssuer(dataDir, clock);
    const version = issuer.keysVersion;
    clock.s += 100;
    expect(await Promise.all([issuer.rotateIfOlderThan(50), issuer.rotateIfOlderThan(50)])).toEqual([true, false]);
    expect(issuer.keysVersion).toBe(version + 1);
    expect(readKeyFile(dataDir).keys).toHaveLength(2);
  });
});

describe('openLocalIssuer and startKeyRotation (how the daemon and the token command open the issuer)', () => {
  const configFor = (dataDir: string, extra: Record<string, unknown> = {}) =>
    validateConfig({ gateway: { data_dir: dataDir }, api: { host: '127.0.0.1', port: 8443 }, ...extra });

  it('the daemon records the issuer URL of the port it listens on; the token command signs with the recorded one', async () => {
    const dataDir = tempDir();
    const config = configFor(dataDir);
    const daemon = await openLocalIssuer(config, SecretBox.openInDir(dataDir), 40_123);
    expect(daemon.issuer).toBe('https://127.0.0.1:40123');
    expect(readFileSync(path.join(dataDir, 'local-issuer.url'), 'utf8')).toBe('https://127.0.0.1:40123\n');

    const cli = await openLocalIssuer(config, SecretBox.openInDir(dataDir));
    expect(cli.issuer).toBe('https://127.0.0.1:40123');
    expect(decodeJwt(await cli.issue({ subject: 'cli', scope: 'devices:read', ttlS: 60 })).iss).toBe(
      'https://127.0.0.1:40123',
    );
  });

  it('the token command ignores a recorded file that is not an https URL, and auth.local.issuer wins over a recorded one', async () => {
    const dataDir = tempDir();
    writeFileSync(path.join(dataDir, 'local-issuer.url'), 'not a url\n');
    expect((await openLocalIssuer(configFor(dataDir), SecretBox.openInDir(dataDir))).issuer).toBe(
      'https://127.0.0.1:8443',
    );
    writeFileSync(path.join(dataDir, 'local-issuer.url'), 'https://127.0.0.1:40123\n');
    const named = configFor(dataDir, { auth: { local: { issuer: 'https://gw.example:9443' } } });
    expect((await openLocalIssuer(named, SecretBox.openInDir(dataDir))).issuer).toBe('https://gw.example:9443');
  });

  it('names the issuer by api.public_host, bracketing an IPv6 address', () => {
    const dataDir = tempDir();
    expect(localIssuerName(configFor(dataDir, { api: { host: '0.0.0.0', public_host: 'gw.lan' } }), 8443)).toBe(
      'https://gw.lan:8443',
    );
    expect(localIssuerName(configFor(dataDir, { api: { host: '::1' } }), 9000)).toBe('https://[::1]:9000');
  });

  it('rotates a key older than key_rotation_days when the schedule starts, and logs the new kid', async () => {
    const dataDir = tempDir();
    const clock = { s: T0_S };
    const issuer = await openIssuer(dataDir, clock);
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });

    clock.s += 86_400;
    const stopFresh = await startKeyRotation(issuer, 1, log);
    stopFresh();
    const firstKid = issuer.currentKid;
    expect(lines).toEqual([]);

    clock.s += 1;
    const stop = await startKeyRotation(issuer, 1, log);
    stop();
    expect(issuer.currentKid).not.toBe(firstKid);
    expect(lines.map((l) => JSON.parse(l) as { msg: string; kid: string })).toMatchObject([
      { msg: 'local issuer signing key rotated', kid: issuer.currentKid },
    ]);
  });
});
