import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ownOrigin } from '../../../auth/oauth/first-party.js';
import { GRANT_TYPES } from '../../../auth/oauth/params.js';
import { SCOPES } from '../../../auth/scope-catalogue.js';
import { parserErrorResponses } from '../../schemas.js';
import type { OAuthRoutesOptions } from './options.js';

// RFC 8414 metadata: where a client finds the endpoints and what the server supports.

const MetadataSchema = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    jwks_uri: Type.String(),
    revocation_endpoint: Type.String(),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
  },
  { title: 'AuthorizationServerMetadata' },
);

export async function metadataRoutes(
  app: FastifyInstance,
  opts: Pick<OAuthRoutesOptions, 'issuer' | 'firstParty'>,
): Promise<void> {
  const base = opts.issuer.replace(/\/+$/, '');
  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { public: true },
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        summary: 'Authorization server metadata (RFC 8414)',
        tags: ['oauth'],
        response: { 200: MetadataSchema, ...parserErrorResponses },
      },
    },
    // The endpoints are on the origin the client asked (when it is this box), so a browser app on
    // https://192.168.1.20:8443 calls its own origin; the issuer stays the one its tokens name.
    async (request) => {
      const at = ownOrigin(request.headers.host, opts.firstParty) ?? base;
      return {
        issuer: opts.issuer,
        authorization_endpoint: `${at}/oauth/authorize`,
        token_endpoint: `${at}/oauth/token`,
        jwks_uri: `${at}/.well-known/jwks.json`,
        revocation_endpoint: `${at}/oauth/revoke`,
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        scopes_supported: [...SCOPES],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: [...GRANT_TYPES],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      };
    },
  );
}
