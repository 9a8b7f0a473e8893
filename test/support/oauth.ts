import { createHash, randomBytes } from 'node:crypto';
import { hashPassword } from '../../src/auth/oauth/password.js';
import type { Role } from '../../src/auth/roles.js';
import { newId } from '../../src/domain/ids.js';
import type { Store } from '../../src/store/store.js';
import { makeClient, type Client, type Response } from './https.js';

// Helpers for tests of the local authorization server: clients and users straight into the store
// (as `edge-gateway clients add` / `users add` write them; the CLI has its own tests), a cookie-keeping
// form client for the login and consent pages, and PKCE pairs.

export interface RegisteredClient {
  clientId: string;
  clientSecret: string | null;
}

export function registerClient(
  store: Store,
  opts: { public?: boolean; redirectUris: string[]; grants?: string[]; name?: string },
): RegisteredClient {
  const clientId = newId('cli');
  const secret = opts.public ? null : randomBytes(32).toString('base64url');
  store.insertOAuthClient({
    id: clientId,
    name: opts.name ?? 'Test app',
    secretHash: secret === null ? null : createHash('sha256').update(secret).digest('hex'),
    redirectUris: opts.redirectUris,
    grantTypes: opts.grants ?? ['authorization_code', 'refresh_token'],
    createdAt: Date.now(),
  });
  return { clientId, clientSecret: secret };
}

export async function addUser(store: Store, username: string, password: string, role: Role = 'admin'): Promise<void> {
  store.insertLocalUser({ username, passwordHash: await hashPassword(password), role, createdAt: Date.now() });
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The hidden and named inputs of the page's form, as the browser would send them. */
export function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    fields[unescape(m[1] as string)] = unescape(m[2] as string);
  return fields;
}

function unescape(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** A browser without script: keeps cookies, follows no redirects (tests look at each one). */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly request: Client) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.keep(await this.request(path, { headers: { ...this.cookieHeader(), ...headers } }));
  }

  async post(
    path: string,
    fields: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    return this.keep(
      await this.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader(), ...headers },
        body: body.toString(),
      }),
    );
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  private keep(res: Response): Response {
    const set = res.headers['set-cookie'] ?? [];
    for (const line of set) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, eq);
      const value = (pair ?? '').slice(eq + 1);
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

export interface AuthorizeOutcome {
  /** The final redirect to the client (Location), or null when the server answered with a page. */
  location: URL | null;
  last: Response;
}

/** Runs the whole page flow: authorization request, login, consent (allow or deny). */
export async function authorizeInBrowser(
  browser: FormBrowser,
  query: Record<string, string>,
  user: { username: string; password: string },
  answer: 'allow' | 'deny' = 'allow',
): Promise<AuthorizeOutcome> {
  const path = `/oauth/authorize?${new URLSearchParams(query).toString()}`;
  const login = await browser.get(path);
  if (login.status !== 200)
    return { location: login.status === 303 ? new URL(login.headers.location as string) : null, last: login };
  const afterLogin = await browser.post('/oauth/authorize', {
    ...formFields(login.text),
    action: 'login',
    username: user.username,
    password: user.password,
  });
  if (afterLogin.status !== 303) return { location: null, last: afterLogin };
  const consent = await browser.get(afterLogin.headers.location as string);
  if (consent.status !== 200) return { location: null, last: consent };
  const decided = await browser.post('/oauth/authorize', { ...formFields(consent.text), action: answer });
  if (decided.status !== 303) return { location: null, last: decided };
  return { location: new URL(decided.headers.location as string), last: decided };
}

/**
 * A fetch (for oauth4webapi's customFetch) that trusts only `ca`: Node's global fetch cannot be
 * given a CA without undici's Agent, and the gateway's certificate is self-signed. The request
 * goes through the tests' own HTTPS client; its answer is handed back as a fetch Response.
 */
export function fetchTrusting(ca: Buffer) {
  return async (
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: unknown },
  ): Promise<globalThis.Response> => {
    const body =
      init.body instanceof URLSearchParams
        ? init.body.toString()
        : typeof init.body === 'string' || Buffer.isBuffer(init.body)
          ? init.body
          : undefined;
    const res = await makeClient(new URL(url).origin, ca)(url, {
      method: init.method ?? 'GET',
      headers: init.headers ?? {},
      ...(body === undefined ? {} : { body }),
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers))
      for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) headers.append(k, one);
    return new globalThis.Response(res.body, { status: res.status, headers });
  };
}

export interface FirstPartyTokens {
  access: string;
  refresh: string;
  scope: string;
}

/**
 * The web app's sign-in (its built-in client gateway-web, PKCE) without a browser: the login form, then the code for
 * tokens.
 */
export async function signInAsWebApp(
  apiUrl: string,
  request: Client,
  user: { username: string; password: string },
  scope: string,
): Promise<FirstPartyTokens> {
  const { verifier, challenge } = pkcePair();
  const redirectUri = `${apiUrl}/signin/callback`;
  const browser = new FormBrowser(request);
  const query = new URLSearchParams({
    client_id: 'gateway-web',
    redirect_uri: redirectUri,
    response_type: 'code',
    state: 's',
    scope,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const login = await browser.get(`/oauth/authorize?${query.toString()}`);
  const answer = await browser.post('/oauth/authorize', {
    ...formFields(login.text),
    action: 'login',
    username: user.username,
    password: user.password,
  });
  const code =
    typeof answer.headers.location === 'string' ? new URL(answer.headers.location).searchParams.get('code') : null;
  if (!code) throw new Error(`no code: ${answer.status} ${answer.headers.location ?? answer.text}`);
  const res = await tokenRequest(request, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: 'gateway-web',
    code_verifier: verifier,
  });
  if (res.status !== 200) throw new Error(`token request: ${res.status} ${res.text}`);
  const body = res.json() as { access_token: string; refresh_token: string; scope: string };
  return { access: body.access_token, refresh: body.refresh_token, scope: body.scope };
}

/** The web app's sign-out: its refresh token revoked at POST /oauth/revoke, which revokes its grant. */
export function signOutWebApp(request: Client, refresh: string): Promise<Response> {
  return request('/oauth/revoke', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      token: refresh,
      token_type_hint: 'refresh_token',
      client_id: 'gateway-web',
    }).toString(),
  });
}

/** POST /oauth/token with these form fields. */
export function tokenRequest(
  request: Client,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return request('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}
