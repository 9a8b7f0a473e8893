import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { newId } from '../../domain/ids.js';
import { createOnce } from '../../platform/durable-files.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { OAuthClientRecord, OAuthIssue, Store } from '../../store/store.js';
import { scopesForRole } from '../roles.js';
import { OAuthError } from './errors.js';
import {
  checkClientGrant,
  checkScopeSubset,
  formatScope,
  GRANT_TYPES,
  type ClientAuthentication,
  type GrantType,
  type RevocationRequest,
  type TokenRequest,
} from './params.js';
import { checkTokenPkce } from './pkce.js';

// The token side of the local authorization server: client authentication, authorization codes,
// grants, refresh-token rotation and the access tokens themselves. The HTTP layer
// (src/api/routes/oauth/) parses requests with params.ts and hands them here; every refusal is
// an OAuthError the route turns into the RFC 6749 response.

/** Authorization codes live 60 s (RFC 6749 §4.1.2 advises at most 10 minutes). */
export const CODE_TTL_MS = 60_000;

/** What a client gets when it asks for no scope: reading, nothing that changes a camera. */
export const DEFAULT_SCOPES: readonly string[] = ['devices:read', 'alerts:read', 'recordings:read'];

/** The token response of the spec's section 2 (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

export interface AccessTokenIssuer {
  issue(opts: { subject: string; scope: string; ttlS: number; clientId: string; jti: string }): Promise<string>;
}

export type OAuthStore = Pick<
  Store,
  | 'getOAuthClient'
  | 'getLocalUser'
  | 'insertOAuthCode'
  | 'getOAuthCode'
  | 'redeemOAuthCode'
  | 'insertOAuthGrant'
  | 'getOAuthGrant'
  | 'getOAuthRefreshToken'
  | 'rotateOAuthRefreshToken'
  | 'revokeOAuthGrant'
  | 'getOAuthAccessTokenGrant'
  | 'pruneOAuth'
>;

export interface AuthorizationServerOptions {
  store: OAuthStore;
  issuer: AccessTokenIssuer;
  /** Key of the keyed hashes codes and refresh tokens are stored under (sealed in data_dir). */
  tokenKey: Buffer;
  accessTtlS: number;
  refreshTtlS: number;
  /**
   * The jti of an access token this server issued and that is still valid (signature, issuer,
   * expiry checked), else null: for revocation (RFC 7009), so a made-up token revokes nothing.
   */
  accessTokenId: (token: string) => Promise<string | null>;
  logger: BaseLogger;
  /** ms */
  now?: () => number;
}

export interface NewCode {
  client: OAuthClientRecord;
  /** Exactly as the authorization request gave it (already matched against the registered ones). */
  redirectUri: string;
  user: string;
  scopes: ReadonlySet<string>;
  codeChallenge: string | null;
}

const TOKEN_KEY_LABEL = 'oauth-token-key';

/**
 * The key of the keyed hashes codes and refresh tokens are stored under: data_dir/oauth-token.key,
 * sealed at rest, created on first use. A copy of the database alone cannot even test a guess.
 */
export function openTokenKey(dataDir: string, secretBox: SecretBox): Buffer {
  const sealed = createOnce(
    path.join(dataDir, 'oauth-token.key'),
    () => secretBox.seal(randomBytes(32), TOKEN_KEY_LABEL),
    0o600,
  ).toString('utf8');
  return secretBox.open(sealed, TOKEN_KEY_LABEL);
}

