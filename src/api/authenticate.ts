import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { parseBearer } from '../auth/bearer.js';
import { hasScope } from '../auth/scope-claim.js';
import type { Scope } from '../auth/scope-catalogue.js';
import type { TokenCheck, VerifiedToken } from '../auth/verifier.js';
import { authErrors } from './errors.js';

export type { Scope } from '../auth/scope-catalogue.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs. Routes without one are refused unless marked public. */
    scope?: Scope;
    public?: boolean;
  }
  interface FastifyRequest {
    token: VerifiedToken | null;
  }
}

/**
 * Every route needs a bearer token unless its config says `public: true`; the scope a route needs
 * sits in its config and is copied into its OpenAPI security requirement (`[]` for a public one:
 * none needed), so the two cannot drift.
 */
async function authenticatePlugin(app: FastifyInstance, opts: { verifier: TokenCheck }): Promise<void> {
  app.decorateRequest('token', null);

  app.addHook('onRoute', (route) => {
    // CORS preflights (@fastify/cors's OPTIONS routes) never carry credentials (Fetch standard).
    if (route.method === 'OPTIONS' && !route.config?.scope) route.config = { ...route.config, public: true };
    const scope = route.config?.scope;
    if (scope) route.schema = { ...route.schema, security: [{ bearer: [scope] }] };
    else if (route.config?.public) route.schema = { ...route.schema, security: [] };
    else throw new Error(`route ${String(route.method)} ${route.url} has neither a scope nor public: true`);
  });

  app.addHook('onRequest', async (request: FastifyRequest) => {
    const config = request.routeOptions.config;
    if (config.public || request.is404) return;
    const needed = config.scope;
    if (!needed) throw authErrors.insufficientScope('none');
    const url = request.raw.url ?? '';
    const q = url.indexOf('?');
    const credentials = parseBearer({ rawHeaders: request.raw.rawHeaders, query: q < 0 ? '' : url.slice(q + 1) });
    if (credentials.kind === 'none') throw authErrors.missing();
    if (credentials.kind === 'malformed') throw authErrors.malformed(credentials.reason);
    const token = await opts.verifier.verify(credentials.token);
    if (!hasScope(token.scopes, needed)) throw authErrors.insufficientScope(needed);
    request.token = token;
  });
}

export const authenticate = fp(authenticatePlugin, { name: 'authenticate', fastify: '5.x' });
