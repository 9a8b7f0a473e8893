import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  base64url,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTHeaderParameters,
} from 'jose';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidTokenError, KeysUnavailableError } from '../../src/auth/errors.js';
import { jwksCacheFile } from '../../src/auth/jwks-store.js';
import { LocalIssuer } from '../../src/auth/local-issuer.js';
import { TokenVerifier, type VerifierOptions } from '../../src/auth/verifier.js';
import { SecretBox } from '../../src/platform/secret-box.js';

const ISSUER = 'https://idp.example.test/realms/cams';
const AUDIENCE = 'edge-gateway';
const T0 = 1_750_000_000_000;

type Alg = 'RS256' | 'ES256' | 'EdDSA';

interface Signer {
  alg: Alg;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

async function makeSigner(alg: Alg, kid: string): Promise<Signer> {
  const { publicKey, privateKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, publicKey, publicJwk };
}

interface TokenSpec {
  claims?: Record<string, unknown>;
  omit?: string[];
  header?: Partial<JWTHeaderParameters>;
  dropTyp?: boolean;
  nowMs?: number;
}

async function sign(signer: Signer, spec: TokenSpec = {}): Promise<string> {
  const nowS = Math.floor((spec.nowMs ?? T0) / 1000);
  const claims: Record<string, unknown> = {
    iss: ISSUER,
    sub: 'user-1',
    aud: AUDIENCE,
    iat: nowS,
    exp: nowS + 600,
    jti: 'token-1',
    client_id: 'console',
    scope: 'devices:read alerts:read',
    ...spec.claims,
  };
  for (const claim of spec.omit ?? []) delete claims[claim];
  const header: JWTHeaderParameters = { alg: signer.alg, kid: signer.kid, typ: 'at+jwt', ...spec.header };
  if (spec.dropTyp) delete header.typ;
  return new SignJWT(claims).setProtectedHeader(header).sign(signer.privateKey);
}

type Mode = 'ok' | '500' | 'garbage' | 'not-a-key-set' | 'bad-key' | 'empty' | 'oversized' | 'down';

interface JwksServer {
  url: string;
  keys: JWK[];
  mode: Mode;
  requests: number;
  close(): Promise<void>;
}

const servers: JwksServer[] = [];

async function startJwksServer(keys: JWK[]): Promise<JwksServer> {
  const httpServer = http.createServer((req, res) => {
    state.requests++;
    const json = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    switch (state.mode) {
      case 'ok':
        return json({ keys: state.keys });
      case '500':
        res.writeHead(500);
        return void res.end('internal error');
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('<html>not json{');
      case 'not-a-key-set':
        return json({ keys: 'nope' });
      case 'bad-key':
        return json({ keys: [...state.keys, { kty: 7 }] });
      case 'empty':
        return json({ keys: [] });
      case 'oversized':
        return json({ keys: state.keys, padding: 'x'.repeat(300 * 1024) });
      case 'down':
        return void req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  let closed = false;
  const state: JwksServer = {
    url: `http://127.0.0.1:${port}/jwks.json`,
    keys,
    mode: 'ok',
    requests: 0,
    close: async () => {
      if (closed) return;
      closed = true;
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
  servers.push(state);
  return state;
}

/** A URL nobody listens on: a server that existed and was shut down. */
async function deadUrl(): Promise<string> {
  const server = await startJwksServer([]);
  await server.close();
  return server.url;
}

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'edge-gw-auth-'));
  tempDirs.push(dir);
  return dir;
}

interface Harness {
  verifier: TokenVerifier;
  registry: Registry;
  dataDir: string;
  logs: string[];
  clock: { ms: number };
}

const verifiers: TokenVerifier[] = [];

function makeVerifier(opts: Partial<VerifierOptions> & { jwksUri?: string; clockMs?: number } = {}): Harness {
  const logs: string[] = [];
  const clock = { ms: opts.clockMs ?? T0 };
  const registry = new Registry();
  const dataDir = opts.dataDir ?? tempDir();
  const verifier = new TokenVerifier({
    issuers: opts.jwksUri === undefined ? [] : [{ issuer: ISSUER, jwks_uri: opts.jwksUri, audience: AUDIENCE }],
    localIssuer: null,
    clockToleranceS: 30,
    requireAtJwt: true,
    jwksMaxStaleS: 86_400,
    jwksRefreshS: 3600,
    jwksCooldownS: 30,
    logger: pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) }),
    now: () => clock.ms,
    ...opts,
    dataDir,
    registry,
  });
  verifiers.push(verifier);
  return { verifier, registry, dataDir, logs, clock };
}

