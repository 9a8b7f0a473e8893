// The app's screens by path (none under the paths of paths.ts); pure, so tests run it without a browser.

type Route =
  | { screen: 'cameras' }
  | { screen: 'live'; deviceId: string }
  | { screen: 'timeline'; deviceId: string; params: URLSearchParams }
  | { screen: 'events'; params: URLSearchParams }
  | { screen: 'clips'; params: URLSearchParams }
  | { screen: 'missing' };

export function parseRoute(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  if (pathname === '/' || pathname === '/cameras') return { screen: 'cameras' };
  const camera = /^\/cameras\/([^/]+)(\/timeline)?$/.exec(pathname);
  if (camera?.[1]) {
    let deviceId: string;
    try {
      deviceId = decodeURIComponent(camera[1]);
    } catch {
      return { screen: 'missing' };
    }
    return camera[2] ? { screen: 'timeline', deviceId, params } : { screen: 'live', deviceId };
  }
  if (pathname === '/events') return { screen: 'events', params };
  if (pathname === '/clips') return { screen: 'clips', params };
  return { screen: 'missing' };
}

/** The footage timeline of a camera at a moment (from an event or a clip). */
export function timelineHref(deviceId: string, atMs: number): string {
  return `/cameras/${encodeURIComponent(deviceId)}/timeline?at=${encodeURIComponent(new Date(atMs).toISOString())}`;
}
