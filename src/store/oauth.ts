import type Database from 'better-sqlite3';
import { isRole, type Role } from '../domain/roles.js';
import type { Connection } from './connection.js';
import { AlreadyUsedError, StoreError } from './errors.js';
import type { PushRecords } from './push.js';

/** Access tokens whose revocation is memoised: the apps and clients polling one gateway at a time. */
const MAX_REMEMBERED_TOKENS = 1024;

/** A client of the local authorization server (`edge-gateway clients add`). */
export interface OAuthClientRecord {
  id: string;
  name: string;
  /** SHA-256 (hex) of the client secret; null for a public client. */
  secretHash: string | null;
  redirectUris: string[];
  grantTypes: string[];
  createdAt: number;
}

export interface OAuthCodeRecord {
  codeHash: string;
  clientId: string;
  redirectUri: string;
  user: string;
  /** Space-separated, as formatScope writes it. */
  scope: string;
  codeChallenge: string | null;
  /** ms */
  expiresAt: number;
}

export interface OAuthGrantRecord {
  id: string;
  clientId: string;
  /** Null for client_credentials (the client acts for itself). */
  user: string | null;
  scope: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface OAuthRefreshTokenRecord {
  tokenHash: string;
  grantId: string;
  scope: string;
  expiresAt: number;
  usedAt: number | null;
}

/** What one token response gave: its access token (by jti) and, maybe, a refresh token. */
export interface OAuthIssue {
  accessJti: string;
  accessExpiresAt: number;
  refresh: { tokenHash: string; scope: string; expiresAt: number } | null;
}

export interface LocalUserRecord {
  username: string;
  passwordHash: string;
  /** What the user may be granted (the scopes of each: src/auth/roles.ts). */
  role: Role;
  createdAt: number;
}

// Row types: the tables are STRICT, so SQLite keeps each column to its declared type.
interface OAuthClientRow {
  id: string;
  name: string;
  secret_hash: string | null;
  /** JSON arrays of strings. */
  redirect_uris: string;
  grant_types: string;
  created_at: number;
}
interface LocalUserRow {
  username: string;
  password_hash: string;
  role: string;
  created_at: number;
}
interface OAuthCodeRow {
  code_hash: string;
  client_id: string;
  redirect_uri: string;
  user: string;
  scope: string;
  code_challenge: string | null;
  expires_at: number;
  grant_id: string | null;
}
interface OAuthGrantRow {
  id: string;
  client_id: string;
  user: string | null;
  scope: string;
  created_at: number;
  revoked_at: number | null;
}
interface OAuthRefreshTokenRow {
  token_hash: string;
  grant_id: string;
  scope: string;
  expires_at: number;
  used_at: number | null;
}

const toOAuthClient = (r: OAuthClientRow): OAuthClientRecord => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  redirectUris: stringArray(r.redirect_uris, 'oauth_clients.redirect_uris'),
  grantTypes: stringArray(r.grant_types, 'oauth_clients.grant_types'),
  createdAt: r.created_at,
});

/** A column this module writes with JSON.stringify(string[]); anything else there is damage, said so. */
function stringArray(json: string, column: string): string[] {
  const value: unknown = JSON.parse(json);
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string'))
    throw new StoreError(`${column} is not a JSON array of strings`);
  return value;
}

/** The column's CHECK keeps it to the known roles; anything else is damage, said so. */
function roleOf(role: string): Role {
  if (!isRole(role)) throw new StoreError(`local_users.role is ${JSON.stringify(role)}, not a known role`);
  return role;
}

type Now = { now: number };