async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const found = registry.getSingleMetric(name);
  if (found === undefined) throw new Error(`metric ${name} is not registered`);
  const { values } = await found.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((sum, v) => sum + v.value, 0);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, got a result');
}

async function expectInvalid(promise: Promise<unknown>, reason: string): Promise<void> {
  const err = await rejection(promise);
  expect(err).toBeInstanceOf(InvalidTokenError);
  expect((err as InvalidTokenError).reason).toBe(reason);
}

async function expectUnavailable(promise: Promise<unknown>, reason: string): Promise<void> {
  const err = await rejection(promise);
  expect(err).toBeInstanceOf(KeysUnavailableError);
  expect((err as KeysUnavailableError).reason).toBe(reason);
}

let rsa: Signer;
let ec: Signer;
let ed: Signer;
let main: JwksServer;

beforeAll(async () => {
  [rsa, ec, ed] = await Promise.all([
    makeSigner('RS256', 'rsa-1'),
    makeSigner('ES256', 'ec-1'),
    makeSigner('EdDSA', 'ed-1'),
  ]);
  main = await startJwksServer([rsa.publicJwk, ec.publicJwk, ed.publicJwk]);
});

afterEach(() => {
  for (const v of verifiers.splice(0)) v.close();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

async function readyVerifier(
  opts: Partial<VerifierOptions> & { jwksUri?: string; clockMs?: number } = {},
): Promise<Harness> {
  const h = makeVerifier({ jwksUri: main.url, ...opts });
  await h.verifier.start();
  await h.verifier.refreshNow();
  return h;
}

describe('TokenVerifier: signatures and algorithms', () => {
  it.each(['RS256', 'ES256', 'EdDSA'] as const)('accepts a valid %s at+jwt', async (alg) => {
    const { verifier, registry } = await readyVerifier();
    const signer = { RS256: rsa, ES256: ec, EdDSA: ed }[alg];
    const verified = await verifier.verify(await sign(signer));
    expect(verified).toEqual({
      issuer: ISSUER,
      subject: 'user-1',
      scopes: new Set(['devices:read', 'alerts:read']),
      expiresAt: (Math.floor(T0 / 1000) + 600) * 1000,
      clientId: 'console',
      tokenId: 'token-1',
    });
    expect(await metric(registry, 'edge_gateway_token_verifications_total', { result: 'ok' })).toBe(1);
  });

  it('accepts typ application/at+jwt in any case', async () => {
    const { verifier } = await readyVerifier();
    await expect(verifier.verify(await sign(ec, { header: { typ: 'Application/AT+JWT' } }))).resolves.toMatchObject({
      subject: 'user-1',
    });
  });

  it('rejects alg none', async () => {
    const { verifier, registry } = await readyVerifier();
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }));
    const nowS = Math.floor(T0 / 1000);
    const payload = base64url.encode(
      JSON.stringify({ iss: ISSUER, sub: 'root', aud: AUDIENCE, iat: nowS, exp: nowS + 600 }),
    );
    await expectInvalid(verifier.verify(`${header}.${payload}.`), 'algorithm not allowed');
    expect(await metric(registry, 'edge_gateway_token_verifications_total', { result: 'invalid' })).toBe(1);
  });

  it('rejects HS256 signed with the RSA public key as the HMAC secret (PEM and JWK bytes)', async () => {
    const { verifier } = await readyVerifier();
    const secrets = [
      new TextEncoder().encode(await exportSPKI(rsa.publicKey)),
      new TextEncoder().encode(JSON.stringify(rsa.publicJwk)),
    ];
    for (const secret of secrets) {
      const nowS = Math.floor(T0 / 1000);
      const token = await new SignJWT({ iss: ISSUER, sub: 'root', aud: AUDIENCE, iat: nowS, exp: nowS + 600 })
        .setProtectedHeader({ alg: 'HS256', kid: rsa.kid, typ: 'at+jwt' })
        .sign(secret);
      await expectInvalid(verifier.verify(token), 'algorithm not allowed');
    }
  });

  it('rejects a signature made with another key under a known kid', async () => {
    const { verifier } = await readyVerifier();
    const impostor = await makeSigner('ES256', ec.kid);
    await expectInvalid(verifier.verify(await sign(impostor)), 'signature invalid');
  });

  it('rejects a tampered payload', async () => {
    const { verifier } = await readyVerifier();
    const [h, , s] = (await sign(rsa)).split('.');
    const nowS = Math.floor(T0 / 1000);
    const forged = base64url.encode(
      JSON.stringify({ iss: ISSUER, sub: 'admin', aud: AUDIENCE, iat: nowS, exp: nowS + 600, scope: 'users:write' }),
    );
    await expectInvalid(verifier.verify(`${h}.${forged}.${s}`), 'signature invalid');
  });
});

