import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';
import Type from 'typebox';

export interface SystemRoutesOptions {
  version: string;
  registry: Registry;
  /** Whether the system clock is synchronised (a Pi has no RTC); null when it cannot be told. */
  clockSynchronized: () => boolean | null;
  /** The local issuer's public keys, when it is enabled. */
  localJwks: (() => { keys: object[] }) | null;
  /** The OpenAPI document, built from the routes' schemas. */
  openapi: () => unknown;
  uptimeS: () => number;
}

export const systemRoutes: FastifyPluginAsyncTypebox<SystemRoutesOptions> = async (app, opts) => {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        summary: 'Liveness and basic state (no authentication)',
        tags: ['system'],
        response: {
          200: Type.Object({
            status: Type.Literal('ok'),
            version: Type.String(),
            uptime_s: Type.Number(),
            clock_synchronized: Type.Union([Type.Boolean(), Type.Null()], {
              description: 'false until the system clock has been set over the network; timestamps may be wrong until then',
            }),
          }),
        },
      },
    },
    async () => ({ status: 'ok' as const, version: opts.version, uptime_s: Math.round(opts.uptimeS()), clock_synchronized: opts.clockSynchronized() }),
  );

  app.get(
    '/metrics',
    { config: { public: true }, schema: { summary: 'Prometheus metrics (no authentication)', tags: ['system'] } },
    async (_req, reply) => {
      reply.header('content-type', opts.registry.contentType);
      return opts.registry.metrics();
    },
  );

  app.get(
    '/v1/openapi.json',
    { config: { public: true }, schema: { summary: 'This API as an OpenAPI 3.1 document', tags: ['system'] } },
    async () => opts.openapi(),
  );

  const jwks = opts.localJwks;
  if (jwks) {
    app.get(
      '/.well-known/jwks.json',
      { config: { public: true }, schema: { summary: "The local issuer's public keys (RFC 7517)", tags: ['system'] } },
      async (_req, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return jwks();
      },
    );
  }
};
