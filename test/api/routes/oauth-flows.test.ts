import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import type { Response } from '../../support/https.js';
import {
  addUser,
  authorizeInBrowser,
  FormBrowser,
  formFields,
  pkcePair,
  registerClient,
  type RegisteredClient,
} from '../../support/oauth.js';

// The local authorization server end to end over real HTTPS: the login and consent pages, the
// token endpoint, and the API taking (and, after a revocation, refusing) what it issued.

const USER = { username: 'alice', password: 'correct horse battery staple' };
const PUBLIC_REDIRECT = 'http://127.0.0.1/callback';
const APP_REDIRECT = 'https://app.example.com/cb';
const STATE = 'st-1 x&y=z/~'; // spaces and URL syntax: must come back exactly

/** The built CLI (the test setup builds dist/). */
const CLI = path.resolve(import.meta.dirname, '../../../dist/cli.js');

let t: TestGateway;
let pub: RegisteredClient;
let conf: RegisteredClient;
let other: RegisteredClient;
let service: RegisteredClient;
let codeOnly: RegisteredClient;

beforeAll(async () => {
  t = await startTestGateway();
  const store = t.gw.store;
  pub = registerClient(store, { public: true, redirectUris: [PUBLIC_REDIRECT], name: 'Phone app' });
  conf = registerClient(store, { redirectUris: [APP_REDIRECT], name: 'Web app' });
  other = registerClient(store, { redirectUris: [APP_REDIRECT] });
  service = registerClient(store, { redirectUris: [APP_REDIRECT], grants: ['client_credentials'] });
  codeOnly = registerClient(store, { redirectUris: [APP_REDIRECT], grants: ['authorization_code'] });
  await addUser(store, USER.username, USER.password);
});
afterAll(async () => {
  await t?.stop();
});

const token = (body: object | string, headers: Record<string, string> = {}): Promise<Response> =>
  t.request('/oauth/token', {
    method: 'POST',
    body,
    headers: typeof body === 'string' ? { 'content-type': 'application/x-www-form-urlencoded', ...headers } : headers,
  });

const basic = (c: RegisteredClient) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret as string)}`).toString('base64')}`,
});

async function codeFor(
  client: RegisteredClient,
  redirectUri: string,
  extra: Record<string, string> = {},
): Promise<URL> {
  const out = await authorizeInBrowser(
    new FormBrowser(t.request),
    { client_id: client.clientId, redirect_uri: redirectUri, response_type: 'code', state: STATE, ...extra },
    USER,
  );
  expect(out.location, out.last.text).not.toBeNull();
  return out.location as URL;
}

async function publicTokens(
  scope = 'devices:read alerts:read',
): Promise<{ access_token: string; refresh_token: string; scope: string }> {
  const { verifier, challenge } = pkcePair();
  const back = await codeFor(pub, PUBLIC_REDIRECT, { scope, code_challenge: challenge, code_challenge_method: 'S256' });
  const res = await token({
    grant_type: 'authorization_code',
    client_id: pub.clientId,
    code: back.searchParams.get('code'),
    redirect_uri: PUBLIC_REDIRECT,
    code_verifier: verifier,
  });
  expect(res.status, res.text).toBe(200);
  return res.json() as { access_token: string; refresh_token: string; scope: string };
}

const api = (accessToken: string) => t.request('/v1/devices', { headers: { authorization: `Bearer ${accessToken}` } });

function expectOAuthError(res: Response, status: number, error: string): void {
  expect({ status: res.status, error: (res.json() as { error: string }).error }, res.text).toEqual({ status, error });
  expect(Object.keys(res.json() as object).sort()).toEqual(['error', 'error_description']);
  expect(res.headers['cache-control']).toBe('no-store');
}