describe('TokenVerifier: claims and header', () => {
  it('rejects an expired token', async () => {
    const { verifier } = await readyVerifier();
    const nowS = Math.floor(T0 / 1000);
    await expectInvalid(
      verifier.verify(await sign(rsa, { claims: { iat: nowS - 700, exp: nowS - 100 } })),
      'token expired',
    );
  });

  it('accepts a token expired by less than the clock tolerance', async () => {
    const { verifier } = await readyVerifier();
    const nowS = Math.floor(T0 / 1000);
    await expect(
      verifier.verify(await sign(rsa, { claims: { iat: nowS - 700, exp: nowS - 10 } })),
    ).resolves.toMatchObject({ subject: 'user-1' });
  });

  it('rejects nbf in the future', async () => {
    const { verifier } = await readyVerifier();
    const nowS = Math.floor(T0 / 1000);
    await expectInvalid(verifier.verify(await sign(ec, { claims: { nbf: nowS + 300 } })), 'token not yet valid');
  });

  // iat against the verifier's clock (T0), with its 30 s tolerance: RFC 8725 §3.10 / RFC 9068 §4.
  it.each([
    [-3600, 'ok'],
    [0, 'ok'],
    [29, 'ok'],
    [30, 'ok'],
    [31, 'token issued in the future'],
    [300, 'token issued in the future'],
    [10 * 365 * 86_400, 'token issued in the future'],
  ] as const)('iat %i s from now → %s', async (offsetS, outcome) => {
    const { verifier } = await readyVerifier();
    const nowS = Math.floor(T0 / 1000);
    const token = await sign(ec, { claims: { iat: nowS + offsetS, exp: nowS + Math.max(offsetS, 0) + 600 } });
    if (outcome === 'ok') await expect(verifier.verify(token)).resolves.toMatchObject({ subject: 'user-1' });
    else await expectInvalid(verifier.verify(token), outcome);
  });

  it.each(['soon', '1700000000', null, true, [1]])(
    'rejects an iat that is not a number of seconds (%j)',
    async (iat) => {
      const { verifier } = await readyVerifier();
      await expectInvalid(verifier.verify(await sign(ec, { claims: { iat } })), 'invalid claim iat');
    },
  );

  it('rejects a cached token whose iat is still ahead of a clock that stepped back', async () => {
    const { verifier, clock } = await readyVerifier();
    const token = await sign(ec);
    await expect(verifier.verify(token)).resolves.toMatchObject({ subject: 'user-1' });
    clock.ms = T0 - 60_000;
    await expectInvalid(verifier.verify(token), 'token issued in the future');
  });

  it('rejects an issuer it does not know, even a near match', async () => {
    const { verifier } = await readyVerifier();
    await expectInvalid(
      verifier.verify(await sign(ec, { claims: { iss: 'https://evil.example.test/' } })),
      'issuer not accepted',
    );
    await expectInvalid(verifier.verify(await sign(ec, { claims: { iss: `${ISSUER}/` } })), 'issuer not accepted');
  });

  it('rejects an aud without us', async () => {
    const { verifier } = await readyVerifier();
    await expectInvalid(verifier.verify(await sign(ec, { claims: { aud: 'other-api' } })), 'audience not accepted');
    await expectInvalid(
      verifier.verify(await sign(ec, { claims: { aud: ['other-api', 'more'] } })),
      'audience not accepted',
    );
  });

  it('accepts an aud array that contains us', async () => {
    const { verifier } = await readyVerifier();
    await expect(verifier.verify(await sign(ec, { claims: { aud: ['other-api', AUDIENCE] } }))).resolves.toMatchObject({
      subject: 'user-1',
    });
  });

  it('rejects typ JWT and a missing typ when at+jwt is required', async () => {
    const { verifier } = await readyVerifier({ requireAtJwt: true });
    await expectInvalid(verifier.verify(await sign(ec, { header: { typ: 'JWT' } })), 'token type not accepted');
    await expectInvalid(verifier.verify(await sign(ec, { dropTyp: true })), 'token type not accepted');
  });

  it('accepts typ JWT and a missing typ when at+jwt is not required', async () => {
    const { verifier } = await readyVerifier({ requireAtJwt: false });
    await expect(verifier.verify(await sign(ec, { header: { typ: 'JWT' } }))).resolves.toMatchObject({
      subject: 'user-1',
    });
    await expect(
      verifier.verify(await sign(ec, { header: { typ: 'application/jwt' }, claims: { jti: 'b' } })),
    ).resolves.toMatchObject({
      subject: 'user-1',
    });
    await expect(verifier.verify(await sign(ec, { dropTyp: true, claims: { jti: 'c' } }))).resolves.toMatchObject({
      subject: 'user-1',
    });
  });

  it.each([true, false])('rejects other typs (requireAtJwt %s)', async (requireAtJwt) => {
    const { verifier } = await readyVerifier({ requireAtJwt });
    await expectInvalid(
      verifier.verify(await sign(ec, { header: { typ: 'id_token+jwt' } })),
      'token type not accepted',
    );
    await expectInvalid(verifier.verify(await sign(ec, { header: { typ: 'dpop+jwt' } })), 'token type not accepted');
  });

  it.each(['iss', 'exp', 'aud', 'sub', 'iat'])('rejects a token without %s', async (claim) => {
    const { verifier } = await readyVerifier();
    await expectInvalid(verifier.verify(await sign(rsa, { omit: [claim] })), `missing claim ${claim}`);
  });

  it('rejects a non-string sub', async () => {
    const { verifier } = await readyVerifier();
    await expectInvalid(verifier.verify(await sign(rsa, { claims: { sub: 42 } })), 'invalid claim sub');
  });

  it('treats a missing or odd scope claim as no scopes', async () => {
    const { verifier } = await readyVerifier();
    expect((await verifier.verify(await sign(rsa, { omit: ['scope'] }))).scopes.size).toBe(0);
    expect(
      (await verifier.verify(await sign(rsa, { claims: { scope: ['devices:read'], jti: 'x' } }))).scopes.size,
    ).toBe(0);
  });
});

