import type { FastifyInstance, FastifyReply } from 'fastify';
import Type from 'typebox';
import { OAuthError, oauthErrorBody, oauthErrorStatus, tokenErrorHeaders } from '../../../auth/oauth/errors.js';
import { parseRevocationRequest, parseTokenRequest } from '../../../auth/oauth/params.js';
import { SCOPES } from '../../../auth/scope-catalogue.js';
import { oauthErrorResponse, parserErrorResponses } from '../../schemas.js';
import type { OAuthRoutesOptions } from './options.js';

// The endpoints clients call directly: /oauth/token and /oauth/revoke, each answering JSON with
// RFC 6749 §5.2 errors.

const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    refresh_token: Type.Optional(Type.String()),
    scope: Type.String(),
  },
  { title: 'TokenResponse' },
);

/**
 * What the token and revocation endpoints answer besides their own 400s (oauthErrorStatus in src/auth/oauth/errors.ts).
 */
const clientEndpointErrors = {
  401: oauthErrorResponse('invalid_client: client authentication failed'),
  ...parserErrorResponses,
  500: oauthErrorResponse('server_error: the gateway failed to answer'),
  503: oauthErrorResponse('temporarily_unavailable'),
};

export async function tokenRoutes(app: FastifyInstance, opts: Pick<OAuthRoutesOptions, 'server'>): Promise<void> {
  app.post(
    '/oauth/token',
    {
      config: { public: true },
      schema: {
        operationId: 'requestToken',
        summary: 'Token exchange, refresh and client credentials (RFC 6749 §4.1.3, §6, §4.4; JSON or form body)',
        tags: ['oauth'],
        // The statuses of oauthErrorStatus (src/auth/oauth/errors.ts); a body the gateway cannot read is
        // invalid_request.
        response: {
          200: TokenResponseSchema,
          400: oauthErrorResponse(
            'invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type or invalid_scope (RFC 6749 §5.2)',
          ),
          ...clientEndpointErrors,
        },
      },
    },
    async (request, reply) => {
      const authorization = request.headers.authorization;
      const parsed = parseTokenRequest(request.body, { knownScopes: SCOPES, authorization });
      if (!parsed.ok) return sendTokenError(reply, parsed.error, authorization);
      return answerClient(reply, authorization, () => opts.server.token(parsed.request));
    },
  );

  app.post(
    '/oauth/revoke',
    {
      config: { public: true },
      schema: {
        operationId: 'revokeToken',
        summary:
          'Token revocation (RFC 7009): a refresh or access token ends its whole grant (sign-out); JSON or form body',
        tags: ['oauth'],
        response: {
          200: {
            type: 'null',
            description: 'Revoked, or nothing to revoke (an unknown, invalid or expired token: RFC 7009 §2.2)',
          },
          400: oauthErrorResponse(
            'invalid_request (no token, a parameter given twice) or unauthorized_client (the token was issued to another client)',
          ),
          ...clientEndpointErrors,
        },
      },
    },
    async (request, reply) => {
      const authorization = request.headers.authorization;
      const parsed = parseRevocationRequest(request.body, { authorization });
      if (!parsed.ok) return sendTokenError(reply, parsed.error, authorization);
      return answerClient(reply, authorization, () => opts.server.revoke(parsed.request));
    },
  );
}

/** 200 with what `work` gives (no body for undefined), or the OAuthError it throws as RFC 6749 §5.2 says. */
async function answerClient(
  reply: FastifyReply,
  authorization: string | undefined,
  work: () => Promise<unknown>,
): Promise<FastifyReply> {
  try {
    const body = await work();
    return reply.code(200).headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(body);
  } catch (err) {
    // instanceof on a generic class gives OAuthError<any>: say which.
    if (err instanceof OAuthError) return sendTokenError(reply, err as OAuthError, authorization);
    throw err;
  }
}

export function sendTokenError(reply: FastifyReply, err: OAuthError, authorization: string | undefined): FastifyReply {
  return reply
    .code(oauthErrorStatus(err.code))
    .headers(tokenErrorHeaders(err, authorization))
    .send(oauthErrorBody(err));
}