describe('metadata (RFC 8414) and keys', () => {
  it('publishes the issuer it signs with, its endpoints and what it supports', async () => {
    const res = await t.request('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    const meta = res.json() as Record<string, unknown>;
    expect(meta.issuer).toBe(t.gw.apiUrl);
    expect(meta).toMatchObject({
      authorization_endpoint: `${t.gw.apiUrl}/oauth/authorize`,
      token_endpoint: `${t.gw.apiUrl}/oauth/token`,
      jwks_uri: `${t.gw.apiUrl}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      authorization_response_iss_parameter_supported: true,
    });
    const jwks = (await t.request(new URL(meta.jwks_uri as string).pathname)).json() as {
      keys: Array<{ kid: string }>;
    };
    expect(jwks.keys.map((k) => k.kid)).toContain(decodeProtectedHeader((await publicTokens()).access_token).kid);
  });
});

describe('signing key rotation', () => {
  it('signs with the new key and keeps the old one published and trusted while its tokens live', async () => {
    const before = await publicTokens();
    const oldKid = decodeProtectedHeader(before.access_token).kid;
    await t.gw.localIssuer?.rotate();
    const after = await publicTokens();
    const newKid = decodeProtectedHeader(after.access_token).kid;
    expect(newKid).not.toBe(oldKid);
    const kids = ((await t.request('/.well-known/jwks.json')).json() as { keys: Array<{ kid: string }> }).keys.map(
      (k) => k.kid,
    );
    expect(kids).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect((await api(before.access_token)).status).toBe(200);
    expect((await api(after.access_token)).status).toBe(200);
  });
});

describe('authorization code with PKCE, public client', () => {
  it('logs in, asks consent, redirects with code, state and iss; the code buys a token response the API takes', async () => {
    const { verifier, challenge } = pkcePair();
    const back = await codeFor(pub, PUBLIC_REDIRECT, {
      scope: 'devices:read recordings:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(`${back.origin}${back.pathname}`).toBe(PUBLIC_REDIRECT);
    expect(back.searchParams.get('state')).toBe(STATE);
    expect(back.searchParams.get('iss')).toBe(t.gw.apiUrl);
    const code = back.searchParams.get('code') as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const res = await token({
      grant_type: 'authorization_code',
      client_id: pub.clientId,
      code,
      redirect_uri: PUBLIC_REDIRECT,
      code_verifier: verifier,
    });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'devices:read recordings:read' });

    // RFC 9068: typ at+jwt, ES256 with kid, and the claims it lists.
    const access = body.access_token as string;
    expect(decodeProtectedHeader(access)).toMatchObject({ typ: 'at+jwt', alg: 'ES256', kid: expect.any(String) });
    const claims = decodeJwt(access);
    expect(claims).toMatchObject({
      iss: t.gw.apiUrl,
      sub: USER.username,
      aud: 'edge-gateway',
      client_id: pub.clientId,
      scope: 'devices:read recordings:read',
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
    expect(claims.jti).toEqual(expect.any(String));
    expect((await api(access)).status).toBe(200);
    // The scope is what was granted, no more.
    expect((await t.request('/v1/alerts', { headers: { authorization: `Bearer ${access}` } })).status).toBe(403);
  });

  it.each([
    ['plain method', { code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }],
    ['no method (means plain)', { code_challenge: pkcePair().challenge }],
    ['no challenge at all (public client)', {}],
    ['method without challenge', { code_challenge_method: 'S256' }],
  ])(
    'refuses PKCE downgrades at /authorize with an invalid_request redirect carrying state: %s',
    async (_name, extra) => {
      const res = await new FormBrowser(t.request).get(
        `/oauth/authorize?${new URLSearchParams({ client_id: pub.clientId, redirect_uri: PUBLIC_REDIRECT, response_type: 'code', state: STATE, ...extra }).toString()}`,
      );
      expect(res.status).toBe(303);
      const to = new URL(res.headers.location as string);
      expect(to.searchParams.get('error')).toBe('invalid_request');
      expect(to.searchParams.get('state')).toBe(STATE);
    },
  );

  it.each([
    ['a wrong verifier', () => pkcePair().verifier],
    ['42 characters', () => 'a'.repeat(42)],
    ['129 characters', () => 'a'.repeat(129)],
    ['characters outside the set', () => `${'a'.repeat(42)}+`],
    ['no verifier', () => undefined],
  ])('refuses %s at /token with invalid_grant', async (_name, verifierOf) => {
    const { challenge } = pkcePair();
    const back = await codeFor(pub, PUBLIC_REDIRECT, { code_challenge: challenge, code_challenge_method: 'S256' });
    const verifier = verifierOf();
    const res = await token({
      grant_type: 'authorization_code',
      client_id: pub.clientId,
      code: back.searchParams.get('code'),
      redirect_uri: PUBLIC_REDIRECT,
      ...(verifier ? { code_verifier: verifier } : {}),
    });
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('lets a loopback redirect URI change only its port (RFC 8252 §7.3)', async () => {
    const { verifier, challenge } = pkcePair();
    const back = await codeFor(pub, 'http://127.0.0.1:51234/callback', {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(back.port).toBe('51234');
    const res = await token({
      grant_type: 'authorization_code',
      client_id: pub.clientId,
      code: back.searchParams.get('code'),
      redirect_uri: 'http://127.0.0.1:51234/callback',
      code_verifier: verifier,
    });
    expect(res.status).toBe(200);
  });
});

describe('authorization code, confidential client', () => {
  it('works with a form body and HTTP Basic, without PKCE', async () => {
    const back = await codeFor(conf, APP_REDIRECT, { scope: 'alerts:read' });
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: APP_REDIRECT,
    }).toString();
    const res = await token(form, basic(conf));
    expect(res.status, res.text).toBe(200);
    const body = res.json() as { access_token: string; scope: string };
    expect(body.scope).toBe('alerts:read');
    expect((await t.request('/v1/alerts', { headers: { authorization: `Bearer ${body.access_token}` } })).status).toBe(
      200,
    );
  });

  it('refuses a verifier for a code issued without a challenge (downgrade)', async () => {
    const back = await codeFor(conf, APP_REDIRECT);
    const res = await token({
      grant_type: 'authorization_code',
      client_id: conf.clientId,
      client_secret: conf.clientSecret,
      code: back.searchParams.get('code'),
      redirect_uri: APP_REDIRECT,
      code_verifier: pkcePair().verifier,
    });
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it("refuses a code presented by another client, and a redirect_uri other than the request's", async () => {
    const back = await codeFor(conf, APP_REDIRECT);
    const code = back.searchParams.get('code');
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        client_id: other.clientId,
        client_secret: other.clientSecret,
        code,
        redirect_uri: APP_REDIRECT,
      }),
      400,
      'invalid_grant',
    );
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        client_id: conf.clientId,
        client_secret: conf.clientSecret,
        code,
        redirect_uri: `${APP_REDIRECT}/x`,
      }),
      400,
      'invalid_grant',
    );
    // Neither attempt used the code up.
    expect(
      (
        await token({
          grant_type: 'authorization_code',
          client_id: conf.clientId,
          client_secret: conf.clientSecret,
          code,
          redirect_uri: APP_REDIRECT,
        })
      ).status,
    ).toBe(200);
  });

  it('treats a replayed code as stolen: invalid_grant, and what it gave is revoked (access and refresh tokens)', async () => {
    const back = await codeFor(conf, APP_REDIRECT);
    const exchange = {
      grant_type: 'authorization_code',
      client_id: conf.clientId,
      client_secret: conf.clientSecret,
      code: back.searchParams.get('code'),
      redirect_uri: APP_REDIRECT,
    };
    const first = await token(exchange);
    expect(first.status).toBe(200);
    const issued = first.json() as { access_token: string; refresh_token: string };
    expect((await api(issued.access_token)).status).toBe(200);
    expectOAuthError(await token(exchange), 400, 'invalid_grant');
    const refused = await api(issued.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('token revoked');
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        client_id: conf.clientId,
        client_secret: conf.clientSecret,
        refresh_token: issued.refresh_token,
      }),
      400,
      'invalid_grant',
    );
  });

  it('gives no refresh token to a client not registered for refresh_token, and refuses it the grant', async () => {
    const back = await codeFor(codeOnly, APP_REDIRECT);
    const res = await token({
      grant_type: 'authorization_code',
      client_id: codeOnly.clientId,
      client_secret: codeOnly.clientSecret,
      code: back.searchParams.get('code'),
      redirect_uri: APP_REDIRECT,
    });
    expect(res.status).toBe(200);
    expect(res.json()).not.toHaveProperty('refresh_token');
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        client_id: codeOnly.clientId,
        client_secret: codeOnly.clientSecret,
        refresh_token: 'x'.repeat(43),
      }),
      400,
      'unauthorized_client',
    );
  });
});

describe('refresh tokens', () => {
  it('rotate on use; an old one coming back revokes the whole grant', async () => {
    const first = await publicTokens();
    const refresh = (rt: string) => token({ grant_type: 'refresh_token', client_id: pub.clientId, refresh_token: rt });
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    const rotated = second.json() as { access_token: string; refresh_token: string; scope: string; expires_in: number };
    expect(rotated.refresh_token).not.toBe(first.refresh_token);
    expect(rotated).toMatchObject({ scope: first.scope, expires_in: 3600 });
    expect((await api(rotated.access_token)).status).toBe(200);

    expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant'); // reuse
    expectOAuthError(await refresh(rotated.refresh_token), 400, 'invalid_grant'); // the grant is gone
    expect((await api(rotated.access_token)).status).toBe(401);
    expect((await api(first.access_token)).status).toBe(401);
  });

  it("can narrow the scope, never widen it; the next refresh token keeps the grant's scope", async () => {
    const first = await publicTokens('devices:read alerts:read');
    const wider = await token({
      grant_type: 'refresh_token',
      client_id: pub.clientId,
      refresh_token: first.refresh_token,
      scope: 'devices:read devices:write',
    });
    expectOAuthError(wider, 400, 'invalid_scope');
    const narrow = await token({
      grant_type: 'refresh_token',
      client_id: pub.clientId,
      refresh_token: first.refresh_token,
      scope: 'alerts:read',
    });
    expect(narrow.status).toBe(200);
    const narrowed = narrow.json() as { access_token: string; refresh_token: string; scope: string };
    expect(narrowed.scope).toBe('alerts:read');
    expect(decodeJwt(narrowed.access_token).scope).toBe('alerts:read');
    const again = (
      await token({ grant_type: 'refresh_token', client_id: pub.clientId, refresh_token: narrowed.refresh_token })
    ).json() as { scope: string };
    expect(again.scope).toBe('alerts:read devices:read');
  });

  it('belong to their client: another client presenting one gets invalid_grant', async () => {
    const first = await publicTokens();
    expectOAuthError(
      await token({
        grant_type: 'refresh_token',
        client_id: other.clientId,
        client_secret: other.clientSecret,
        refresh_token: first.refresh_token,
      }),
      400,
      'invalid_grant',
    );
  });

  it('are stored only as keyed hashes: the database file holds neither the token nor its plain SHA-256', async () => {
    const { refresh_token: rt } = await publicTokens();
    const { createHash } = await import('node:crypto');
    const files = ['gateway.db', 'gateway.db-wal'].map((f) => path.join(t.dataDir, f));
    const bytes = Buffer.concat(
      files.map((f) => {
        try {
          return readFileSync(f);
        } catch {
          return Buffer.alloc(0);
        }
      }),
    );
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes(rt)).toBe(false);
    expect(bytes.includes(createHash('sha256').update(rt).digest('hex'))).toBe(false);
  });
});

describe('client credentials', () => {
  it('gives a confidential client an access token for itself, without a refresh token', async () => {
    const res = await token('grant_type=client_credentials&scope=devices%3Aread', basic(service));
    expect(res.status, res.text).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(body).not.toHaveProperty('refresh_token');
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'devices:read' });
    expect(decodeJwt(body.access_token as string)).toMatchObject({
      sub: service.clientId,
      client_id: service.clientId,
    });
    expect((await api(body.access_token as string)).status).toBe(200);
  });

  it.each([
    [
      'a public client',
      () => ({ grant_type: 'client_credentials', client_id: pub.clientId }),
      400,
      'unauthorized_client',
    ],
    [
      'a client not registered for it',
      () => ({ grant_type: 'client_credentials', client_id: conf.clientId, client_secret: conf.clientSecret }),
      400,
      'unauthorized_client',
    ],
    [
      'an unknown scope',
      () => ({
        grant_type: 'client_credentials',
        client_id: service.clientId,
        client_secret: service.clientSecret,
        scope: 'cameras:everything',
      }),
      400,
      'invalid_scope',
    ],
    [
      'a wrong secret',
      () => ({ grant_type: 'client_credentials', client_id: service.clientId, client_secret: 'wrong' }),
      401,
      'invalid_client',
    ],
    [
      'an unknown client',
      () => ({ grant_type: 'client_credentials', client_id: 'cli_nobody', client_secret: 'x' }),
      401,
      'invalid_client',
    ],
    ['no client authentication', () => ({ grant_type: 'client_credentials' }), 401, 'invalid_client'],
  ])('refuses %s', async (_name, body, status, error) => {
    expectOAuthError(await token(body()), status, error);
  });

  it('answers a failed HTTP Basic login with a Basic challenge', async () => {
    const res = await token('grant_type=client_credentials', {
      authorization: `Basic ${Buffer.from(`${service.clientId}:nope`).toString('base64')}`,
    });
    expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
  });
});

describe('malformed token requests', () => {
  it.each([
    ['no grant_type', 'client_id=x', 'invalid_request'],
    ['an unknown grant_type', 'grant_type=password&client_id=x', 'unsupported_grant_type'],
    [
      'a parameter given twice',
      'grant_type=authorization_code&code=a&code=b&redirect_uri=x&client_id=x',
      'invalid_request',
    ],
  ])('%s → %s', async (_name, form, error) => {
    expectOAuthError(await token(form), 400, error);
  });

  it('refuses a JSON body that names a parameter twice, as it refuses a repeated form field', async () => {
    const res = await t.request('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"grant_type":"client_credentials","client_id":"${service.clientId}","client_secret":"${service.clientSecret}","scope":"devices:read","scope":"devices:write"}`,
    });
    expectOAuthError(res, 400, 'invalid_request');
    expect((res.json() as { error_description: string }).error_description).toBe('scope is given more than once');
  });

  it('answers unreadable JSON and a body type it does not read with invalid_request', async () => {
    expectOAuthError(
      await t.request('/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"grant_type":',
      }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await t.request('/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'grant_type=client_credentials',
      }),
      400,
      'invalid_request',
    );
  });
});

