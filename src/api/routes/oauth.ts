import type { FastifyInstance } from 'fastify';
import { OAuthError, oauthErrorStatus } from '../../auth/oauth/errors.js';
import { parseFormBody } from '../forms.js';
import { useStrictJsonParser } from '../json-body.js';
import { RepeatedJsonNameError } from '../errors.js';
import { errorPage } from '../oauth-pages.js';
import { authorizeRoutes } from './oauth/authorize.js';
import { metadataRoutes } from './oauth/metadata.js';
import type { OAuthRoutesOptions } from './oauth/options.js';
import { sendPage } from './oauth/replies.js';
import { sendTokenError, tokenRoutes } from './oauth/token.js';

export type { OAuthRoutesOptions } from './oauth/options.js';

// The local authorization server's HTTP side (docs/oauth.md): /oauth/authorize (login and consent
// pages), /oauth/token and /oauth/revoke, and the RFC 8414 metadata, one part each in oauth/.
// Rules live in src/auth/oauth/; the parts read requests, keep the browser's state in two cookies
// and write the answers. This plugin is their common scope: how bodies are read, and what a body
// that cannot be read gets.

export async function oauthRoutes(app: FastifyInstance, opts: OAuthRoutesOptions): Promise<void> {
  // Forms only here: the /v1 API keeps to JSON.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, parseFormBody(body as string)),
  );
  // JSON as everywhere, a repeated name refused as in forms; an empty body is an error here.
  useStrictJsonParser(app, { emptyBody: 'error' });

  // Body and content-type failures (bad JSON, a content type we do not read, too large) are the
  // client's malformed request: RFC 6749's invalid_request, as a JSON error at the token endpoint
  // and as a page at the authorization endpoint.
  app.setErrorHandler(async (err: Error & { statusCode?: number }, request, reply) => {
    const clientFault = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500;
    if (!clientFault) request.log.error({ err, url: request.url }, 'oauth request failed');
    const oauth =
      err instanceof RepeatedJsonNameError
        ? new OAuthError('invalid_request', err.message)
        : clientFault
          ? new OAuthError('invalid_request', 'the request body could not be read')
          : new OAuthError('server_error', 'the gateway failed to answer; see its log');
    if (request.url.startsWith('/oauth/token') || request.url.startsWith('/oauth/revoke'))
      return sendTokenError(reply, oauth, request.headers.authorization);
    return sendPage(
      reply,
      oauthErrorStatus(oauth.code),
      errorPage({ title: 'Request refused', error: oauth.code, description: oauth.description }),
    );
  });

  // Registered after the parsers and the error handler: a part's scope takes the ones its parent
  // has when the part is registered.
  await app.register(metadataRoutes, opts);
  await app.register(tokenRoutes, opts);
  await app.register(authorizeRoutes, { ...opts, now: opts.now ?? Date.now });
}
