// The paths of this origin that are not the app's to take, in one place. The gateway keeps some
// prefixes for itself and serves index.html under none of them (RESERVED in src/api/web-app.ts,
// the same list): a link there is a page load, never a screen, and the live view is
// /cameras/{id}, not /live/…. The sign-in answer comes back under /signin/; it is the app's only
// while its code is exchanged, so nothing returns there afterwards. Pure, so tests run it without
// a browser.

export const GATEWAY_PREFIXES = ['/v1', '/oauth', '/live', '/.well-known', '/metrics', '/healthz'];
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
 * Where to go back to after signing in, or after a notification is clicked: `path` when it is a
 * screen's path of this origin, else the cameras. Not `//host` or `/\host` (browsers read them as
 * another origin), nor one the URL parser turns into either (it drops tabs and line breaks:
 * `/\t/host`), nor a path above.
 */
export function returnPath(path: string): string {
  if (!/^\/(?![/\\])/.test(path)) return '/';
  const base = 'https://app.invalid';
  let url: URL;
  try {
    // What the browser will make of it: dot segments (also `%2e`) resolved, tabs and line breaks dropped.
    url = new URL(path, base);
  } catch {
    return '/';
  }
  return url.origin === base && !isGatewayPath(url.pathname) && !isSignInPath(url.pathname) ? path : '/';
}
