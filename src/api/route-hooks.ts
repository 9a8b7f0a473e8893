import type { onRequestHookHandler, RouteOptions } from 'fastify';

// Per-request work that depends only on the route (its scope, its URL pattern) is decided once, in
// an onRoute hook, as a hook of that route's own: reading request.routeOptions instead builds a new
// object on every read.

/** Adds `hook` to the route's own onRequest hooks, before or after those it has. */
export function addRouteOnRequest(route: Pick<RouteOptions, 'onRequest'>, hook: onRequestHookHandler, where: 'first' | 'last'): void {
  const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
  route.onRequest = where === 'first' ? [hook, ...existing] : [...existing, hook];
}
