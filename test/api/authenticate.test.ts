import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { TestIssuer } from '../support/issuer.js';

// Token verification through real HTTPS requests to the started gateway, with a real test
// authorization server publishing its JWKS on loopback.

let issuer: TestIssuer;
let t: TestGateway;
const keys = new Map<string, Awaited<ReturnType<TestIssuer['addKey']>>>();
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

beforeAll(async () => {
  issuer = new TestIssuer();
  for (const [alg, kid] of [
    ['RS256', 'rsa-1'],
    ['ES256', 'ec-1'],
    ['EdDSA', 'ed-1'],
  ] as const)
    keys.set(kid, await issuer.addKey(alg, kid));
  await issuer.listen();
  t = await startTestGateway({
    auth: { issuers: [{ issuer: issuer.issuer, jwks_uri: issuer.jwksUri, audience: issuer.audience }] },
  });
});
afterAll(async () => {
  await t.stop();
  await issuer.close();
});

const get = (token: string | null, extra: Record<string, string> = {}, path = '/v1/devices') =>
  t.request(path, { headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...extra } });

async function expectInvalid(token: string) {
  const res = await get(token);
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toMatch(
    /^Bearer realm="edge-gateway", error="invalid_token", error_description="[^"]+"$/,
  );
  expect((res.json() as { error: string }).error).toBe('invalid_token');
  return res;
}

describe('tokens from a configured issuer', () => {
  it.each(['rsa-1', 'ec-1', 'ed-1'])('accepts a valid at+jwt signed with %s', async (kid) => {
    const res = await get(await issuer.sign({ key: keys.get(kid) }));
    expect(res.status).toBe(200);
  });

  it('accepts an audience array that contains ours', async () => {
    expect((await get(await issuer.sign({ claims: { aud: ['other', issuer.audience] } }))).status).toBe(200);
  });

  it('rejects alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64({ iss: issuer.issuer, aud: issuer.audience, sub: 'x', iat: now, exp: now + 60, scope: 'devices:read' })}.`;
    await expectInvalid(token);
  });

  it('rejects HS256 signed with the public key as the HMAC secret', async () => {
    const rsa = keys.get('rsa-1')!;
    const { createPublicKey } = await import('node:crypto');
    const pem = createPublicKey({ key: rsa.publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ scope: 'devices:read' })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1', typ: 'at+jwt' })
      .setIssuer(issuer.issuer)
      .setAudience(issuer.audience)
      .setSubject('attacker')
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(new TextEncoder().encode(String(pem)));
    await expectInvalid(token);
  });

  it('rejects an unknown kid', async () => {
    const rogue = await issuer.addKey('RS256', 'rogue', false);
    await expectInvalid(await issuer.sign({ key: rogue }));
  });

  it('rejects expired tokens and tokens not yet valid, allowing the clock tolerance', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectInvalid(await issuer.sign({ claims: { iat: now - 600, exp: now - 120 } }));
    await expectInvalid(await issuer.sign({ claims: { nbf: now + 600 } }));
    expect((await get(await issuer.sign({ claims: { iat: now - 600, exp: now - 10 } }))).status).toBe(200);
  });

  it('rejects a token issued in the future beyond the clock tolerance (30 s), and takes one within it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const res = await expectInvalid(await issuer.sign({ claims: { iat: now + 600, exp: now + 1200 } }));
    expect(res.headers['www-authenticate']).toContain('error_description="token issued in the future"');
    await expectInvalid(
      await issuer.sign({ claims: { iat: now + 10 * 365 * 86_400, exp: now + 10 * 365 * 86_400 + 600 } }),
    );
    expect((await get(await issuer.sign({ claims: { iat: now + 5, exp: now + 600 } }))).status).toBe(200);
  });

  it('rejects a wrong issuer, a foreign audience and typ JWT', async () => {
    await expectInvalid(await issuer.sign({ claims: { iss: 'https://evil.example/' } }));
    await expectInvalid(await issuer.sign({ claims: { iss: issuer.issuer.replace(/\/$/, '') } }));
    await expectInvalid(await issuer.sign({ claims: { aud: 'someone-else' } }));
    await expectInvalid(await issuer.sign({ header: { typ: 'JWT' } }));
  });

  it.each(['iss', 'exp', 'aud', 'sub', 'iat'])('rejects a token without %s', async (claim) => {
    await expectInvalid(await issuer.sign({ claims: { [claim]: undefined } }));
  });

  it('rejects 2- and 4-segment tokens and oversized ones', async () => {
    const good = await issuer.sign();
    const [h, p, s] = good.split('.');
    await expectInvalid(`${h}.${p}`);
    await expectInvalid(`${h}.${p}.${s}.${s}`);
    await expectInvalid(`${h}.${p}.${'A'.repeat(9000)}`);
  });

  it('matches scopes as whole names', async () => {
    for (const scope of [
      'devices:readx',
      'devices',
      'devices:rea',
      'xdevices:read',
      'devices:read:all',
      'DEVICES:READ',
      'devices:write',
    ]) {
      const res = await get(await issuer.sign({ scope }));
      expect(res.status, scope).toBe(403);
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="edge-gateway", error="insufficient_scope", scope="devices:read"',
      );
      expect((res.json() as { error: string }).error).toBe('insufficient_scope');
    }
    expect((await get(await issuer.sign({ scope: 'alerts:read devices:read' }))).status).toBe(200);
  });
});