function prepare(db: Database.Database) {
  return {
    insertClient: db.prepare<{
      id: string;
      name: string;
      secretHash: string | null;
      redirectUris: string;
      grantTypes: string;
      createdAt: number;
    }>(
      'INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, grant_types, created_at) VALUES (@id, @name, @secretHash, @redirectUris, @grantTypes, @createdAt)',
    ),
    client: db.prepare<[id: string], OAuthClientRow>('SELECT * FROM oauth_clients WHERE id = ?'),
    clients: db.prepare<[], OAuthClientRow>('SELECT * FROM oauth_clients ORDER BY created_at, id'),
    deleteClient: db.prepare<{ id: string }>('DELETE FROM oauth_clients WHERE id = @id'),

    insertUser: db.prepare<LocalUserRecord>(
      'INSERT INTO local_users (username, password_hash, role, created_at) VALUES (@username, @passwordHash, @role, @createdAt)',
    ),
    user: db.prepare<[username: string], LocalUserRow>('SELECT * FROM local_users WHERE username = ?'),
    users: db.prepare<[], Omit<LocalUserRow, 'password_hash'>>(
      'SELECT username, role, created_at FROM local_users ORDER BY username',
    ),
    revokeGrantsOfUser: db.prepare<{ username: string } & Now>(
      'UPDATE oauth_grants SET revoked_at = @now WHERE user = @username AND revoked_at IS NULL',
    ),
    deleteUser: db.prepare<{ username: string }>('DELETE FROM local_users WHERE username = @username'),
    setUserRole: db.prepare<{ username: string; role: Role }>(
      'UPDATE local_users SET role = @role WHERE username = @username',
    ),
    setUserPassword: db.prepare<{ username: string; passwordHash: string }>(
      'UPDATE local_users SET password_hash = @passwordHash WHERE username = @username',
    ),

    insertCode: db.prepare<OAuthCodeRecord>(
      `INSERT INTO oauth_codes (code_hash, client_id, redirect_uri, user, scope, code_challenge, expires_at)
         VALUES (@codeHash, @clientId, @redirectUri, @user, @scope, @codeChallenge, @expiresAt)`,
    ),
    code: db.prepare<[codeHash: string], OAuthCodeRow>('SELECT * FROM oauth_codes WHERE code_hash = ?'),
    useCode: db.prepare<{ codeHash: string; grantId: string }>(
      'UPDATE oauth_codes SET grant_id = @grantId WHERE code_hash = @codeHash AND grant_id IS NULL',
    ),

    insertGrant: db.prepare<OAuthGrantRecord>(
      'INSERT INTO oauth_grants (id, client_id, user, scope, created_at, revoked_at) VALUES (@id, @clientId, @user, @scope, @createdAt, @revokedAt)',
    ),
    grant: db.prepare<[id: string], OAuthGrantRow>('SELECT * FROM oauth_grants WHERE id = ?'),
    revokeGrant: db.prepare<{ id: string } & Now>(
      'UPDATE oauth_grants SET revoked_at = @now WHERE id = @id AND revoked_at IS NULL',
    ),

    refreshToken: db.prepare<[tokenHash: string], OAuthRefreshTokenRow>(
      'SELECT * FROM oauth_refresh_tokens WHERE token_hash = ?',
    ),
    useRefreshToken: db.prepare<{ tokenHash: string } & Now>(
      'UPDATE oauth_refresh_tokens SET used_at = @now WHERE token_hash = @tokenHash AND used_at IS NULL',
    ),
    insertAccessToken: db.prepare<{ jti: string; grantId: string; expiresAt: number }>(
      'INSERT INTO oauth_access_tokens (jti, grant_id, expires_at) VALUES (@jti, @grantId, @expiresAt)',
    ),
    insertRefreshToken: db.prepare<{ tokenHash: string; grantId: string; scope: string; expiresAt: number }>(
      'INSERT INTO oauth_refresh_tokens (token_hash, grant_id, scope, expires_at) VALUES (@tokenHash, @grantId, @scope, @expiresAt)',
    ),
    // Not a LEFT JOIN: SQLite re-prepared that form on every run (sqlite3Reprepare in the profile),
    // which made it twice the cost of this one. 1: the token's grant is live; 0: revoked or gone.
    accessTokenGrant: db
      .prepare<[jti: string], string>('SELECT grant_id FROM oauth_access_tokens WHERE jti = ?')
      .pluck(),
    accessTokenLive: db
      .prepare<[jti: string], number>(
        `SELECT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.id = a.grant_id AND g.revoked_at IS NULL)
           FROM oauth_access_tokens a WHERE a.jti = ?`,
      )
      .pluck(),

    pruneCodes: db.prepare<Now>('DELETE FROM oauth_codes WHERE expires_at < @now'),
    pruneRefreshTokens: db.prepare<Now>('DELETE FROM oauth_refresh_tokens WHERE expires_at < @now'),
    pruneAccessTokens: db.prepare<Now>('DELETE FROM oauth_access_tokens WHERE expires_at < @now'),
    pruneGrants: db.prepare<[]>(
      `DELETE FROM oauth_grants WHERE NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = oauth_grants.id)
         AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.grant_id = oauth_grants.id)
         AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.grant_id = oauth_grants.id)`,
    ),
  };
}

/** Every table of the local authorization server: its clients and users, and what it issued. */
export class OAuthRecords {
  private readonly sql: ReturnType<typeof prepare>;

  /** isAccessTokenRevoked's answers (jti → revoked), forgotten with the connection's list pages. */
  private readonly revokedAccessTokens = new Map<string, boolean>();

