import { readFileSync } from 'node:fs';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { addUser, FormBrowser, fetchTrusting, formFields, registerClient } from '../../support/oauth.js';

// A standard client library, oauth4webapi, against the local authorization server: discovery
// (RFC 8414, issuer checked), the code flow with PKCE and RFC 9207's iss checked, the refresh, and
// its error handling. It is strict where our own tests could agree with our own mistakes.

const REDIRECT = 'http://127.0.0.1/callback';
const USER = { username: 'carol', password: 'interop password' };

let t: TestGateway;
let as: oauth.AuthorizationServer;
let options: { [oauth.customFetch]: ReturnType<typeof fetchTrusting> };

beforeAll(async () => {
  t = await startTestGateway();
  await addUser(t.gw.store, USER.username, USER.password);
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

/** What a user's browser does between the authorization URL and the redirect: sign in and allow. */
async function signInAndAllow(authorizationUrl: URL): Promise<URL> {
  const browser = new FormBrowser(t.request);
  const login = await browser.get(`${authorizationUrl.pathname}${authorizationUrl.search}`);
  expect(login.status, login.text).toBe(200);
  const afterLogin = await browser.post('/oauth/authorize', { ...formFields(login.text), action: 'login', ...USER });
  const consent = await browser.get(afterLogin.headers.location as string);
  const decided = await browser.post('/oauth/authorize', { ...formFields(consent.text), action: 'allow' });
  expect(decided.status).toBe(303);
  return new URL(decided.headers.location as string);
}

async function authorizationUrl(client: oauth.Client, state: string, codeVerifier?: string): Promise<URL> {
  const url = new URL(as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    scope: 'devices:read alerts:read',
    state,
    ...(codeVerifier
      ? { code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256' }
      : {}),
  }).toString();
  return url;
}

describe('oauth4webapi against the local authorization server', () => {
  it('discovers the server by its issuer URL', () => {
    expect(as.issuer).toBe(t.gw.apiUrl);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('completes the code flow with PKCE for a public client, calls the API, and refreshes', async () => {
    const registered = registerClient(t.gw.store, { public: true, redirectUris: [REDIRECT] });
    const client: oauth.Client = { client_id: registered.clientId, token_endpoint_auth_method: 'none' };
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await signInAndAllow(await authorizationUrl(client, state, codeVerifier));

    // Checks state and RFC 9207's iss against the discovered issuer.
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, codeVerifier, options),
    );
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('alerts:read devices:read');
    expect(typeof tokens.refresh_token).toBe('string');
    expect(
      (await t.request('/v1/devices', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status,
    ).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, options),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(
      (await t.request('/v1/alerts', { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status,
    ).toBe(200);

    // The old refresh token again: the library reports the server's invalid_grant.
    const reuse = oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, options),
    );
    await expect(reuse).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('completes the code flow for a confidential client with HTTP Basic', async () => {
    const registered = registerClient(t.gw.store, { redirectUris: [REDIRECT] });
    const client: oauth.Client = { client_id: registered.clientId, token_endpoint_auth_method: 'client_secret_basic' };
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const callback = await signInAndAllow(await authorizationUrl(client, state, codeVerifier));
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const auth = oauth.ClientSecretBasic(registered.clientSecret as string);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, codeVerifier, options),
    );
    expect(
      (await t.request('/v1/devices', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status,
    ).toBe(200);
  });

  it('gets client credentials tokens', async () => {
    const registered = registerClient(t.gw.store, { redirectUris: [REDIRECT], grants: ['client_credentials'] });
    const client: oauth.Client = { client_id: registered.clientId, token_endpoint_auth_method: 'client_secret_post' };
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(registered.clientSecret as string),
      new URLSearchParams({ scope: 'devices:read' }),
      options,
    );
    const tokens = await oauth.processClientCredentialsResponse(as, client, response);
    expect(tokens.refresh_token).toBeUndefined();
    expect(
      (await t.request('/v1/devices', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status,
    ).toBe(200);
  });

  it('sees a wrong state as the attack it is', async () => {
    const registered = registerClient(t.gw.store, { public: true, redirectUris: [REDIRECT] });
    const client: oauth.Client = { client_id: registered.clientId, token_endpoint_auth_method: 'none' };
    const callback = await signInAndAllow(
      await authorizationUrl(client, 'the-state-sent', oauth.generateRandomCodeVerifier()),
    );
    expect(() => oauth.validateAuthResponse(as, client, callback, 'another-state')).toThrow(/state/);
  });
});