describe('TokenVerifier: malformed input', () => {
  it('rejects 2-segment and 4-segment tokens and junk', async () => {
    const { verifier } = await readyVerifier();
    const [h, p, s] = (await sign(ec)).split('.');
    for (const token of [`${h}.${p}`, `${h}.${p}.${s}.${s}`, 'abc', '', '...', `${h}.!!!.${s}`]) {
      await expectInvalid(verifier.verify(token), 'malformed token');
    }
  });

  it('rejects a token over 8192 chars before parsing it', async () => {
    const { verifier } = await readyVerifier();
    await expectInvalid(verifier.verify('a'.repeat(8193)), 'token too long');
    await expectInvalid(verifier.verify('a'.repeat(8192)), 'malformed token');
  });

  it('takes a token only in its compact serialisation: a blank or padding in a part is refused, though jose reads past them', async () => {
    const { verifier } = await readyVerifier();
    const token = await sign(ec);
    const [h, p, s] = token.split('.') as [string, string, string];
    for (const spelling of [
      `${h}.${p}.${s.slice(0, 10)} ${s.slice(10)}`,
      `${h}.${p}.${s.slice(0, 10)}\n${s.slice(10)}`,
      `${h}.${p}.${s}=`,
    ]) {
      await expectInvalid(verifier.verify(spelling), 'malformed token');
      // Nothing but compact JWS is cached: the API's hook takes a cached token as well formed.
      expect(verifier.cached(spelling)).toBeNull();
    }
    await expect(verifier.verify(token)).resolves.toMatchObject({ issuer: ISSUER });
  });
});