describe('the authorization pages', () => {
  const query = (over: Record<string, string>) =>
    `/oauth/authorize?${new URLSearchParams({ client_id: conf.clientId, redirect_uri: APP_REDIRECT, response_type: 'code', state: STATE, ...over }).toString()}`;

  it.each([
    ['an unknown client_id', { client_id: 'cli_unknown' }],
    ['a suffix', { redirect_uri: `${APP_REDIRECT}x` }],
    ['a subdomain', { redirect_uri: 'https://evil.app.example.com/cb' }],
    ['userinfo @', { redirect_uri: 'https://app.example.com@evil.example/cb' }],
    ['a fragment', { redirect_uri: `${APP_REDIRECT}#x` }],
    ['another case', { redirect_uri: 'https://APP.example.com/cb' }],
    ['http for https', { redirect_uri: 'http://app.example.com/cb' }],
    ['an unregistered loopback address', { redirect_uri: 'http://127.0.0.1:5555/cb' }],
    ['localhost for a loopback literal', { client_id: 'PUB', redirect_uri: 'http://localhost:5555/callback' }],
    ['another path on the loopback address', { client_id: 'PUB', redirect_uri: 'http://127.0.0.1:5555/other' }],
    ['no redirect_uri', { redirect_uri: '' }],
  ])('shows an error page and never redirects for %s', async (_name, over: Record<string, string>) => {
    const fixed = { ...over, ...(over.client_id === 'PUB' ? { client_id: pub.clientId } : {}) };
    const res = await new FormBrowser(t.request).get(query(fixed));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).not.toContain('evil');
  });

  it('shows an error page for a duplicated parameter', async () => {
    const res = await new FormBrowser(t.request).get(`${query({})}&state=second`);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });

  it.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['an unknown scope', { scope: 'devices:read cameras:all' }, 'invalid_scope'],
  ])('redirects %s as an error with the state unchanged', async (_name, over, error) => {
    const res = await new FormBrowser(t.request).get(query(over));
    expect(res.status).toBe(303);
    const to = new URL(res.headers.location as string);
    expect(`${to.origin}${to.pathname}`).toBe(APP_REDIRECT);
    expect({
      error: to.searchParams.get('error'),
      state: to.searchParams.get('state'),
      iss: to.searchParams.get('iss'),
    }).toEqual({ error, state: STATE, iss: t.gw.apiUrl });
  });

  it('redirects unauthorized_client for a client not registered for the code grant', async () => {
    const res = await new FormBrowser(t.request).get(query({ client_id: service.clientId }));
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('unauthorized_client');
  });

  it('blocks framing and caching, and answers each POST with a 303', async () => {
    const browser = new FormBrowser(t.request);
    const login = await browser.get(query({}));
    expect(login.status).toBe(200);
    expect(login.headers['x-frame-options']).toBe('DENY');
    expect(login.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(login.headers['cache-control']).toBe('no-store');
    // As the web app's pages say it (test/api/web-app.test.ts): when the two differ, chromium
    // starts a new renderer process for the app on the way back from signing in.
    expect(login.headers['origin-agent-cluster']).toBe('?1');
    const posted = await browser.post('/oauth/authorize', { ...formFields(login.text), action: 'login', ...USER });
    expect(posted.status).toBe(303);
    expect(posted.headers.location).toMatch(/^\/oauth\/authorize\?/);
  });

  it('answers a denial with access_denied and the state', async () => {
    const out = await authorizeInBrowser(
      new FormBrowser(t.request),
      { client_id: conf.clientId, redirect_uri: APP_REDIRECT, response_type: 'code', state: STATE },
      USER,
      'deny',
    );
    expect(out.location?.searchParams.get('error')).toBe('access_denied');
    expect(out.location?.searchParams.get('state')).toBe(STATE);
    expect(out.location?.searchParams.get('code')).toBeNull();
  });

  it('refuses a wrong password with the login page again', async () => {
    const browser = new FormBrowser(t.request);
    const login = await browser.get(query({}));
    const res = await browser.post('/oauth/authorize', {
      ...formFields(login.text),
      action: 'login',
      username: USER.username,
      password: 'wrong',
    });
    expect(res.status).toBe(401);
    expect(res.text).toContain('Wrong username or password');
    expect(res.headers['set-cookie'] ?? []).not.toEqual(expect.arrayContaining([expect.stringContaining('session')]));
  });

  it('refuses forms without the CSRF cookie, with another token, or from another origin', async () => {
    const browser = new FormBrowser(t.request);
    const login = await browser.get(query({}));
    const fields = { ...formFields(login.text), action: 'login', ...USER };
    expect((await new FormBrowser(t.request).post('/oauth/authorize', fields)).status).toBe(403); // no cookie
    expect((await browser.post('/oauth/authorize', { ...fields, csrf: 'A'.repeat(43) })).status).toBe(403);
    expect((await browser.post('/oauth/authorize', fields, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await browser.post('/oauth/authorize', fields)).status).toBe(303);
  });

  it('asks for the password again for a consent without a sign-in', async () => {
    const browser = new FormBrowser(t.request);
    const login = await browser.get(query({}));
    const res = await browser.post('/oauth/authorize', { ...formFields(login.text), action: 'allow' });
    expect(res.status).toBe(401);
    expect(res.headers.location).toBeUndefined();
  });

  it('escapes what it shows: a client name with markup stays text', async () => {
    const hostile = registerClient(t.gw.store, {
      public: true,
      redirectUris: [PUBLIC_REDIRECT],
      name: '<script>alert(1)</script>',
    });
    const { challenge } = pkcePair();
    const res = await new FormBrowser(t.request).get(
      `/oauth/authorize?${new URLSearchParams({ client_id: hostile.clientId, redirect_uri: PUBLIC_REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state: '"><img src=x>' }).toString()}`,
    );
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('<script>');
    expect(res.text).not.toContain('"><img');
    expect(res.text).toContain('&lt;script&gt;');
  });
});

