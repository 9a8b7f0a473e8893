import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitKeyForIp, type RateLimitDecision } from '../../../auth/oauth/login-rate-limit.js';
import { hashPassword, needsRehash, verifyPassword } from '../../../auth/oauth/password.js';
import type { LocalUserRecord } from '../../../store/store.js';
import type { AuthorizeOk } from './authorize-request.js';
import { startSession } from './browser-state.js';
import { answerWithCode, grantable } from './consent.js';
import type { AuthorizeContext, OAuthRoutesOptions } from './options.js';
import { sendLoginPage, sendRedirect } from './replies.js';

// The sign-in form's answer: the password checked under the rate limits, then on to the consent
// page (or, for the web app, straight back with a code).

type Verdict = { kind: 'throttled'; waitS: number } | { kind: 'wrong' } | { kind: 'right'; user: LocalUserRecord };

/** Signs the browser in with the form's username and password. */
export async function signIn(
  ctx: AuthorizeContext,
  request: FastifyRequest,
  reply: FastifyReply,
  ok: AuthorizeOk,
  csrf: string,
  form: Record<string, unknown>,
): Promise<FastifyReply> {
  const username = typeof form.username === 'string' ? form.username : '';
  const password = typeof form.password === 'string' ? form.password : '';
  const t = ctx.now();
  const verdict = await verify(ctx, request.ip, username, password, t);
  if (verdict.kind === 'throttled') {
    reply.header('retry-after', String(verdict.waitS));
    return sendLoginPage(reply, 429, ok, csrf, {
      username,
      error: `Too many failed sign-ins. Try again in ${verdict.waitS} s.`,
    });
  }
  if (verdict.kind === 'wrong')
    return sendLoginPage(reply, 401, ok, csrf, { username, error: 'Wrong username or password.' });
  const { user } = verdict;
  // The web app has no consent page: signed in, the answer goes straight back with the code.
  if (ok.firstParty) return answerWithCode(ctx, reply, ok, user, grantable(ok, user), null);
  const session = startSession(ctx, request, user.username, t);
  // 303 to the same request as a GET: reloading the consent page never posts the password again.
  return sendRedirect(reply, `/oauth/authorize?${new URLSearchParams(ok.fields).toString()}`, session);
}

/** The password checked under both rate limits; a right one gives its attempts back and is rehashed when due. */
async function verify(
  ctx: AuthorizeContext,
  ip: string,
  username: string,
  password: string,
  now: number,
): Promise<Verdict> {
  const userKey = `user:${username.normalize('NFC').toLowerCase()}`;
  const addressKey = rateLimitKeyForIp(ip);
  // Counted as failed before the slow password check, and given back if it is right: a
  // parallel burst then gets no more attempts than a sequence would (docs/oauth.md).
  const refusal = reserveAttempt(ctx.limits, userKey, addressKey, now);
  if (refusal !== null) return { kind: 'throttled', waitS: Math.ceil(refusal.retryAfterMs / 1000) };
  const user = username === '' ? null : ctx.users.getLocalUser(username);
  const good = await verifyPassword(password, user?.passwordHash ?? null).catch(() => false);
  if (!user || !good) {
    // Not the name itself: people type their password into the username field.
    ctx.logger.info({ usernameHash: logHash(username), address: ip }, 'local sign-in failed');
    return { kind: 'wrong' };
  }
  ctx.limits.byAddress.release(addressKey);
  ctx.limits.byUser.succeed(userKey);
  if (needsRehash(user.passwordHash)) ctx.users.updateLocalUserPassword(user.username, await hashPassword(password));
  return { kind: 'right', user };
}

/**
 * Reserves one attempt for the username and one for the address; null when both are granted,
 * else the refusal (and nothing stays reserved).
 */
function reserveAttempt(
  limits: OAuthRoutesOptions['limits'],
  userKey: string,
  addressKey: string,
  now: number,
): Extract<RateLimitDecision, { allowed: false }> | null {
  const byUser = limits.byUser.reserve(userKey, now);
  if (!byUser.allowed) return byUser;
  const byAddress = limits.byAddress.reserve(addressKey, now);
  if (byAddress.allowed) return null;
  limits.byUser.release(userKey);
  return byAddress;
}

// Keyed with a secret that lives only as long as the process, so the short hashes in the log
// tell repeated attempts apart within a run but cannot be reversed by guessing what was typed.
const LOG_HASH_KEY = randomBytes(32);

/** 48 bits of HMAC-SHA-256: enough to tell names apart in a log, too few to identify a secret. */
function logHash(text: string): string {
  return createHmac('sha256', LOG_HASH_KEY).update(text, 'utf8').digest('hex').slice(0, 12);
}
