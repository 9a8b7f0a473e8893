// Sign-in to the gateway's own authorization server as its first-party public client
// (authorization code + PKCE S256, docs/web-app.md). The access token lives in this object only;
// the refresh token in sessionStorage (this tab, gone when it closes), so a reload stays signed in.

import { issuerProblem, readIssuerMetadata, type IssuerMetadata } from './issuer.js';
import { CALLBACK_PATH, returnPath } from './paths.js';

const CLIENT_ID = 'gateway-web';
const REQUESTED_SCOPE = 'devices:read devices:write alerts:read alerts:write recordings:read recordings:write';
const METADATA_PATH = '/.well-known/oauth-authorization-server';

const REFRESH_KEY = 'edge-gateway.refresh';
const PENDING_KEY = 'edge-gateway.signin';
/** Refresh this long before the access token expires (or at 80 % of a shorter life). */
const REFRESH_MARGIN_MS = 60_000;

export type SignedOutReason = 'new' | 'expired' | 'signed-out' | 'refused';

export type AuthState =
  { kind: 'signed-in'; scopes: ReadonlySet<string> } | { kind: 'signed-out'; reason: SignedOutReason; detail?: string };

/** The authorization server refused the session (refresh token expired, revoked, or a bad code). */
export class SessionEndedError extends Error {}
/** The gateway could not be reached (network down, gateway restarting). */
export class UnreachableError extends Error {}

interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

interface PendingSignIn {
  state: string;
  verifier: string;
  returnTo: string;
  /** The server the request went to (RFC 9207 §2.4 compares the answer's `iss` with it). */
  issuer: IssuerMetadata;
}

interface SessionDeps {
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  fetch: typeof fetch;
  origin: string;
  /** Where the browser goes for the sign-in page. */
  navigate: (url: string) => void;
  onChange: (state: AuthState) => void;
  /** Reachability of the gateway as seen by the token requests. */
  onReachable: (reachable: boolean) => void;
}

export class Session {
  private access: string | null = null;
  private expiresAt = 0;
  private refreshing: Promise<string> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private granted: ReadonlySet<string> = new Set();

  constructor(private readonly deps: SessionDeps) {}

  get scopes(): ReadonlySet<string> {
    return this.granted;
  }

  /** The redirect back from the sign-in page, else a refresh token kept by this tab, else none. */
  async start(location: { pathname: string; search: string }): Promise<{ state: AuthState; returnTo: string | null }> {
    if (location.pathname === CALLBACK_PATH) {
      const returnTo = await this.finishSignIn(new URLSearchParams(location.search));
      return { state: this.state(), returnTo };
    }
    if (this.deps.storage.getItem(REFRESH_KEY) === null)
      return { state: { kind: 'signed-out', reason: 'new' }, returnTo: null };
    await this.refresh();
    return { state: this.state(), returnTo: null };
  }

