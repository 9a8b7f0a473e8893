import type { FastifyReply } from 'fastify';
import { errorRedirect, type AuthorizeErrorCode, type OAuthError } from '../../../auth/oauth/errors.js';
import { codeRedirect } from '../../../auth/oauth/redirect-uri.js';
import { errorPage, loginPage, PAGE_HEADERS } from '../../oauth-pages.js';
import type { AuthorizeOk } from './authorize-request.js';

// What the authorization pages send back: pages, and 303s to this server or to the client.

export function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

/** The page of an authorization request that cannot be answered by a redirect to its client. */
export function sendCheckPage(reply: FastifyReply, checked: { status: number; error: OAuthError }): FastifyReply {
  return sendPage(
    reply,
    checked.status,
    errorPage({
      title: 'This sign-in link does not work',
      error: checked.error.code,
      description: checked.error.description,
    }),
  );
}

/** The sign-in page of the request, with the username typed so far and why it is shown again. */
export function sendLoginPage(
  reply: FastifyReply,
  status: number,
  ok: AuthorizeOk,
  csrf: string,
  again: { username?: string; error?: string } = {},
): FastifyReply {
  return sendPage(
    reply,
    status,
    loginPage({ clientName: ok.clientName, firstParty: ok.firstParty, request: ok.fields, csrf, ...again }),
  );
}

/** A 303 to `location`, never cached; `cookie`, when given, is set on the same answer. */
export function sendRedirect(reply: FastifyReply, location: string, cookie: string | null = null): FastifyReply {
  if (cookie !== null) reply.header('set-cookie', cookie);
  return reply.code(303).header('location', location).header('cache-control', 'no-store').send();
}

/** The answer to the client: a code (RFC 6749 §4.1.2) or an error (§4.1.2.1). */
export type ClientAnswer = { code: string } | { error: OAuthError<AuthorizeErrorCode> };

/**
 * Where the browser takes the answer to the client: the request's redirect URI (already matched
 * against the client's) with the code or error, the request's state, and RFC 9207's iss.
 */
export function clientRedirect(
  issuer: string,
  to: { redirectUri: string; state: string | undefined },
  answer: ClientAnswer,
): string {
  return 'code' in answer
    ? codeRedirect(to.redirectUri, answer.code, to.state, issuer)
    : errorRedirect(to.redirectUri, answer.error, to.state, issuer);
}