describe('credentials in the request', () => {
  it('answers 401 with a bare challenge for no or foreign credentials', async () => {
    for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Digest username="x"' }]) {
      const res = await t.request('/v1/devices', { headers });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="edge-gateway"');
      expect(res.json()).toEqual({ error: 'unauthorized', error_description: 'a bearer access token is required' });
    }
  });

  it('answers 400 invalid_request for malformed headers, duplicates and tokens in the URL', async () => {
    const token = await issuer.sign();
    // Accepted once, so in the verifier's cache: the same token with a character more is still malformed.
    expect((await t.request('/v1/devices', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const cases: Array<[Record<string, string | string[]>, string]> = [
      [{ authorization: 'Bearer' }, '/v1/devices'],
      [{ authorization: 'Bearer a b' }, '/v1/devices'],
      [{ authorization: 'Bearer tok"en' }, '/v1/devices'],
      [{ authorization: `Bearer ${token}"` }, '/v1/devices'],
      [{ authorization: `Bearer ${token} ${token}` }, '/v1/devices'],
      // Over the verifier's length limit too (401 invalid_token): malformed is said first, as ever.
      [{ authorization: `Bearer ${'a'.repeat(9000)}"` }, '/v1/devices'],
      [{ authorization: [`Bearer ${token}`, `Bearer ${token}`] }, '/v1/devices'],
      [{}, `/v1/devices?access_token=${token}`],
      [{ authorization: `Bearer ${token}` }, `/v1/devices?access_token=${token}`],
    ];
    for (const [headers, path] of cases) {
      const res = await t.request(path, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="edge-gateway", error="invalid_request"/);
      expect((res.json() as { error: string }).error).toBe('invalid_request');
    }
  });

  it('takes the scheme case-insensitively', async () => {
    expect(
      (await t.request('/v1/devices', { headers: { authorization: `bearer ${await issuer.sign()}` } })).status,
    ).toBe(200);
  });

  it('checks credentials before parameters, so strangers learn nothing from errors', async () => {
    const res = await t.request('/v1/devices?limit=9999');
    expect(res.status).toBe(401);
  });
});

describe('JWKS availability', () => {
  it('verifies with cached keys when the JWKS server is down at start', async () => {
    const own = new TestIssuer('https://offline.test/', 'gw');
    const key = await own.addKey('ES256', 'k1');
    await own.listen();
    const dataDir = tempDir();
    const cfg = { auth: { issuers: [{ issuer: own.issuer, jwks_uri: own.jwksUri, audience: own.audience }] } };
    const first = await startTestGateway(cfg, { dataDir, keepDataDir: true });
    const token = await own.sign({ key });
    expect((await first.request('/v1/devices', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    await first.stop();
    await own.close(); // the authorization server is gone, and so is the network

    const second = await startTestGateway(cfg, { dataDir });
    try {
      const fresh = await own.sign({ key });
      expect((await second.request('/v1/devices', { headers: { authorization: `Bearer ${fresh}` } })).status).toBe(200);
    } finally {
      await second.stop();
    }
  });

  it('keeps the old keys when the JWKS server answers 500 or garbage', async () => {
    const own = new TestIssuer('https://flaky.test/', 'gw');
    const key = await own.addKey('ES256', 'k1');
    await own.listen();
    const g = await startTestGateway({
      auth: { jwks_cooldown_s: 1, issuers: [{ issuer: own.issuer, jwks_uri: own.jwksUri, audience: own.audience }] },
    });
    const call = async (token: string) => g.request('/v1/devices', { headers: { authorization: `Bearer ${token}` } });
    try {
      expect((await call(await own.sign({ key }))).status).toBe(200);
      for (const mode of ['error500', 'garbage'] as const) {
        own.mode = mode;
        await new Promise((r) => setTimeout(r, 1100)); // let the 1 s refetch cooldown pass
        const before = own.fetches;
        const rotated = await own.addKey('ES256', `rotated-${mode}`, false);
        expect((await call(await own.sign({ key: rotated }))).status).toBe(401); // unknown kid → refetch, which fails
        expect(own.fetches, `${mode}: a refetch was made`).toBeGreaterThan(before);
        expect((await call(await own.sign({ key }))).status, `${mode}: old key still trusted`).toBe(200);
      }
      const metrics = await g.metrics();
      expect(metrics).toMatch(/edge_gateway_jwks_refresh_total\{[^}]*result="error"[^}]*\} [1-9]/);
    } finally {
      await g.stop();
      await own.close();
    }
  });

  it('answers 503 when an issuer has no keys at all', async () => {
    const dead = new TestIssuer('https://dead.test/', 'gw');
    const key = await dead.addKey('ES256');
    await dead.listen();
    const uri = dead.jwksUri;
    await dead.close();
    const logLines: string[] = [];
    const g = await startTestGateway(
      { auth: { issuers: [{ issuer: dead.issuer, jwks_uri: uri, audience: dead.audience }] } },
      { logLines },
    );
    try {
      const res = await g.request('/v1/devices', { headers: { authorization: `Bearer ${await dead.sign({ key })}` } });
      expect(res.status).toBe(503);
      expect((res.json() as { error: string }).error).toBe('temporarily_unavailable');
      // the local issuer is unaffected
      expect((await g.request('/v1/devices', { headers: await g.auth('devices:read') })).status).toBe(200);
      // Anyone can send such tokens at will: the log gets the first, /metrics counts them all.
      const FLOOD = 40;
      const forged = await dead.sign({ key });
      for (let i = 0; i < FLOOD; i++)
        expect((await g.request('/v1/devices', { headers: { authorization: `Bearer ${forged}` } })).status).toBe(503);
      const lines = logLines
        .map((l) => JSON.parse(l) as { msg: string; status?: number })
        .filter((l) => l.msg.startsWith('request answered with a server-side error'));
      expect(lines).toEqual([
        expect.objectContaining({ msg: 'request answered with a server-side error', status: 503 }),
      ]);
      expect(await g.metrics()).toMatch(
        new RegExp(
          `^edge_gateway_http_requests_total\\{method="GET",route="/v1/devices",status="503"\\} ${FLOOD + 1}$`,
          'm',
        ),
      );
    } finally {
      await g.stop();
    }
  });
});