  /** Off to the sign-in page; back at CALLBACK_PATH, then to returnTo. */
  async signIn(returnTo: string): Promise<void> {
    let issuer: IssuerMetadata;
    try {
      issuer = await this.metadata();
    } catch (err) {
      // Unreachable: the banner says so (send). Refused: the sign-in screen says why.
      if (err instanceof SessionEndedError)
        this.deps.onChange({ kind: 'signed-out', reason: 'refused', detail: err.message });
      return;
    }
    const verifier = randomToken();
    const state = randomToken();
    const pending: PendingSignIn = { state, verifier, returnTo, issuer };
    this.deps.storage.setItem(PENDING_KEY, JSON.stringify(pending));
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: this.redirectUri(),
      scope: REQUESTED_SCOPE,
      state,
      code_challenge: await challengeOf(verifier),
      code_challenge_method: 'S256',
    });
    this.deps.navigate(`/oauth/authorize?${query.toString()}`);
  }

  /** A valid access token, refreshed first when it is about to expire. */
  async accessToken(): Promise<string> {
    if (this.access !== null && Date.now() < this.expiresAt - 5_000) return this.access;
    return this.refresh();
  }

  /** A new access token now (also after the API said the old one is no longer good). One at a time. */
  refresh(): Promise<string> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** Revokes the grant (the refresh token and every token it gave) and forgets everything. */
  async signOut(): Promise<void> {
    const refresh = this.deps.storage.getItem(REFRESH_KEY);
    this.forget();
    if (refresh !== null) {
      const body = new URLSearchParams({ token: refresh, token_type_hint: 'refresh_token', client_id: CLIENT_ID });
      // Best effort: a gateway that cannot be reached keeps a grant nobody holds any more.
      await this.deps.fetch('/oauth/revoke', { method: 'POST', body }).catch(() => undefined);
    }
    this.deps.onChange({ kind: 'signed-out', reason: 'signed-out' });
  }

  private state(): AuthState {
    return this.access === null ? { kind: 'signed-out', reason: 'new' } : { kind: 'signed-in', scopes: this.granted };
  }

  private redirectUri(): string {
    return `${this.deps.origin}${CALLBACK_PATH}`;
  }

  /**
   * The answer of the sign-in page; the pending sign-in is dropped with it, unless the gateway could not be reached.
   */
  private async finishSignIn(params: URLSearchParams): Promise<string> {
    try {
      const returnTo = await this.exchangeAnswer(params);
      this.deps.storage.removeItem(PENDING_KEY);
      return returnTo;
    } catch (err) {
      // Left for the reload that retries.
      if (!(err instanceof UnreachableError)) this.deps.storage.removeItem(PENDING_KEY);
      throw err;
    }
  }

  /**
   * Checks the answer and exchanges its code. Its issuer is compared with the one read when the
   * request was made, so the exchange is the first request back here (no metadata round trip).
   */
  private async exchangeAnswer(params: URLSearchParams): Promise<string> {
    const pending = parsePending(this.deps.storage.getItem(PENDING_KEY));
    if (!pending || params.get('state') !== pending.state) {
      throw new SessionEndedError('This sign-in link is stale or was not started here. Sign in again.');
    }
    // Before anything of the answer is believed, its error included (RFC 9207 §2.4).
    const wrongIssuer = issuerProblem(params.get('iss'), pending.issuer);
    if (wrongIssuer !== null) throw new SessionEndedError(wrongIssuer);
    const error = params.get('error');
    if (error !== null) throw new SessionEndedError(params.get('error_description') ?? `Sign-in refused (${error}).`);
    const code = params.get('code');
    if (code === null) throw new SessionEndedError('The sign-in answer had no code. Sign in again.');
    await this.tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.redirectUri(),
      client_id: CLIENT_ID,
      code_verifier: pending.verifier,
    });
    return pending.returnTo;
  }

  /** The authorization server's metadata (RFC 8414), from this origin like every other call. */
  private async metadata(): Promise<IssuerMetadata> {
    const res = await this.send(METADATA_PATH, {});
    const metadata = res.ok ? readIssuerMetadata(await res.json().catch(() => null)) : null;
    if (metadata === null)
      throw new SessionEndedError(
        `The gateway did not describe its sign-in server (status ${res.status}). Sign in again.`,
      );
    return metadata;
  }

  private async doRefresh(): Promise<string> {
    const refresh = this.deps.storage.getItem(REFRESH_KEY);
    if (refresh === null) throw this.ended('expired');
    return this.tokenRequest({ grant_type: 'refresh_token', refresh_token: refresh, client_id: CLIENT_ID });
  }

  private async tokenRequest(fields: Record<string, string>): Promise<string> {
    const res = await this.send('/oauth/token', { method: 'POST', body: new URLSearchParams(fields) });
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok || !isTokenResponse(body)) {
      const detail =
        isRecord(body) && typeof body.error_description === 'string' ? body.error_description : `status ${res.status}`;
      throw this.ended(fields.grant_type === 'refresh_token' ? 'expired' : 'refused', detail);
    }
    this.access = body.access_token;
    this.expiresAt = Date.now() + body.expires_in * 1000;
    this.granted = new Set(body.scope.split(' ').filter(Boolean));
    // Rotating refresh tokens: each answer brings the one to use next time.
    if (body.refresh_token) this.deps.storage.setItem(REFRESH_KEY, body.refresh_token);
    this.schedule(body.expires_in * 1000);
    return body.access_token;
  }

  /** A request to the authorization server; UnreachableError when the gateway cannot answer. */
  private async send(path: string, init: RequestInit): Promise<Response> {
    let res: Response;
    try {
      res = await this.deps.fetch(path, { ...init, cache: 'no-store' });
    } catch {
      this.deps.onReachable(false);
      throw new UnreachableError('The gateway cannot be reached.');
    }
    if (res.status >= 500) {
      this.deps.onReachable(false);
      throw new UnreachableError(`The gateway answered ${res.status}.`);
    }
    this.deps.onReachable(true);
    return res;
  }

  /** Refreshes ahead of expiry, so requests never wait for it (and a 401 stays the exception). */
  private schedule(lifeMs: number): void {
    clearTimeout(this.timer);
    const wait = Math.max(1_000, lifeMs - Math.min(REFRESH_MARGIN_MS, lifeMs * 0.2));
    this.timer = setTimeout(() => {
      this.refresh().catch(() => undefined);
    }, wait);
  }

  private ended(reason: SignedOutReason, detail?: string): SessionEndedError {
    this.forget();
    const state: AuthState =
      detail === undefined ? { kind: 'signed-out', reason } : { kind: 'signed-out', reason, detail };
    this.deps.onChange(state);
    return new SessionEndedError(detail ?? reason);
  }

  private forget(): void {
    clearTimeout(this.timer);
    this.access = null;
    this.expiresAt = 0;
    this.granted = new Set();
    this.deps.storage.removeItem(REFRESH_KEY);
  }
}

function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function challengeOf(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isTokenResponse(value: unknown): value is TokenResponse {
  return (
    isRecord(value) &&
    typeof value.access_token === 'string' &&
    typeof value.expires_in === 'number' &&
    typeof value.scope === 'string'
  );
}

function parsePending(raw: string | null): PendingSignIn | null {
  if (raw === null) return null;
  try {
    const value: unknown = JSON.parse(raw);
    const issuer = isRecord(value) ? readIssuerMetadata(value.issuer) : null;
    if (
      isRecord(value) &&
      typeof value.state === 'string' &&
      typeof value.verifier === 'string' &&
      typeof value.returnTo === 'string' &&
      issuer !== null
    ) {
      return { state: value.state, verifier: value.verifier, returnTo: returnPath(value.returnTo), issuer };
    }
  } catch {
    // fall through: not ours
  }
  return null;
}
