import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_SCOPES } from '../../../auth/oauth/authorization-server.js';
import { OAuthError } from '../../../auth/oauth/errors.js';
import { ROLE_SCOPES, scopesForRole } from '../../../auth/roles.js';
import { SCOPE_MEANINGS, isScope } from '../../../auth/scope-catalogue.js';
import type { LocalUserRecord } from '../../../store/store.js';
import { consentPage } from '../../oauth-pages.js';
import type { AuthorizeOk } from './authorize-request.js';
import { endSession, signedIn } from './browser-state.js';
import type { AuthorizeContext } from './options.js';
import { clientRedirect, sendCheckPage, sendLoginPage, sendPage, sendRedirect } from './replies.js';

// What a signed-in user is asked, what their answer sends to the client, and the code itself.

/**
 * What the user may be given: the requested scopes (none asked for: the web app gets what the
 * role allows, other clients the read scopes) that the user's role allows. Possibly none.
 */
export function grantable(ok: AuthorizeOk, user: LocalUserRecord): Set<string> {
  return scopesForRole(ok.scopes ?? (ok.firstParty ? ROLE_SCOPES[user.role] : DEFAULT_SCOPES), user.role);
}

/** The consent page, or the refusal straight away when the user's role allows none of the scopes. */
export function showConsent(
  ctx: AuthorizeContext,
  reply: FastifyReply,
  ok: AuthorizeOk,
  user: LocalUserRecord,
  csrf: string,
  sessionId: string | undefined,
): FastifyReply {
  const granted = grantable(ok, user);
  // Nothing to consent to: the answer is a refusal, and like every answer it ends the session.
  if (granted.size === 0) return answerWithCode(ctx, reply, ok, user, granted, endSession(ctx, sessionId));
  const scopes = [...granted].sort().map((name) => ({ name, meaning: isScope(name) ? SCOPE_MEANINGS[name] : name }));
  return sendPage(
    reply,
    200,
    consentPage({
      clientName: ok.clientName,
      username: user.username,
      destination: destinationOf(ok.request.redirectUri),
      scopes,
      request: ok.fields,
      csrf,
    }),
  );
}

/** The consent form's answer, allow or deny, for the user of the browser's sign-in session. */
export function answerConsent(
  ctx: AuthorizeContext,
  request: FastifyRequest,
  reply: FastifyReply,
  ok: AuthorizeOk,
  csrf: string,
  action: 'allow' | 'deny',
): FastifyReply {
  const { sessionId, user } = signedIn(ctx, request);
  if (!user) return sendLoginPage(reply, 401, ok, csrf, { error: 'Your sign-in expired. Sign in again.' });
  // One answer per sign-in: the session ends here, whatever the answer.
  const expire = endSession(ctx, sessionId);
  if (action === 'deny')
    return sendRedirect(
      reply,
      clientRedirect(ctx.issuer, ok.request, { error: new OAuthError('access_denied', 'the user denied access') }),
      expire,
    );
  return answerWithCode(ctx, reply, ok, user, grantable(ok, user), expire);
}

/** 303 to the client with a new code for these scopes, or access_denied when there are none. */
export function answerWithCode(
  ctx: AuthorizeContext,
  reply: FastifyReply,
  ok: AuthorizeOk,
  user: LocalUserRecord,
  scopes: ReadonlySet<string>,
  setCookie: string | null,
): FastifyReply {
  const req = ok.request;
  if (scopes.size === 0) {
    return sendRedirect(
      reply,
      clientRedirect(ctx.issuer, req, {
        error: new OAuthError('access_denied', "the account's role allows none of the requested scopes"),
      }),
      setCookie,
    );
  }
  const client = ctx.server.findClient(req.clientId);
  if (!client)
    return sendCheckPage(reply, { status: 400, error: new OAuthError('invalid_client', 'unknown client_id') });
  const code = ctx.server.createCode({
    client,
    redirectUri: req.redirectUri,
    user: user.username,
    scopes,
    codeChallenge: ok.codeChallenge,
  });
  ctx.logger.info(
    { username: user.username, role: user.role, clientId: client.id, scope: [...scopes].sort().join(' ') },
    'local authorization granted',
  );
  return sendRedirect(reply, clientRedirect(ctx.issuer, req, { code }), setCookie);
}

/** What the consent page shows as the answer's destination: scheme and host of the redirect URI. */
function destinationOf(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.host === '' ? `${url.protocol}${url.pathname}` : `${url.protocol}//${url.host}`;
  } catch {
    return redirectUri;
  }
}
