// The paths of this origin that are not the app's to take, in one place. The gateway keeps some
// prefixes for itself and serves index.html under none of them (RESERVED in src/api/web-app.ts,
// the same list): a link there is a page load, never a screen, and the live view is
// /cameras/{id}, not /live/…. The sign-in answer comes back under /signin/; it is the app's only
// while its code is exchanged, so nothing returns there afterwards. Pure, so tests run it without
// a browser.

const GATEWAY_PREFIXES = ['/v1', '/oauth', '/live', '/.well-known', '/metrics', '/healthz'];
const SIGNIN_PREFIX = '/signin/';

/** Where the authorization server sends the sign-in answer (the registered redirect URI's path). */
export const CALLBACK_PATH = `${SIGNIN_PREFIX}callback`;

/** Under a prefix the gateway keeps for its API, sign-in pages, live streams and probes. */
export function isGatewayPath(pathname: string): boolean {
  return GATEWAY_PREFIXES.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/** Under /signin/: the sign-in answer, left for a screen once it is used. */
export function isSignInPath(pathname: string): boolean {
  return pathname.startsWith(SIGNIN_PREFIX);
}

/**
 * Where to go back to after signing in: `path` when it is a screen's path of this origin, else the
 * cameras. Not `//host` or `/\host` (browsers read them as another origin), nor a path above.
 */
export function returnPath(path: string): string {
  const pathname = path.split(/[?#]/, 1)[0] ?? '';
  return /^\/(?![/\\])/.test(pathname) && !isGatewayPath(pathname) && !isSignInPath(pathname) ? path : '/';
}
