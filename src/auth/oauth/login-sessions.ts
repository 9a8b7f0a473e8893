import { randomBytes } from 'node:crypto';

// Who signed in on the login page, for the consent step that follows. In memory on purpose: a
// session only spans one authorization (it ends with the user's answer), so a restart costs at
// most one more password entry, and nothing about logins is written to the SD card.

export interface LoginSessionsOptions {
  /** How long a sign-in is good for the consent step, ms. */
  ttlMs: number;
  /** Most sessions held; the oldest goes first (a flood of logins cannot grow memory). */
  maxSessions: number;
}

export const DEFAULT_LOGIN_SESSIONS: Readonly<LoginSessionsOptions> = Object.freeze({
  ttlMs: 10 * 60_000,
  maxSessions: 1000,
});

export class LoginSessions {
  // Insertion order is age order: the first key is the oldest.
  private readonly sessions = new Map<string, { username: string; expiresAt: number }>();
  private readonly opts: LoginSessionsOptions;

  constructor(opts: Partial<LoginSessionsOptions> = {}) {
    this.opts = { ...DEFAULT_LOGIN_SESSIONS, ...opts };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** A new session id (256 random bits, base64url) for `username`. */
  create(username: string, now: number): string {
    while (this.sessions.size >= this.opts.maxSessions) {
      const oldest = this.sessions.keys().next();
      if (oldest.done === true) break;
      this.sessions.delete(oldest.value);
    }
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { username, expiresAt: now + this.opts.ttlMs });
    return id;
  }

  /** The username of a live session, or null (unknown, expired or ended). */
  get(id: string | undefined, now: number): string | null {
    if (id === undefined) return null;
    const session = this.sessions.get(id);
    if (!session) return null;
    if (session.expiresAt <= now) {
      this.sessions.delete(id);
      return null;
    }
    return session.username;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }
}