  constructor(
    private readonly conn: Connection,
    private readonly push: PushRecords,
  ) {
    this.sql = prepare(conn.db);
    conn.pages.alsoForget(this.revokedAccessTokens);
  }

  // --- clients and users

  insertOAuthClient(c: OAuthClientRecord): void {
    this.conn.run(this.sql.insertClient, {
      ...c,
      redirectUris: JSON.stringify(c.redirectUris),
      grantTypes: JSON.stringify(c.grantTypes),
    });
  }

  getOAuthClient(id: string): OAuthClientRecord | null {
    const row = this.sql.client.get(id);
    return row ? toOAuthClient(row) : null;
  }

  listOAuthClients(): OAuthClientRecord[] {
    return this.sql.clients.all().map(toOAuthClient);
  }

  /** False when there was no such client. Its grants go with it, and the push subscriptions made under them. */
  deleteOAuthClient(id: string): boolean {
    return this.conn.transaction(() => {
      this.push.removeOfClientGrants(id);
      return this.conn.run(this.sql.deleteClient, { id }).changes > 0;
    });
  }

  insertLocalUser(u: LocalUserRecord): void {
    this.conn.run(this.sql.insertUser, u);
  }

  getLocalUser(username: string): LocalUserRecord | null {
    const row = this.sql.user.get(username);
    return row
      ? { username: row.username, passwordHash: row.password_hash, role: roleOf(row.role), createdAt: row.created_at }
      : null;
  }

  listLocalUsers(): Array<{ username: string; role: Role; createdAt: number }> {
    return this.sql.users.all().map((r) => ({ username: r.username, role: roleOf(r.role), createdAt: r.created_at }));
  }

  /**
   * Removes the user and revokes every grant they gave, in one transaction; their push
   * subscriptions go too (those made under their grants, and those of their name as a token subject).
   */
  deleteLocalUser(username: string, now = Date.now()): boolean {
    return this.conn.transaction(() => {
      this.revokeGrantsOfUser(username, now);
      this.push.removeOfOwner(username);
      return this.conn.run(this.sql.deleteUser, { username }).changes > 0;
    });
  }

  /**
   * Gives the user another role. A role that may be granted less (admin → viewer; `narrows`, auth's
   * roleNarrows: the store does not know the roles' scopes) also revokes every grant the user gave,
   * in the same transaction: their tokens stop at once instead of keeping scopes the role no longer
   * allows until they expire. null: no such user.
   */
  setLocalUserRole(
    username: string,
    role: Role,
    narrows: (from: Role, to: Role) => boolean,
    now = Date.now(),
  ): { previous: Role; revokedGrants: number } | null {
    return this.conn.transaction(() => {
      const row = this.sql.user.get(username);
      if (!row) return null;
      const previous = roleOf(row.role);
      if (previous === role) return { previous, revokedGrants: 0 };
      this.conn.run(this.sql.setUserRole, { username, role });
      const revokedGrants = narrows(previous, role) ? this.revokeGrantsOfUser(username, now) : 0;
      return { previous, revokedGrants };
    });
  }

  /** A stronger hash of the same password (after a login with an outdated one). */
  updateLocalUserPassword(username: string, passwordHash: string): void {
    this.conn.run(this.sql.setUserPassword, { username, passwordHash });
  }

  // --- what the local authorization server issued

  insertOAuthCode(c: OAuthCodeRecord): void {
    this.conn.run(this.sql.insertCode, c);
  }

  getOAuthCode(codeHash: string): (OAuthCodeRecord & { grantId: string | null }) | null {
    const row = this.sql.code.get(codeHash);
    if (!row) return null;
    return {
      codeHash: row.code_hash,
      clientId: row.client_id,
      redirectUri: row.redirect_uri,
      user: row.user,
      scope: row.scope,
      codeChallenge: row.code_challenge,
      expiresAt: row.expires_at,
      grantId: row.grant_id,
    };
  }

  /**
   * Redeems a code: one transaction that marks it used, creates its grant, and records what was
   * issued. False (and nothing written) when the code was used meanwhile.
   */
  redeemOAuthCode(codeHash: string, grant: OAuthGrantRecord, issued: OAuthIssue): boolean {
    return this.unlessAlreadyUsed(() => {
      this.conn.run(this.sql.insertGrant, grant);
      if (this.conn.run(this.sql.useCode, { codeHash, grantId: grant.id }).changes !== 1) throw new AlreadyUsedError();
      this.recordIssue(grant.id, issued);
    });
  }

