import type { onRequestHookHandler, onResponseHookHandler, RouteOptions } from 'fastify';

// Per-request work that depends only on the route (its scope, its URL pattern) is decided once, in
// an onRoute hook, as a hook of that route's own: reading request.routeOptions instead builds a new
// object on every read, and a hook added to the whole server runs for every route whether it
// needs it or not.

/** Adds `hook` to the route's own onRequest hooks, before or after those it has. */
export function addRouteOnRequest(
  route: Pick<RouteOptions, 'onRequest'>,
  hook: onRequestHookHandler,
  where: 'first' | 'last',
): void {
  const existing = asList(route.onRequest);
  route.onRequest = where === 'first' ? [hook, ...existing] : [...existing, hook];
}

/** Adds `hook` after the route's own onResponse hooks. */
export function addRouteOnResponse(route: Pick<RouteOptions, 'onResponse'>, hook: onResponseHookHandler): void {
  route.onResponse = [...asList(route.onResponse), hook];
}

/** A route option that takes one hook or a list of them, as a list. */
function asList<H>(hooks: H | H[] | undefined): H[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
