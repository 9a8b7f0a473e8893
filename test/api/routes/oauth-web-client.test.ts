import { readFileSync } from 'node:fs';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import type { Response } from '../../support/https.js';
import { addUser, FormBrowser, fetchTrusting, formFields, pkcePair, registerClient } from '../../support/oauth.js';

// The gateway's own web app as a client of the local authorization server, over real
// HTTPS with oauth4webapi: the built-in public client gateway-web (code + PKCE S256, no consent
// page, a redirect URI on the host the browser used when that host is this box), the scopes a
// user's role allows, and token revocation (RFC 7009) ending the whole grant.

const CLIENT_ID = 'gateway-web';
const ADMIN = { username: 'ada', password: 'admin password one' };
const VIEWER = { username: 'vic', password: 'viewer password two' };
const ALL_ASKED = 'devices:read devices:write alerts:read alerts:write recordings:read';
const STATE = 'st 1&x=y/~'; // spaces and URL syntax: must come back exactly

let t: TestGateway;
let port: number;
let callback: string;
let as: oauth.AuthorizationServer;
let options: { [oauth.customFetch]: ReturnType<typeof fetchTrusting> };
const client: oauth.Client = { client_id: CLIENT_ID, token_endpoint_auth_method: 'none' };

beforeAll(async () => {
  t = await startTestGateway();
  port = Number(new URL(t.gw.apiUrl).port);
  callback = `https://127.0.0.1:${port}/signin/callback`;
  await addUser(t.gw.store, ADMIN.username, ADMIN.password, 'admin');
  await addUser(t.gw.store, VIEWER.username, VIEWER.password, 'viewer');
  options = { [oauth.customFetch]: fetchTrusting(readFileSync(t.gw.certFile)) };
  const issuer = new URL(t.gw.apiUrl);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options }),
  );
});
afterAll(async () => {
  await t?.stop();
});