  /** A grant without a code (client_credentials) and its access token. */
  insertOAuthGrant(grant: OAuthGrantRecord, issued: OAuthIssue): void {
    this.conn.transaction(() => {
      this.conn.run(this.sql.insertGrant, grant);
      this.recordIssue(grant.id, issued);
    });
  }

  getOAuthGrant(id: string): OAuthGrantRecord | null {
    const row = this.sql.grant.get(id);
    return row
      ? {
          id: row.id,
          clientId: row.client_id,
          user: row.user,
          scope: row.scope,
          createdAt: row.created_at,
          revokedAt: row.revoked_at,
        }
      : null;
  }

  getOAuthRefreshToken(tokenHash: string): OAuthRefreshTokenRecord | null {
    const row = this.sql.refreshToken.get(tokenHash);
    return row
      ? {
          tokenHash: row.token_hash,
          grantId: row.grant_id,
          scope: row.scope,
          expiresAt: row.expires_at,
          usedAt: row.used_at,
        }
      : null;
  }

  /**
   * Rotates a refresh token: marks it used and records what replaces it, in one transaction.
   * False (nothing written) when it was used meanwhile.
   */
  rotateOAuthRefreshToken(tokenHash: string, grantId: string, issued: OAuthIssue, now: number): boolean {
    return this.unlessAlreadyUsed(() => {
      if (this.conn.run(this.sql.useRefreshToken, { tokenHash, now }).changes !== 1) throw new AlreadyUsedError();
      this.recordIssue(grantId, issued);
    });
  }

  /**
   * Revokes a grant: its refresh tokens stop working, and so do its access tokens (see
   * isAccessTokenRevoked); the push subscriptions made under it are removed.
   */
  revokeOAuthGrant(id: string, now = Date.now()): void {
    this.conn.transaction(() => {
      this.conn.run(this.sql.revokeGrant, { id, now });
      this.push.removeOfGrant(id);
    });
  }

  /** Every grant the user gave, revoked, with the push subscriptions made under them; how many were live. */
  private revokeGrantsOfUser(username: string, now: number): number {
    const revoked = this.conn.run(this.sql.revokeGrantsOfUser, { username, now }).changes;
    this.push.removeOfUserGrants(username);
    return revoked;
  }

  /** The grant an access token of the local authorization server belongs to (by its jti), while it is recorded. */
  getOAuthAccessTokenGrant(jti: string): string | null {
    return this.sql.accessTokenGrant.get(jti) ?? null;
  }

  /**
   * True for an access token of the local authorization server whose grant was revoked or no
   * longer exists (its client or user was removed). Tokens it does not know (from the token
   * command, or from other issuers) are not its business: false.
   */
  isAccessTokenRevoked(jti: string): boolean {
    // Asked on every API request, so its answer is memoised like a list page: until the next write
    // here or commit elsewhere, which the look below notices (OTHER_COMMITS_LOOK_MS; docs/performance.md).
    this.conn.pages.forgetIfChangedElsewhere();
    let revoked = this.revokedAccessTokens.get(jti);
    if (revoked === undefined) {
      const live = this.sql.accessTokenLive.get(jti);
      revoked = live === 0;
      if (this.revokedAccessTokens.size >= MAX_REMEMBERED_TOKENS) {
        const oldest = this.revokedAccessTokens.keys().next();
        if (!oldest.done) this.revokedAccessTokens.delete(oldest.value);
      }
      this.revokedAccessTokens.set(jti, revoked);
    }
    return revoked;
  }

  /** Forgets what has expired: codes, refresh and access tokens, and grants with nothing left. */
  pruneOAuth(now = Date.now()): void {
    this.conn.transaction(() => {
      this.conn.run(this.sql.pruneCodes, { now });
      this.conn.run(this.sql.pruneRefreshTokens, { now });
      this.conn.run(this.sql.pruneAccessTokens, { now });
      this.conn.run(this.sql.pruneGrants);
    });
  }

  /** Runs fn in a transaction; false when it threw AlreadyUsedError (and so wrote nothing). */
  private unlessAlreadyUsed(fn: () => void): boolean {
    try {
      this.conn.transaction(fn);
      return true;
    } catch (err) {
      if (err instanceof AlreadyUsedError) return false;
      throw err;
    }
  }

  private recordIssue(grantId: string, issued: OAuthIssue): void {
    this.conn.run(this.sql.insertAccessToken, { jti: issued.accessJti, grantId, expiresAt: issued.accessExpiresAt });
    if (issued.refresh) this.conn.run(this.sql.insertRefreshToken, { ...issued.refresh, grantId });
  }
}