describe('removing a user', () => {
  it('revokes what they granted: their tokens stop working at once, and a code they approved buys nothing', async () => {
    await addUser(t.gw.store, 'bob', 'bob password 1');
    const { verifier, challenge } = pkcePair();
    const out = await authorizeInBrowser(
      new FormBrowser(t.request),
      {
        client_id: pub.clientId,
        redirect_uri: PUBLIC_REDIRECT,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      { username: 'bob', password: 'bob password 1' },
    );
    const res = await token({
      grant_type: 'authorization_code',
      client_id: pub.clientId,
      code: out.location?.searchParams.get('code'),
      redirect_uri: PUBLIC_REDIRECT,
      code_verifier: verifier,
    });
    const issued = res.json() as { access_token: string; refresh_token: string };
    expect((await api(issued.access_token)).status).toBe(200);
    // A code bob approved but the app has not redeemed yet.
    const pending = pkcePair();
    const approved = await authorizeInBrowser(
      new FormBrowser(t.request),
      {
        client_id: pub.clientId,
        redirect_uri: PUBLIC_REDIRECT,
        response_type: 'code',
        code_challenge: pending.challenge,
        code_challenge_method: 'S256',
      },
      { username: 'bob', password: 'bob password 1' },
    );
    expect(t.gw.store.deleteLocalUser('bob')).toBe(true);
    expect((await api(issued.access_token)).status).toBe(401);
    expectOAuthError(
      await token({ grant_type: 'refresh_token', client_id: pub.clientId, refresh_token: issued.refresh_token }),
      400,
      'invalid_grant',
    );
    expectOAuthError(
      await token({
        grant_type: 'authorization_code',
        client_id: pub.clientId,
        code: approved.location?.searchParams.get('code'),
        redirect_uri: PUBLIC_REDIRECT,
        code_verifier: pending.verifier,
      }),
      400,
      'invalid_grant',
    );
  });
});

describe('removing a client with the management command, from its own process', () => {
  it("refuses the client's token from the moment `edge-gateway clients remove` returns, though the answer was memoised", async () => {
    const removed = registerClient(t.gw.store, { redirectUris: [APP_REDIRECT], grants: ['client_credentials'] });
    const res = await token('grant_type=client_credentials&scope=devices%3Aread', basic(removed));
    const accessToken = (res.json() as { access_token: string }).access_token;
    // Twice, so the daemon has memoised "not revoked" for this token.
    expect((await api(accessToken)).status).toBe(200);
    expect((await api(accessToken)).status).toBe(200);
    const config = path.join(t.dataDir, 'cli.yaml');
    writeFileSync(config, `gateway:\n  data_dir: ${t.dataDir}\n`);
    await promisify(execFile)(
      process.execPath,
      [CLI, 'clients', 'remove', '--config', config, '--client-id', removed.clientId],
      { timeout: 30_000 },
    );
    const after = await api(accessToken);
    expect(after.status).toBe(401);
    expect(after.json()).toMatchObject({ error: 'invalid_token' });
  });
});

describe("with the authorization server's clock in hand", () => {
  let clock = Date.now();
  let g: TestGateway;
  let client: RegisteredClient;
  beforeAll(async () => {
    g = await startTestGateway({ auth: { local: { refresh_ttl_s: 600 } } }, { oauthClock: () => clock });
    client = registerClient(g.gw.store, { redirectUris: [APP_REDIRECT] });
    await addUser(g.gw.store, USER.username, USER.password);
  });
  afterAll(async () => {
    await g?.stop();
  });
  const authorizePath = () =>
    `/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: APP_REDIRECT, response_type: 'code' }).toString()}`;

  it('refuses a code after its 60 seconds', async () => {
    const out = await authorizeInBrowser(
      new FormBrowser(g.request),
      { client_id: client.clientId, redirect_uri: APP_REDIRECT, response_type: 'code' },
      USER,
    );
    const exchange = {
      grant_type: 'authorization_code',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      code: out.location?.searchParams.get('code'),
      redirect_uri: APP_REDIRECT,
    };
    clock += 60_001;
    const res = await g.request('/oauth/token', { method: 'POST', body: exchange });
    expect(res.status).toBe(400);
    expect((res.json() as { error: string }).error).toBe('invalid_grant');
  });

  it('refuses a refresh token after auth.local.refresh_ttl_s, counted from its own issue', async () => {
    const out = await authorizeInBrowser(
      new FormBrowser(g.request),
      { client_id: client.clientId, redirect_uri: APP_REDIRECT, response_type: 'code' },
      USER,
    );
    const first = await g.request('/oauth/token', {
      method: 'POST',
      body: {
        grant_type: 'authorization_code',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        code: out.location?.searchParams.get('code'),
        redirect_uri: APP_REDIRECT,
      },
    });
    const refresh = (rt: string) =>
      g.request('/oauth/token', {
        method: 'POST',
        body: {
          grant_type: 'refresh_token',
          client_id: client.clientId,
          client_secret: client.clientSecret,
          refresh_token: rt,
        },
      });
    clock += 599_000;
    const second = await refresh((first.json() as { refresh_token: string }).refresh_token);
    expect(second.status).toBe(200); // 599 s old: still good, and rotated into a new one
    clock += 599_000;
    const third = await refresh((second.json() as { refresh_token: string }).refresh_token);
    expect(third.status).toBe(200); // the new one counts from its own issue
    clock += 600_001;
    const late = await refresh((third.json() as { refresh_token: string }).refresh_token);
    expect(late.status).toBe(400);
    expect((late.json() as { error: string }).error).toBe('invalid_grant');
  });

  it('locks sign-ins after five failures, with Retry-After, even for the right password, until the lock ends', async () => {
    const browser = new FormBrowser(g.request);
    const fields = formFields((await browser.get(authorizePath())).text);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (
          await browser.post('/oauth/authorize', {
            ...fields,
            action: 'login',
            username: USER.username,
            password: `wrong ${i}`,
          })
        ).status,
      );
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
    const locked = await browser.post('/oauth/authorize', { ...fields, action: 'login', ...USER });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(locked.text).toContain('Too many failed sign-ins');
    clock += Number(locked.headers['retry-after']) * 1000;
    expect((await browser.post('/oauth/authorize', { ...fields, action: 'login', ...USER })).status).toBe(303);
  });

  it('answers server_error (500, JSON, no-store) when the gateway itself fails, and says nothing more', async () => {
    // Last in this block: the database goes away under the running server.
    g.gw.store.close();
    const res = await g.request('/oauth/token', {
      method: 'POST',
      body: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret },
    });
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({
      error: 'server_error',
      error_description: 'the gateway failed to answer; see its log',
    });
    expect(res.headers['cache-control']).toBe('no-store');
  });
});
