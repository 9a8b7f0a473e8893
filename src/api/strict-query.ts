import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import Type from 'typebox';

// Every /v1 route refuses query parameters it does not know (docs/api.md), also the routes that
// take none: without a querystring schema Fastify would not look at the query at all.

const NO_PARAMETERS = Type.Object({}, { additionalProperties: false });

async function strictQueryPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/') || route.schema?.querystring !== undefined) return;
    route.schema = { ...route.schema, querystring: NO_PARAMETERS };
  });
}

export const strictQuery = fp(strictQueryPlugin, { name: 'strict-query', fastify: '5.x' });
