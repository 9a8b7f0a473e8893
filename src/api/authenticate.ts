import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { b64TokenFault, locateBearer } from '../auth/bearer.js';
import { hasScope } from '../auth/scope-claim.js';
import type { Scope } from '../auth/scope-catalogue.js';
import type { TokenCheck, VerifiedToken } from '../auth/verifier.js';
import { authErrors } from './errors.js';
import { addRouteOnRequest } from './route-hooks.js';

export type { Scope } from '../auth/scope-catalogue.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs. Routes without one are refused unless marked public. */
    scope?: Scope;
    public?: boolean;
    /** Instead of `scope`: any one of these will do (the route itself looks at which were granted). */
    anyScope?: readonly Scope[];
  }
  interface FastifyRequest {
    token: VerifiedToken | null;
  }
}

/** Who makes a change, for the log: the token's subject. */
export const subjectOf = (req: FastifyRequest): string => req.token?.subject ?? 'unknown';

/**
 * Every route needs a bearer token unless its config says `public: true`; the scope a route needs
 * sits in its config and is copied into its OpenAPI security requirement (`[]` for a public one:
 * none needed), so the two cannot drift. The check is the route's own onRequest hook, made once
 * from its config when the route is added: a request costs no look at its route's options, and
 * routes that need no token (public ones, the not-found handler) run no check at all.
 */
async function authenticatePlugin(app: FastifyInstance, opts: { verifier: TokenCheck }): Promise<void> {
  app.decorateRequest('token', null);

  app.addHook('onRoute', (route) => {
    // CORS preflights (@fastify/cors's OPTIONS routes) never carry credentials (Fetch standard).
    if (route.method === 'OPTIONS' && !route.config?.scope) route.config = { ...route.config, public: true };
    const scope = route.config?.scope;
    const anyScope = route.config?.anyScope;
    if (scope) route.schema = { ...route.schema, security: [{ bearer: [scope] }] };
    else if (anyScope?.length) route.schema = { ...route.schema, security: anyScope.map((s) => ({ bearer: [s] })) };
    else if (route.config?.public) route.schema = { ...route.schema, security: [] };
    else throw new Error(`route ${String(route.method)} ${route.url} has neither a scope nor public: true`);
    const needed = scope ?? (anyScope?.length ? anyScope : null);
    if (needed && !route.config?.public) addRouteOnRequest(route, tokenCheckHook(opts.verifier, needed), 'last');
  });
}

/**
 * A callback hook, not an async one: a token the verifier has cached is admitted without a promise
 * (TokenCheck.cached); only one it has not seen waits for verify.
 */
function tokenCheckHook(verifier: TokenCheck, needed: Scope | readonly Scope[]): onRequestHookHandler {
  const admit = (request: FastifyRequest, token: VerifiedToken): void => {
    if (typeof needed === 'string') {
      if (!hasScope(token.scopes, needed)) throw authErrors.insufficientScope(needed);
    } else if (!needed.some((s) => hasScope(token.scopes, s))) throw authErrors.insufficientAnyScope(needed);
    request.token = token;
  };
  return (request, _reply, done) => {
    let bearer: string;
    let cached: VerifiedToken | null;
    try {
      bearer = locatedToken(request);
      cached = cachedOrWellFormed(verifier, bearer);
      if (cached !== null) admit(request, cached);
    } catch (err) {
      done(asError(err));
      return;
    }
    // Outside the try: done() runs the rest of the request, whose errors are not this hook's.
    if (cached !== null) {
      done();
      return;
    }
    verifier.verify(bearer).then(
      (token) => {
        try {
          admit(request, token);
        } catch (err) {
          done(asError(err));
          return;
        }
        done();
      },
      (err: unknown) => done(asError(err)),
    );
  };
}

/** The request's bearer token as sent (its characters not yet checked); throws when there is none. */
function locatedToken(request: FastifyRequest): string {
  const url = request.raw.url ?? '';
  const q = url.indexOf('?');
  const located = locateBearer({ rawHeaders: request.raw.rawHeaders, query: q < 0 ? '' : url.slice(q + 1) });
  if (located.kind === 'none') throw authErrors.missing();
  if (located.kind === 'malformed') throw authErrors.malformed(located.reason);
  return located.token;
}

/**
 * The verifier's cached answer for `token`; null when it has none and the token is an RFC 6750
 * b64token (then verify it). The token's characters are scanned only when the cache does not
 * answer: a cached token is one the verifier accepted, and it accepts only compact JWS, all
 * b64token characters, so nearly every request skips a scan of ~800 characters (~1 µs). A
 * malformed token is still refused as malformed first, whatever the verifier would say of it.
 */
function cachedOrWellFormed(verifier: TokenCheck, token: string): VerifiedToken | null {
  let cached: VerifiedToken | null;
  try {
    cached = verifier.cached?.(token) ?? null;
  } catch (err) {
    refuseMalformed(token);
    throw err;
  }
  if (cached === null) refuseMalformed(token);
  return cached;
}

function refuseMalformed(token: string): void {
  const fault = b64TokenFault(token);
  if (fault !== null) throw authErrors.malformed(fault);
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

export const authenticate = fp(authenticatePlugin, { name: 'authenticate', fastify: '5.x' });
