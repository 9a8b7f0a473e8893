import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errorResponse, parserErrorResponses } from '../schemas.js';
import type { DetectorHealth } from '../../detect/service.js';

export interface SystemRoutesOptions {
  /** The local issuer's public keys, when it is enabled. */
  localJwks: (() => { keys: object[] }) | null;
  /** The OpenAPI document, built from the routes' schemas. */
  openapi: () => unknown;
  /** The object detector's state (absent: not reported). */
  detector?: () => DetectorHealth;
  /** Whether the service is near its memory limit; null or absent: no limit set, not reported. */
  memory?: () => 'ok' | 'near_limit' | null;
}

export const systemRoutes: FastifyPluginAsyncTypebox<SystemRoutesOptions> = async (app, opts) => {
  // Up or not, nothing more: the API faces the LAN, and a version or uptime tells a stranger what to
  // try. The API listens only once the gateway has started, and answers 503 while it stops
  // (return503OnClosing). Versions, uptime, clock state and the rest are on the metrics listener,
  // and for an admin's token at GET /v1/system (system-status.ts).
  // The detector's state is the exception: whether people are being told apart is what
  // an installer checks after setup; its reason for failing stays in the log. So is a service
  // near its memory limit: the kernel is about to slow it down or stop it (the figures are in
  // /metrics).
  const detector = opts.detector;
  const memory = opts.memory;
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        operationId: 'getHealth',
        summary: 'Whether the gateway is up (no authentication)',
        tags: ['system'],
        response: {
          200: Type.Object(
            {
              status: Type.Literal('ok'),
              detector: Type.Optional(
                Type.Enum(['off', 'loading', 'ready', 'failed'], {
                  description:
                    'The person/vehicle detector: failed when its model could not be loaded (recording goes on)',
                }),
              ),
              memory: Type.Optional(
                Type.Enum(['ok', 'near_limit'], {
                  description:
                    "near_limit: the service uses 90 % or more of its memory limit (systemd's MemoryHigh / MemoryMax); absent when none is set",
                }),
              ),
            },
            { additionalProperties: false },
          ),
          ...parserErrorResponses,
        },
      },
    },
    async () => {
      const state = memory?.() ?? null;
      return {
        status: 'ok' as const,
        ...(detector ? { detector: detector() } : {}),
        ...(state ? { memory: state } : {}),
      };
    },
  );

  app.get(
    '/v1/openapi.json',
    {
      config: { public: true },
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This API as an OpenAPI 3.1 document',
        tags: ['system'],
        // A description and no schema for the 200: with one, the serialiser would keep only the properties it names.
        response: {
          200: { description: 'The document' },
          400: errorResponse('invalid_request: this operation takes no query parameters'),
          ...parserErrorResponses,
        },
      },
    },
    async () => opts.openapi(),
  );

  const jwks = opts.localJwks;
  if (jwks) {
    app.get(
      '/.well-known/jwks.json',
      {
        config: { public: true },
        schema: {
          operationId: 'getJwks',
          summary: "The local issuer's public keys (RFC 7517)",
          tags: ['system'],
          response: { 200: { description: 'A JSON Web Key Set' }, ...parserErrorResponses },
        },
      },
      async (_req, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return jwks();
      },
    );
  }
};