/** A registered client as the rules see it (params.ts ClientGrants). */
export function clientGrants(client: OAuthClientRecord): { public: boolean; grantTypes: GrantType[] } {
  return {
    public: client.secretHash === null,
    grantTypes: client.grantTypes.filter((g): g is GrantType => (GRANT_TYPES as readonly string[]).includes(g)),
  };
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

export class AuthorizationServer {
  private readonly now: () => number;
  private lastPrune = 0;

  constructor(private readonly opts: AuthorizationServerOptions) {
    this.now = opts.now ?? Date.now;
  }

  findClient(clientId: string): OAuthClientRecord | null {
    return this.opts.store.getOAuthClient(clientId);
  }

  /** A new authorization code (single use, 60 s, bound to client, redirect URI, user and challenge). */
  createCode(c: NewCode): string {
    const code = randomBytes(32).toString('base64url');
    this.opts.store.insertOAuthCode({
      codeHash: this.keyedHash(code),
      clientId: c.client.id,
      redirectUri: c.redirectUri,
      user: c.user,
      scope: formatScope(c.scopes),
      codeChallenge: c.codeChallenge,
      expiresAt: this.now() + CODE_TTL_MS,
    });
    return code;
  }

  /** Answers a parsed token request, or throws the OAuthError to send. */
  async token(req: TokenRequest): Promise<TokenResponse> {
    this.pruneNowAndThen();
    const client = this.authenticateClient(req.client);
    const grantError = checkClientGrant(clientGrants(client), req.grantType);
    if (grantError) throw grantError;
    switch (req.grantType) {
      case 'authorization_code':
        return this.exchangeCode(client, req.code, req.redirectUri, req.codeVerifier);
      case 'refresh_token':
        return this.refresh(client, req.refreshToken, req.scope);
      case 'client_credentials':
        return this.clientCredentials(client, req.scope);
    }
  }

  /**
   * Token revocation (RFC 7009): a refresh or access token of this client ends its whole grant —
   * every refresh and access token of that sign-in. A token the server does not know (or no longer
   * does, or that has expired) is not an error (§2.2): there is nothing left to revoke. A known
   * token of another client is refused (§2.1) and revokes nothing.
   */
  async revoke(req: RevocationRequest): Promise<void> {
    const client = this.authenticateClient(req.client);
    const grantId = await this.grantOfToken(req.token, req.tokenTypeHint);
    if (grantId === null) return;
    const grant = this.opts.store.getOAuthGrant(grantId);
    if (!grant) return;
    if (grant.clientId !== client.id)
      throw new OAuthError('unauthorized_client', 'the token was not issued to this client');
    if (grant.revokedAt !== null) return;
    this.opts.store.revokeOAuthGrant(grant.id, this.now());
    this.opts.logger.info({ grantId: grant.id, clientId: client.id, user: grant.user }, 'grant revoked by its client');
  }

  /** The grant a token belongs to; the hint only decides which kind is looked for first (§2.1). */
  private async grantOfToken(token: string, hint: string | undefined): Promise<string | null> {
    const asRefresh = (): string | null => this.opts.store.getOAuthRefreshToken(this.keyedHash(token))?.grantId ?? null;
    const asAccess = async (): Promise<string | null> => {
      const jti = await this.opts.accessTokenId(token);
      return jti === null ? null : this.opts.store.getOAuthAccessTokenGrant(jti);
    };
    if (hint === 'access_token') return (await asAccess()) ?? asRefresh();
    return asRefresh() ?? (await asAccess());
  }

  /**
   * invalid_client unless the client exists and presented itself the way it was registered: a
   * confidential client with its secret, a public client with its id alone.
   */
  private authenticateClient(auth: ClientAuthentication): OAuthClientRecord {
    const client = this.opts.store.getOAuthClient(auth.clientId);
    if (!client) throw new OAuthError('invalid_client', 'unknown client');
    if (client.secretHash === null) {
      if (auth.method !== 'none') throw new OAuthError('invalid_client', 'a public client has no secret to send');
      return client;
    }
    if (auth.method === 'none') throw new OAuthError('invalid_client', 'client authentication is required');
    const presented = createHash('sha256').update(auth.clientSecret, 'utf8').digest();
    const stored = Buffer.from(client.secretHash, 'hex');
    if (stored.length !== presented.length || !timingSafeEqual(stored, presented))
      throw new OAuthError('invalid_client', 'client authentication failed');
    return client;
  }

  private async exchangeCode(
    client: OAuthClientRecord,
    code: string,
    redirectUri: string,
    codeVerifier: string | undefined,
  ): Promise<TokenResponse> {
    const codeHash = this.keyedHash(code);
    const stored = this.opts.store.getOAuthCode(codeHash);
    const now = this.now();
    if (!stored || stored.expiresAt <= now) throw invalidGrant('the authorization code is invalid or expired');
    if (stored.grantId !== null) {
      // RFC 6749 §4.1.2: a code used twice was stolen or leaked; what it gave is revoked.
      this.revokeReplayed(stored.grantId, 'authorization code');
      throw invalidGrant('the authorization code is invalid or expired');
    }
    if (stored.clientId !== client.id) throw invalidGrant('the authorization code was issued to another client');
    if (stored.redirectUri !== redirectUri) throw invalidGrant('redirect_uri differs from the authorization request');
    // Removing a user revokes their grants; a code they approved just before must not make a new one.
    const user = this.opts.store.getLocalUser(stored.user);
    if (!user) throw invalidGrant('the user who approved the code no longer exists');
    const pkce = checkTokenPkce({
      codeChallenge: stored.codeChallenge,
      codeVerifier,
      publicClient: client.secretHash === null,
    });
    if (!pkce.ok) throw pkce.error;

    const grantId = newId('grt');
    // The code already holds no more than the role allowed when it was made; checked again here.
    const scope = formatScope(scopesForRole(stored.scope.split(' '), user.role));
    if (scope === '') throw invalidGrant("the user's role allows none of the approved scopes");
    const { response, issued } = await this.mint(client, stored.user, grantId, scope, scope, now);
    const grant = { id: grantId, clientId: client.id, user: stored.user, scope, createdAt: now, revokedAt: null };
    if (!this.opts.store.redeemOAuthCode(codeHash, grant, issued)) {
      // Redeemed by a concurrent request while this one was signing: that makes this a replay.
      const again = this.opts.store.getOAuthCode(codeHash);
      if (again?.grantId) this.revokeReplayed(again.grantId, 'authorization code');
      throw invalidGrant('the authorization code is invalid or expired');
    }
    return response;
  }

  private async refresh(
    client: OAuthClientRecord,
    refreshToken: string,
    requested: ReadonlySet<string> | null,
  ): Promise<TokenResponse> {
    const tokenHash = this.keyedHash(refreshToken);
    const stored = this.opts.store.getOAuthRefreshToken(tokenHash);
    const now = this.now();
    if (!stored) throw invalidGrant('the refresh token is invalid');
    const grant = this.opts.store.getOAuthGrant(stored.grantId);
    if (!grant || grant.clientId !== client.id) throw invalidGrant('the refresh token is invalid');
    if (grant.revokedAt !== null) throw invalidGrant('the refresh token was revoked');
    if (stored.usedAt !== null) {
      // Rotation (RFC 9700 §4.14.2): an old refresh token coming back means two parties hold the
      // chain; neither can be told apart, so the whole grant ends.
      this.revokeReplayed(grant.id, 'refresh token');
      throw invalidGrant('the refresh token was already used');
    }
    if (stored.expiresAt <= now) throw invalidGrant('the refresh token expired');
    const granted = new Set(stored.scope.split(' '));
    if (requested) {
      const wider = checkScopeSubset(requested, granted);
      if (wider) throw wider;
    }
    // A user's grant never outgrows the user's role (removing a user revokes the grant anyway).
    const user = grant.user === null ? null : this.opts.store.getLocalUser(grant.user);
    if (grant.user !== null && !user) throw invalidGrant('the refresh token is invalid');
    const accessScope = formatScope(user ? scopesForRole(requested ?? granted, user.role) : (requested ?? granted));
    if (accessScope === '') throw invalidGrant("the user's role allows none of the granted scopes");
    // RFC 6749 §6: the new refresh token keeps the grant's scope; only the access token narrows.
    const { response, issued } = await this.mint(client, grant.user, grant.id, accessScope, stored.scope, now);
    if (!this.opts.store.rotateOAuthRefreshToken(tokenHash, grant.id, issued, now)) {
      this.revokeReplayed(grant.id, 'refresh token');
      throw invalidGrant('the refresh token was already used');
    }
    return response;
  }

  private async clientCredentials(
    client: OAuthClientRecord,
    requested: ReadonlySet<string> | null,
  ): Promise<TokenResponse> {
    const now = this.now();
    const grantId = newId('grt');
    const scope = formatScope(requested ?? DEFAULT_SCOPES);
    // RFC 6749 §4.4.3: no refresh token; the client can always ask again with its credentials.
    const { response, issued } = await this.mint(client, null, grantId, scope, null, now);
    this.opts.store.insertOAuthGrant(
      { id: grantId, clientId: client.id, user: null, scope, createdAt: now, revokedAt: null },
      issued,
    );
    return response;
  }

  /**
   * Signs an access token (and makes a refresh token when the client may refresh and the grant
   * is a user's), returning the response and what to record of it.
   */
  private async mint(
    client: OAuthClientRecord,
    user: string | null,
    grantId: string,
    accessScope: string,
    refreshScope: string | null,
    now: number,
  ): Promise<{ response: TokenResponse; issued: OAuthIssue }> {
    const jti = randomUUID();
    const ttlS = this.opts.accessTtlS;
    const accessToken = await this.opts.issuer.issue({
      subject: user ?? client.id,
      scope: accessScope,
      ttlS,
      clientId: client.id,
      jti,
    });
    const canRefresh = refreshScope !== null && clientGrants(client).grantTypes.includes('refresh_token');
    const refreshToken = canRefresh ? randomBytes(32).toString('base64url') : null;
    const response: TokenResponse = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ttlS,
      scope: accessScope,
    };
    if (refreshToken !== null) response.refresh_token = refreshToken;
    const issued: OAuthIssue = {
      accessJti: jti,
      // The signed exp is whole seconds from the issuer's own clock reading; a little extra keeps
      // the record at least as long as the token.
      accessExpiresAt: now + (ttlS + 60) * 1000,
      refresh:
        refreshToken === null || refreshScope === null
          ? null
          : {
              tokenHash: this.keyedHash(refreshToken),
              scope: refreshScope,
              expiresAt: now + this.opts.refreshTtlS * 1000,
            },
    };
    return { response, issued };
  }

  private revokeReplayed(grantId: string, what: string): void {
    this.opts.store.revokeOAuthGrant(grantId, this.now());
    this.opts.logger.warn({ grantId }, `${what} used twice: the grant and every token from it are revoked`);
  }

  private keyedHash(value: string): string {
    return createHmac('sha256', this.opts.tokenKey).update(value, 'utf8').digest('hex');
  }

  /** Expired rows go at most once a minute, from the token endpoint (no timer to stop). */
  private pruneNowAndThen(): void {
    const now = this.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    this.opts.store.pruneOAuth(now);
  }
}
