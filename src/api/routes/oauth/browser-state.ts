import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LocalUserRecord } from '../../../store/store.js';
import { cookieValue, hostCookie } from '../../forms.js';
import type { AuthorizeContext } from './options.js';

// The browser's state between the pages, in two cookies: its CSRF token, and its sign-in
// session (the one answer a sign-in allows is given on the consent page).

const CSRF_COOKIE = '__Host-eg-oauth-csrf';
const SESSION_COOKIE = '__Host-eg-oauth-session';
const CSRF_MAX_AGE_S = 3600;
const SESSION_MAX_AGE_S = 600;

/** The browser's CSRF token: the cookie's value, or a new one (set on this answer). */
export function csrfOf(request: FastifyRequest, reply: FastifyReply): string {
  const existing = cookieValue(request.headers.cookie, CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const fresh = randomBytes(32).toString('base64url');
  reply.header('set-cookie', hostCookie(CSRF_COOKIE, fresh, CSRF_MAX_AGE_S));
  return fresh;
}

/**
 * The browser's CSRF token when the form passes the check, else null. The form must carry the
 * value of our own SameSite=Strict cookie, and a browser that names the page's origin must name ours.
 */
export function formCsrf(request: FastifyRequest, sent: unknown): string | null {
  const cookie = cookieValue(request.headers.cookie, CSRF_COOKIE);
  const origin = request.headers.origin;
  if (!cookie || !sameSecret(cookie, typeof sent === 'string' ? sent : '')) return null;
  if (origin !== undefined && origin !== `https://${request.headers.host ?? ''}`) return null;
  return cookie;
}

/** The browser's sign-in session, and its user while it lasts. */
export function signedIn(
  ctx: Pick<AuthorizeContext, 'sessions' | 'users' | 'now'>,
  request: FastifyRequest,
): { sessionId: string | undefined; user: LocalUserRecord | null } {
  const sessionId = cookieValue(request.headers.cookie, SESSION_COOKIE);
  const username = ctx.sessions.get(sessionId, ctx.now());
  return { sessionId, user: username === null ? null : ctx.users.getLocalUser(username) };
}

/** Starts a sign-in session for `username` in place of the browser's; the cookie that carries it. */
export function startSession(
  ctx: Pick<AuthorizeContext, 'sessions'>,
  request: FastifyRequest,
  username: string,
  now: number,
): string {
  const previous = cookieValue(request.headers.cookie, SESSION_COOKIE);
  if (previous) ctx.sessions.end(previous);
  return hostCookie(SESSION_COOKIE, ctx.sessions.create(username, now), SESSION_MAX_AGE_S);
}

/** Ends the browser's sign-in session; the cookie that removes it. */
export function endSession(ctx: Pick<AuthorizeContext, 'sessions'>, sessionId: string | undefined): string {
  if (sessionId) ctx.sessions.end(sessionId);
  return hostCookie(SESSION_COOKIE, '', 0);
}

/** Constant-time comparison of two CSRF values. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