function authorizePath(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, response_type: 'code', ...params }).toString()}`;
}

/** The sign-in as a browser does it: the login page, then the form; the answer (a 303 or a page). */
async function signIn(
  path: string,
  user: { username: string; password: string },
  host?: string,
): Promise<{ login: Response; answer: Response | null }> {
  const browser = new FormBrowser(t.request);
  const headers: Record<string, string> = host ? { host } : {};
  const login = await browser.get(path, headers);
  if (login.status !== 200) return { login, answer: null };
  return {
    login,
    answer: await browser.post('/oauth/authorize', { ...formFields(login.text), action: 'login', ...user }, headers),
  };
}

async function tokensFor(
  user: { username: string; password: string },
  scope = ALL_ASKED,
): Promise<oauth.TokenEndpointResponse> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const { answer } = await signIn(
    authorizePath({
      redirect_uri: callback,
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }),
    user,
  );
  expect(answer?.status, answer?.text).toBe(303);
  const params = oauth.validateAuthResponse(as, client, new URL(answer?.headers.location as string), state);
  return oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callback, verifier, options),
  );
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const reboot = (token: string) =>
  t.request('/v1/devices/dev_nonexistent/control', {
    method: 'POST',
    headers: bearer(token),
    body: { action: 'reboot' },
  });
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});
const revoke = (fields: Record<string, string>) => t.request('/oauth/revoke', form(fields));
const refresh = (refreshToken: string) =>
  t.request('/oauth/token', form({ grant_type: 'refresh_token', client_id: CLIENT_ID, refresh_token: refreshToken }));
const errorOf = (res: Response) => ({ status: res.status, error: (res.json() as { error?: string }).error });

describe('gateway-web: code + PKCE, no consent page', () => {
  it('signs in with oauth4webapi from a host of this box and goes straight back with code, state and iss', async () => {
    const { verifier, challenge } = pkcePair();
    const { login, answer } = await signIn(
      authorizePath({
        redirect_uri: callback,
        scope: ALL_ASKED,
        state: STATE,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      ADMIN,
    );
    expect(login.status).toBe(200);
    expect(login.text).toContain('Sign in to this gateway');
    // No consent: the sign-in form's answer is the redirect to the app, with the code.
    expect(answer?.status, answer?.text).toBe(303);
    const back = new URL(answer?.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(callback);
    expect(back.searchParams.get('state')).toBe(STATE);
    expect(back.searchParams.get('iss')).toBe(t.gw.apiUrl);
    // Nor is a sign-in session kept for a later consent: there is none to give.
    expect(
      (answer?.headers['set-cookie'] ?? []).filter(
        (c) => c.startsWith('__Host-eg-oauth-session=') && !/Max-Age=0/i.test(c),
      ),
    ).toEqual([]);

    const params = oauth.validateAuthResponse(as, client, back, STATE);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callback, verifier, options),
    );
    expect(tokens.scope).toBe('alerts:read alerts:write devices:read devices:write recordings:read');
    expect(typeof tokens.refresh_token).toBe('string');
    expect((await t.request('/v1/devices', { headers: bearer(tokens.access_token) })).status).toBe(200);

    // The refresh token rotates.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, options),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe(tokens.scope);
  });

  it('takes localhost as well: the redirect URI follows the Host the browser used', async () => {
    const local = `https://localhost:${port}/signin/callback`;
    const { challenge } = pkcePair();
    const { answer } = await signIn(
      authorizePath({ redirect_uri: local, state: 's', code_challenge: challenge, code_challenge_method: 'S256' }),
      ADMIN,
      `localhost:${port}`,
    );
    expect(answer?.status, answer?.text).toBe(303);
    expect(answer?.headers.location).toMatch(new RegExp(`^https://localhost:${port}/signin/callback\\?code=`));
  });

  it('gives an admin every scope when none is asked for, a viewer the read scopes', async () => {
    for (const [user, expected] of [
      [
        ADMIN,
        'alerts:read alerts:write devices:read devices:write recordings:read recordings:write users:read users:write',
      ],
      [VIEWER, 'alerts:read devices:read recordings:read'],
    ] as const) {
      const verifier = oauth.generateRandomCodeVerifier();
      const { answer } = await signIn(
        authorizePath({
          redirect_uri: callback,
          state: 'x',
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        }),
        user,
      );
      const code = new URL(answer?.headers.location as string).searchParams.get('code') as string;
      const res = await t.request(
        '/oauth/token',
        form({
          grant_type: 'authorization_code',
          client_id: CLIENT_ID,
          code,
          redirect_uri: callback,
          code_verifier: verifier,
        }),
      );
      expect((res.json() as { scope: string }).scope).toBe(expected);
    }
  });

  it.each([
    [
      'a foreign host',
      'evil.example',
      `https://evil.example:PORT/signin/callback`,
      /not a name or address of this gateway/,
    ],
    [
      'this host on another port',
      '127.0.0.1:1',
      'https://127.0.0.1:1/signin/callback',
      /not a name or address of this gateway/,
    ],
    [
      'a foreign redirect host',
      null,
      'https://evil.example:PORT/signin/callback',
      /redirect_uri must be https:\/\/127\.0\.0\.1:\d+\/signin\/callback/,
    ],
    ['another own host than the one used', null, 'https://localhost:PORT/signin/callback', /redirect_uri must be/],
    ['another path', null, 'https://127.0.0.1:PORT/signin/callback/x', /redirect_uri must be/],
    ['a path prefix', null, 'https://127.0.0.1:PORT/signin/callbackx', /redirect_uri must be/],
    ['another port', null, 'https://127.0.0.1:1/signin/callback', /redirect_uri must be/],
    ['http', null, 'http://127.0.0.1:PORT/signin/callback', /redirect_uri must be/],
    ['a query', null, 'https://127.0.0.1:PORT/signin/callback?next=https://evil.example', /redirect_uri must be/],
  ])('refuses %s with an error page, never a redirect', async (_name, hostTemplate, redirectTemplate, message) => {
    const { challenge } = pkcePair();
    const host = hostTemplate === null ? undefined : hostTemplate.replace('PORT', String(port));
    const path = authorizePath({
      redirect_uri: redirectTemplate.replace('PORT', String(port)),
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const page = await new FormBrowser(t.request).get(
      path,
      host ? { host: host.includes(':') ? host : `${host}:${port}` } : {},
    );
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toMatch(message);
    expect(page.text).not.toContain('type="password"');
  });

  it('refuses the form posted through a foreign Host too (no code is made, nothing is redirected)', async () => {
    const { challenge } = pkcePair();
    const path = authorizePath({
      redirect_uri: callback,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const browser = new FormBrowser(t.request);
    const login = await browser.get(path);
    const posted = await browser.post(
      '/oauth/authorize',
      { ...formFields(login.text), action: 'login', ...ADMIN },
      { host: `evil.example:${port}` },
    );
    expect(posted.status).toBe(400);
    expect(posted.headers.location).toBeUndefined();
  });

  it.each([
    ['plain PKCE', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }],
    ['no code_challenge', {}],
    ['a method without a challenge', { code_challenge_method: 'S256' }],
  ])('refuses %s: back to the app with invalid_request and the state', async (_name, pkce: Record<string, string>) => {
    const page = await new FormBrowser(t.request).get(authorizePath({ redirect_uri: callback, state: STATE, ...pkce }));
    expect(page.status).toBe(303);
    const back = new URL(page.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(callback);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('state')).toBe(STATE);
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('never shows a consent page nor accepts a consent answer for the web app', async () => {
    const { challenge } = pkcePair();
    const browser = new FormBrowser(t.request);
    const login = await browser.get(
      authorizePath({ redirect_uri: callback, state: 's', code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    const allow = await browser.post('/oauth/authorize', { ...formFields(login.text), action: 'allow' });
    expect(allow.status).toBe(400);
    expect(allow.headers.location).toBeUndefined();
  });
});

describe('roles', () => {
  it('grants a viewer only the read scopes it asked for, and the API refuses it control (403); an admin gets through', async () => {
    const viewer = await tokensFor(VIEWER);
    expect(viewer.scope).toBe('alerts:read devices:read recordings:read');
    expect((await t.request('/v1/devices', { headers: bearer(viewer.access_token) })).status).toBe(200);
    const refused = await reboot(viewer.access_token);
    expect(refused.status).toBe(403);
    // A refresh asking for devices:write gets nothing more (invalid_scope: the grant never had it).
    const wider = await t.request(
      '/oauth/token',
      form({
        grant_type: 'refresh_token',
        client_id: CLIENT_ID,
        refresh_token: viewer.refresh_token as string,
        scope: 'devices:write',
      }),
    );
    expect(errorOf(wider)).toEqual({ status: 400, error: 'invalid_scope' });

    const admin = await tokensFor(ADMIN);
    expect(admin.scope?.split(' ')).toContain('devices:write');
    // Past the scope check: the device does not exist.
    expect((await reboot(admin.access_token)).status).toBe(404);
  });

  it('sends a viewer who asked only for what the role forbids back with access_denied', async () => {
    const { challenge } = pkcePair();
    const { answer } = await signIn(
      authorizePath({
        redirect_uri: callback,
        scope: 'devices:write',
        state: STATE,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      VIEWER,
    );
    expect(answer?.status).toBe(303);
    const back = new URL(answer?.headers.location as string);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(STATE);
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('shows a viewer, on another app’s consent page, only what the role allows, and grants only that', async () => {
    const app = registerClient(t.gw.store, { public: true, redirectUris: ['http://127.0.0.1/cb'], name: 'Phone app' });
    const { verifier, challenge } = pkcePair();
    const browser = new FormBrowser(t.request);
    const query = {
      client_id: app.clientId,
      redirect_uri: 'http://127.0.0.1/cb',
      response_type: 'code',
      scope: 'devices:read devices:write',
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    const login = await browser.get(`/oauth/authorize?${new URLSearchParams(query).toString()}`);
    const signedIn = await browser.post('/oauth/authorize', { ...formFields(login.text), action: 'login', ...VIEWER });
    const consent = await browser.get(signedIn.headers.location as string);
    expect(consent.text).toContain('List and view device information');
    expect(consent.text).not.toContain('Control devices');
    const allowed = await browser.post('/oauth/authorize', { ...formFields(consent.text), action: 'allow' });
    const code = new URL(allowed.headers.location as string).searchParams.get('code') as string;
    const res = await t.request(
      '/oauth/token',
      form({
        grant_type: 'authorization_code',
        client_id: app.clientId,
        code,
        redirect_uri: 'http://127.0.0.1/cb',
        code_verifier: verifier,
      }),
    );
    expect((res.json() as { scope: string }).scope).toBe('devices:read');
  });
});

describe('token revocation (RFC 7009)', () => {
  it('is advertised in the metadata', () => {
    expect(as.revocation_endpoint).toBe(`${t.gw.apiUrl}/oauth/revoke`);
  });

  it("names the endpoints on the origin the client used when that is this box's, the issuer unchanged", async () => {
    const meta = async (host: string) =>
      (await t.request('/.well-known/oauth-authorization-server', { headers: { host } })).json() as Record<
        string,
        string
      >;
    const local = await meta(`localhost:${port}`);
    expect(local.issuer).toBe(t.gw.apiUrl);
    expect([local.authorization_endpoint, local.token_endpoint, local.revocation_endpoint, local.jwks_uri]).toEqual(
      ['/oauth/authorize', '/oauth/token', '/oauth/revoke', '/.well-known/jwks.json'].map(
        (p) => `https://localhost:${port}${p}`,
      ),
    );
    // A name that is not this box's is never echoed: the issuer's origin instead.
    const foreign = await meta(`evil.example:${port}`);
    expect(foreign.token_endpoint).toBe(`${t.gw.apiUrl}/oauth/token`);
    expect(foreign.issuer).toBe(t.gw.apiUrl);
  });

  it('revoking the refresh token ends the grant: the refresh token is refused, and its access token by the API', async () => {
    const tokens = await tokensFor(ADMIN);
    const before = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, options),
    );
    expect((await t.request('/v1/devices', { headers: bearer(before.access_token) })).status).toBe(200);

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), before.refresh_token as string, {
        ...options,
        additionalParameters: { token_type_hint: 'refresh_token' },
      }),
    );

    expect(errorOf(await refresh(before.refresh_token as string))).toEqual({ status: 400, error: 'invalid_grant' });
    for (const access of [tokens.access_token, before.access_token]) {
      const res = await t.request('/v1/devices', { headers: bearer(access) });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/invalid_token/);
    }
    // Again: nothing left to revoke, still 200.
    expect((await revoke({ token: before.refresh_token as string, client_id: CLIENT_ID })).status).toBe(200);
  });

  it('revoking the access token ends the grant too (sign-out from a page that holds only that)', async () => {
    const tokens = await tokensFor(VIEWER);
    const res = await revoke({ token: tokens.access_token, token_type_hint: 'access_token', client_id: CLIENT_ID });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await t.request('/v1/devices', { headers: bearer(tokens.access_token) })).status).toBe(401);
    expect(errorOf(await refresh(tokens.refresh_token as string))).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('answers 200 for a token it does not know, and revokes nothing else', async () => {
    const tokens = await tokensFor(ADMIN);
    for (const token of [
      'not-a-token',
      'x'.repeat(43),
      `${tokens.access_token.slice(0, -4)}AAAA`,
      await t.token('devices:read'),
    ]) {
      expect((await revoke({ token, client_id: CLIENT_ID })).status).toBe(200);
    }
    expect((await t.request('/v1/devices', { headers: bearer(tokens.access_token) })).status).toBe(200);
  });

  it('refuses bad requests and wrong clients, and then revokes nothing', async () => {
    const tokens = await tokensFor(ADMIN);
    const other = registerClient(t.gw.store, { public: true, redirectUris: ['http://127.0.0.1/cb'] });
    const cases: Array<[Record<string, string>, { status: number; error: string }]> = [
      [{ client_id: CLIENT_ID }, { status: 400, error: 'invalid_request' }],
      [{ token: tokens.refresh_token as string }, { status: 401, error: 'invalid_client' }],
      [
        { token: tokens.refresh_token as string, client_id: 'no-such-client' },
        { status: 401, error: 'invalid_client' },
      ],
      [
        { token: tokens.refresh_token as string, client_id: CLIENT_ID, client_secret: 'a secret' },
        { status: 401, error: 'invalid_client' },
      ],
      [
        { token: tokens.refresh_token as string, client_id: other.clientId },
        { status: 400, error: 'unauthorized_client' },
      ],
      [
        { token: tokens.access_token, client_id: other.clientId },
        { status: 400, error: 'unauthorized_client' },
      ],
    ];
    for (const [fields, expected] of cases)
      expect(errorOf(await revoke(fields)), JSON.stringify(fields)).toEqual(expected);
    const twice = await t.request('/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=${CLIENT_ID}&token=a&token=b`,
    });
    expect(errorOf(twice)).toEqual({ status: 400, error: 'invalid_request' });
    const unreadable = await t.request('/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'token=x',
    });
    expect(errorOf(unreadable).status).toBeGreaterThanOrEqual(400);
    expect(errorOf(unreadable).error).toBe('invalid_request');
    // The grant lives on.
    expect((await t.request('/v1/devices', { headers: bearer(tokens.access_token) })).status).toBe(200);
    expect((await refresh(tokens.refresh_token as string)).status).toBe(200);
  });

  it('takes a JSON body as the token endpoint does', async () => {
    const tokens = await tokensFor(ADMIN);
    expect(
      (
        await t.request('/oauth/revoke', {
          method: 'POST',
          body: { token: tokens.refresh_token, client_id: CLIENT_ID },
        })
      ).status,
    ).toBe(200);
    expect(errorOf(await refresh(tokens.refresh_token as string))).toEqual({ status: 400, error: 'invalid_grant' });
  });
});
