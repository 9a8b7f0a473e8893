import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { OAuthError } from '../../../auth/oauth/errors.js';
import { errorPage } from '../../oauth-pages.js';
import { parserErrorResponses } from '../../schemas.js';
import { checkAuthorizeRequest } from './authorize-request.js';
import { csrfOf, formCsrf, signedIn } from './browser-state.js';
import { answerConsent, showConsent } from './consent.js';
import type { AuthorizeContext } from './options.js';
import { sendCheckPage, sendLoginPage, sendPage, sendRedirect } from './replies.js';
import { signIn } from './sign-in.js';

// /oauth/authorize: the pages a browser goes through (sign-in, consent) and their forms.

/** An HTML page of the browser flow (login, consent, or an error the user reads). */
const pageResponse = (description: string) => ({ description, content: { 'text/html': { schema: Type.String() } } });
/** A 303 to the Location; no body. */
const redirectResponse = (description: string) => ({ type: 'null', description, headers: { location: Type.String() } });

const authorizeSchema = {
  operationId: 'getAuthorizationPage',
  summary: 'Authorization request: login and consent pages (RFC 6749 §4.1.1)',
  tags: ['oauth'],
  response: {
    200: pageResponse('The sign-in page, or the consent page when the browser is signed in'),
    303: redirectResponse("To the client's redirect_uri with an error (RFC 6749 §4.1.2.1)"),
    400: pageResponse(
      'An error page: the request is malformed, or names an unknown client or redirect_uri (nothing is sent to the client)',
    ),
    ...parserErrorResponses,
  },
};

const formSchema = {
  operationId: 'submitAuthorizationForm',
  summary: 'Login and consent form answers',
  tags: ['oauth'],
  // Every answer that is not an error is a redirect: after a sign-in to the consent page, after a
  // consent or refusal to the client.
  response: {
    303: redirectResponse(
      "After a sign-in: back to the consent page; after an answer: to the client's redirect_uri with a code or an error",
    ),
    400: pageResponse('An error page: the form or the request it repeats is malformed'),
    401: pageResponse('The sign-in page again: wrong username or password, or the sign-in expired'),
    403: pageResponse('An error page: the form expired or was not sent from this page (CSRF check)'),
    ...parserErrorResponses,
    429: pageResponse('The sign-in page again: too many failed sign-ins (Retry-After)'),
    default: pageResponse('An error page: server_error, the gateway failed to answer'),
  },
};

export async function authorizeRoutes(app: FastifyInstance, ctx: AuthorizeContext): Promise<void> {
  app.get('/oauth/authorize', { config: { public: true }, schema: authorizeSchema }, async (request, reply) =>
    showAuthorizePage(ctx, request, reply),
  );
  app.post('/oauth/authorize', { config: { public: true }, schema: formSchema }, async (request, reply) =>
    answerAuthorizeForm(ctx, request, reply),
  );
}

/** The sign-in page, or the consent page when the browser is signed in. */
function showAuthorizePage(ctx: AuthorizeContext, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const checked = checkAuthorizeRequest(request.query, request.headers.host, ctx);
  if (checked.kind === 'page') return sendCheckPage(reply, checked);
  if (checked.kind === 'redirect') return sendRedirect(reply, checked.location);
  const csrf = csrfOf(request, reply);
  // The web app always shows the sign-in form: a GET never hands out a code by itself.
  if (!checked.firstParty) {
    const { sessionId, user } = signedIn(ctx, request);
    if (user) return showConsent(ctx, reply, checked, user, csrf, sessionId);
  }
  return sendLoginPage(reply, 200, checked, csrf);
}

/** A sign-in or consent form: the CSRF check, the request it repeats, then its action. */
async function answerAuthorizeForm(
  ctx: AuthorizeContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const form = request.body;
  if (typeof form !== 'object' || form === null)
    return sendCheckPage(reply, { status: 400, error: new OAuthError('invalid_request', 'the form is empty') });
  const fields = form as Record<string, unknown>;
  // CSRF, checked before anything else is looked at.
  const csrf = formCsrf(request, fields.csrf);
  if (csrf === null) {
    return sendPage(
      reply,
      403,
      errorPage({
        title: 'Form refused',
        error: 'invalid_request',
        description: 'the form expired or was not sent from this page; go back to the app and start again',
      }),
    );
  }
  const checked = checkAuthorizeRequest(fields, request.headers.host, ctx);
  if (checked.kind === 'page') return sendCheckPage(reply, checked);
  if (checked.kind === 'redirect') return sendRedirect(reply, checked.location);
  const action = fields.action;
  if (action === 'login') return signIn(ctx, request, reply, checked, csrf, fields);
  if ((action !== 'allow' && action !== 'deny') || checked.firstParty) {
    return sendCheckPage(reply, {
      status: 400,
      error: new OAuthError('invalid_request', 'the form has no known action'),
    });
  }
  return answerConsent(ctx, request, reply, checked, csrf, action);
}