describe('TokenVerifier: key rotation', () => {
  it('picks up a kid rotated in on the server, refreshing at most once per cooldown', async () => {
    const server = await startJwksServer([ec.publicJwk]);
    const { verifier, clock, registry } = await readyVerifier({ jwksUri: server.url, jwksCooldownS: 30 });
    expect(server.requests).toBe(1);

    const next = await makeSigner('ES256', 'ec-2');
    server.keys = [ec.publicJwk, next.publicJwk];
    await expectInvalid(verifier.verify(await sign(next)), 'unknown key');
    expect(server.requests).toBe(1);

    clock.ms += 31_000;
    const later = { nowMs: clock.ms };
    await expect(verifier.verify(await sign(next, later))).resolves.toMatchObject({ subject: 'user-1' });
    expect(server.requests).toBe(2);

    const third = await makeSigner('EdDSA', 'ed-3');
    server.keys = [ec.publicJwk, next.publicJwk, third.publicJwk];
    await expectInvalid(verifier.verify(await sign(third, later)), 'unknown key');
    await expectInvalid(verifier.verify(await sign(third, { ...later, header: { kid: 'made-up' } })), 'unknown key');
    expect(server.requests).toBe(2);

    clock.ms += 31_000;
    await expect(verifier.verify(await sign(third, { nowMs: clock.ms }))).resolves.toMatchObject({ subject: 'user-1' });
    expect(server.requests).toBe(3);
    expect(await metric(registry, 'edge_gateway_jwks_refresh_total', { issuer: ISSUER, result: 'ok' })).toBe(3);
  });

  it('shares one in-flight refresh between concurrent lookups', async () => {
    const server = await startJwksServer([rsa.publicJwk, ec.publicJwk]);
    const { verifier } = makeVerifier({ jwksUri: server.url });
    const tokens = await Promise.all([rsa, ec, rsa, ec, rsa].map((s, i) => sign(s, { claims: { jti: `t${i}` } })));
    const results = await Promise.all(tokens.map((t) => verifier.verify(t)));
    expect(results).toHaveLength(5);
    expect(server.requests).toBe(1);
  });

  it('drops keys it cannot use and keeps the rest', async () => {
    const server = await startJwksServer([
      { kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' },
      { ...rsa.publicJwk, kid: 'pss', alg: 'PS256' },
      { ...ec.publicJwk, kid: 'enc', use: 'enc' },
      { kty: 'EC', crv: 'P-384', x: 'AAAA', y: 'AAAA', kid: 'p384' },
      { kty: 'RSA', n: 'AQAB', e: 'AQAB', kid: 'tiny' },
      { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA', kid: 'not-on-curve' },
      { kty: 'AKP', kid: 'future' },
      ec.publicJwk,
    ]);
    const { verifier, dataDir } = await readyVerifier({ jwksUri: server.url });
    await expect(verifier.verify(await sign(ec))).resolves.toMatchObject({ subject: 'user-1' });
    const cached = JSON.parse(readFileSync(jwksCacheFile(dataDir, ISSUER), 'utf8')) as { jwks: { keys: JWK[] } };
    expect(cached.jwks.keys.map((k) => k.kid)).toEqual(['ec-1']);
  });
});

describe('TokenVerifier: offline operation and failures', () => {
  it('verifies with the cache file from a previous run while the JWKS server is down', async () => {
    const server = await startJwksServer([rsa.publicJwk, ed.publicJwk]);
    const dataDir = tempDir();
    const first = await readyVerifier({ jwksUri: server.url, dataDir });
    first.verifier.close();
    await server.close();

    const file = jwksCacheFile(dataDir, ISSUER);
    expect(path.basename(file)).toMatch(/^[0-9a-f]{16}\.json$/);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const cached = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(cached).toMatchObject({ issuer: ISSUER, jwks_uri: server.url, fetched_at: T0 });

    const { verifier, registry, logs } = makeVerifier({ jwksUri: server.url, dataDir });
    await verifier.start();
    await verifier.refreshNow();
    await expect(verifier.verify(await sign(rsa))).resolves.toMatchObject({ subject: 'user-1' });
    await expect(verifier.verify(await sign(ed))).resolves.toMatchObject({ subject: 'user-1' });
    expect(await metric(registry, 'edge_gateway_jwks_refresh_total', { issuer: ISSUER, result: 'error' })).toBe(1);
    expect(logs.some((l) => l.includes('JWKS refresh failed') && l.includes('"level":40'))).toBe(true);
  });

  it('ignores a cache file written for another jwks_uri', async () => {
    const server = await startJwksServer([rsa.publicJwk]);
    const dataDir = tempDir();
    (await readyVerifier({ jwksUri: server.url, dataDir })).verifier.close();
    const { verifier } = makeVerifier({ jwksUri: await deadUrl(), dataDir });
    await verifier.start();
    await expectUnavailable(verifier.verify(await sign(rsa)), 'no keys');
  });

  it('keeps the old keys when the server answers 500, garbage, a bad key set, nothing usable or too much', async () => {
    const server = await startJwksServer([rsa.publicJwk, ec.publicJwk]);
    const { verifier, registry, logs } = await readyVerifier({ jwksUri: server.url });
    const modes: Mode[] = ['500', 'garbage', 'not-a-key-set', 'bad-key', 'empty', 'oversized', 'down'];
    for (const [i, mode] of modes.entries()) {
      server.mode = mode;
      await verifier.refreshNow();
      await expect(verifier.verify(await sign(rsa, { claims: { jti: `after-${mode}` } })), mode).resolves.toMatchObject(
        { subject: 'user-1' },
      );
      expect(await metric(registry, 'edge_gateway_jwks_refresh_total', { issuer: ISSUER, result: 'error' }), mode).toBe(
        i + 1,
      );
    }
    expect(await metric(registry, 'edge_gateway_jwks_refresh_total', { issuer: ISSUER, result: 'ok' })).toBe(1);
    expect(logs.filter((l) => l.includes('JWKS refresh failed'))).toHaveLength(modes.length);
  });

  it('fails with KeysUnavailableError when there are no keys and the server is down', async () => {
    const { verifier, registry } = makeVerifier({ jwksUri: await deadUrl() });
    await verifier.start();
    await expectUnavailable(verifier.verify(await sign(ec)), 'no keys');
    expect(await metric(registry, 'edge_gateway_token_verifications_total', { result: 'unavailable' })).toBe(1);
  });

  it('fails closed when the cached keys are older than jwksMaxStaleS and the server is down', async () => {
    const server = await startJwksServer([ec.publicJwk]);
    const dataDir = tempDir();
    (await readyVerifier({ jwksUri: server.url, dataDir, jwksMaxStaleS: 3600 })).verifier.close();
    await server.close();

    const later = T0 + 3601 * 1000;
    const { verifier } = makeVerifier({ jwksUri: server.url, dataDir, jwksMaxStaleS: 3600, clockMs: later });
    await verifier.start();
    await expectUnavailable(verifier.verify(await sign(ec, { nowMs: later })), 'keys stale');
  });

  it('refreshes stale keys when the server is reachable', async () => {
    const server = await startJwksServer([ec.publicJwk]);
    const dataDir = tempDir();
    (await readyVerifier({ jwksUri: server.url, dataDir, jwksMaxStaleS: 3600 })).verifier.close();

    const later = T0 + 3601 * 1000;
    const { verifier } = makeVerifier({ jwksUri: server.url, dataDir, jwksMaxStaleS: 3600, clockMs: later });
    await verifier.start();
    await expect(verifier.verify(await sign(ec, { nowMs: later }))).resolves.toMatchObject({ subject: 'user-1' });
  });
});

describe('TokenVerifier: verified-token cache', () => {
  it('answers a repeated token from the cache', async () => {
    const { verifier, registry } = await readyVerifier();
    const token = await sign(ed);
    const first = await verifier.verify(token);
    const second = await verifier.verify(token);
    expect(second).toEqual(first);
    expect(await metric(registry, 'edge_gateway_token_cache_hits_total')).toBe(1);
    expect(await metric(registry, 'edge_gateway_token_cache_entries')).toBe(1);
    expect(await metric(registry, 'edge_gateway_token_verifications_total', { result: 'ok' })).toBe(2);
  });

  it('answers at once (cached) only for a token verified before, counted as verify counts it', async () => {
    const { verifier, registry } = await readyVerifier();
    const token = await sign(ed);
    expect(verifier.cached(token)).toBeNull();
    expect(await metric(registry, 'edge_gateway_token_verifications_total')).toBe(0);
    const first = await verifier.verify(token);
    expect(verifier.cached(token)).toEqual(first);
    expect(await metric(registry, 'edge_gateway_token_cache_hits_total')).toBe(1);
    expect(await metric(registry, 'edge_gateway_token_verifications_total', { result: 'ok' })).toBe(2);
    expect(() => verifier.cached('a'.repeat(8193))).toThrow(InvalidTokenError);
    expect(await metric(registry, 'edge_gateway_token_verifications_total', { result: 'invalid' })).toBe(1);
  });

  it('never answers from the cache for another token that ends like a cached one', async () => {
    const { verifier, registry } = await readyVerifier();
    const token = await sign(ed);
    await verifier.verify(token);
    // The cache is keyed by the token's tail (its signature's end): a token with another header and
    // payload but the very same signature shares that key, and must be checked, not looked up.
    const [, , signature] = token.split('.');
    const forged = `${base64url.encode(JSON.stringify({ alg: 'EdDSA', kid: ed.kid, typ: 'at+jwt' }))}.${base64url.encode(JSON.stringify({ iss: ISSUER, sub: 'admin', aud: AUDIENCE, iat: Math.floor(T0 / 1000), exp: Math.floor(T0 / 1000) + 600, scope: 'devices:write' }))}.${signature}`;
    expect(forged.slice(-43)).toBe(token.slice(-43));
    expect(verifier.cached(forged)).toBeNull();
    await expectInvalid(verifier.verify(forged), 'signature invalid');
    // The genuine token is still answered from the cache: a failed look-alike evicts nothing.
    expect(verifier.cached(token)).toMatchObject({ subject: 'user-1' });
    expect(await metric(registry, 'edge_gateway_token_cache_entries')).toBe(1);
  });

  it('holds a bounded amount of token text: the oldest tokens give way', async () => {
    const tokens = [
      await sign(ed, { claims: { jti: 'a' } }),
      await sign(ed, { claims: { jti: 'b' } }),
      await sign(ed, { claims: { jti: 'c' } }),
    ];
    const longest = Math.max(...tokens.map((t) => t.length));
    const { verifier, registry } = await readyVerifier({ cacheChars: 2 * longest + 10 });
    for (const token of tokens) await verifier.verify(token);
    expect(await metric(registry, 'edge_gateway_token_cache_entries')).toBe(2);
    expect(verifier.cached(tokens[0] as string)).toBeNull();
    expect(verifier.cached(tokens[1] as string)).toMatchObject({ tokenId: 'b' });
    expect(verifier.cached(tokens[2] as string)).toMatchObject({ tokenId: 'c' });
    // The one that gave way is verified again, and the next oldest gives way to it in turn.
    await verifier.verify(tokens[0] as string);
    expect(verifier.cached(tokens[1] as string)).toBeNull();
    expect(await metric(registry, 'edge_gateway_token_cache_entries')).toBe(2);
  });

  it('cached gives nothing past exp, and refuses a cached token whose iat is ahead of a clock that stepped back', async () => {
    const { verifier, clock } = await readyVerifier({ clockToleranceS: 0 });
    const token = await sign(ed, { claims: { exp: Math.floor(T0 / 1000) + 60 } });
    await verifier.verify(token);
    clock.ms -= 10_000;
    expect(() => verifier.cached(token)).toThrow('token issued in the future');
    clock.ms += 70_000;
    expect(verifier.cached(token)).toBeNull();
    await expectInvalid(verifier.verify(token), 'token expired');
  });

  it('never serves an entry past its exp', async () => {
    const { verifier, registry, clock } = await readyVerifier({ clockToleranceS: 0 });
    const token = await sign(ed, { claims: { exp: Math.floor(T0 / 1000) + 60 } });
    await verifier.verify(token);
    clock.ms += 60_000;
    await expectInvalid(verifier.verify(token), 'token expired');
    expect(await metric(registry, 'edge_gateway_token_cache_hits_total')).toBe(0);
    expect(await metric(registry, 'edge_gateway_token_cache_entries')).toBe(0);
  });

  it('forgets cached tokens when their issuer drops a key', async () => {
    const server = await startJwksServer([rsa.publicJwk, ec.publicJwk]);
    const { verifier, registry } = await readyVerifier({ jwksUri: server.url });
    const token = await sign(rsa);
    await verifier.verify(token);
    server.keys = [ec.publicJwk];
    await verifier.refreshNow();
    expect(await metric(registry, 'edge_gateway_token_cache_entries')).toBe(0);
    await expectInvalid(verifier.verify(token), 'unknown key');
  });

  it('does not serve cached tokens once the keys went stale', async () => {
    const server = await startJwksServer([ec.publicJwk]);
    const { verifier, clock } = await readyVerifier({ jwksUri: server.url, jwksMaxStaleS: 3600 });
    const token = await sign(ec, { claims: { exp: Math.floor(T0 / 1000) + 7200 } });
    await verifier.verify(token);
    await server.close();
    clock.ms += 3601 * 1000;
    await expectUnavailable(verifier.verify(token), 'keys stale');
  });
});

describe('LocalIssuer', () => {
  async function openIssuer(dataDir: string, issuer = 'https://gateway.local/'): Promise<LocalIssuer> {
    return LocalIssuer.open({
      dataDir,
      secretBox: SecretBox.openInDir(dataDir),
      issuer,
      audience: AUDIENCE,
      retiredKeyLifetimeS: 3600,
    });
  }

  it('issues tokens a TokenVerifier with it accepts', async () => {
    const dataDir = tempDir();
    const local = await openIssuer(dataDir);
    const { verifier } = makeVerifier({ localIssuer: local, dataDir });
    await verifier.start();
    const nowS = Math.floor(T0 / 1000);
    const token = await local.issue({ subject: 'admin', scope: 'devices:read users:write', ttlS: 300, nowS });
    const verified = await verifier.verify(token);
    expect(verified).toMatchObject({
      issuer: 'https://gateway.local/',
      subject: 'admin',
      expiresAt: (nowS + 300) * 1000,
      clientId: 'edge-gateway-cli',
    });
    expect([...verified.scopes].sort()).toEqual(['devices:read', 'users:write']);
    expect(verified.tokenId).toMatch(/^[0-9a-f-]{36}$/);

    const [headerPart] = token.split('.');
    const header = JSON.parse(new TextDecoder().decode(base64url.decode(headerPart as string))) as Record<
      string,
      unknown
    >;
    expect(header).toEqual({ alg: 'ES256', kid: local.publicJwks().keys[0]?.kid, typ: 'at+jwt' });

    const custom = await local.issue({ subject: 'svc', scope: '', ttlS: 60, clientId: 'backup-job', nowS });
    expect(await verifier.verify(custom)).toMatchObject({ clientId: 'backup-job', scopes: new Set() });
  });

  it('rejects tokens of another gateway that uses the same issuer name', async () => {
    const ours = await openIssuer(tempDir());
    const theirs = await openIssuer(tempDir());
    const { verifier } = makeVerifier({ localIssuer: ours });
    await verifier.start();
    const token = await theirs.issue({
      subject: 'admin',
      scope: 'users:write',
      ttlS: 300,
      nowS: Math.floor(T0 / 1000),
    });
    await expectInvalid(verifier.verify(token), 'unknown key');
  });

  it('publishes only public key parts, with a thumbprint kid', async () => {
    const local = await openIssuer(tempDir());
    const { keys } = local.publicJwks();
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(key).not.toHaveProperty('d');
    expect(key?.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('keeps the key file 0600 with the private key sealed', async () => {
    const dataDir = tempDir();
    await openIssuer(dataDir);
    const file = path.join(dataDir, 'local-issuer.key.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    const stored = JSON.parse(text) as { keys: Array<{ sealed_private_jwk: string }> };
    const sealed = stored.keys[0]?.sealed_private_jwk ?? '';
    const privateJwk = JSON.parse(SecretBox.openInDir(dataDir).open(sealed, 'local-issuer-key').toString('utf8')) as {
      d: string;
    };
    expect(privateJwk.d.length).toBeGreaterThan(20);
    expect(text).not.toContain(privateJwk.d);
    expect(text).not.toMatch(/"d"\s*:/);
  });

  it('yields the same key for concurrent opens of one data dir, and across restarts', async () => {
    const dataDir = tempDir();
    const opened = await Promise.all([openIssuer(dataDir), openIssuer(dataDir), openIssuer(dataDir)]);
    const kids = opened.map((o) => o.publicJwks().keys[0]?.kid);
    expect(new Set(kids).size).toBe(1);
    expect((await openIssuer(dataDir)).publicJwks().keys[0]?.kid).toBe(kids[0]);
  });

  it('refuses a remote issuer with the local issuer name', async () => {
    const local = await openIssuer(tempDir(), ISSUER);
    expect(() => makeVerifier({ jwksUri: main.url, localIssuer: local })).toThrow(/configured twice/);
  });
});
