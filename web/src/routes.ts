// The app's screens by path (none under the paths of paths.ts); pure, so tests run it without a browser.

type Route =
  | { screen: 'cameras' }
  | { screen: 'live'; deviceId: string }
  | { screen: 'events'; params: URLSearchParams }
  | { screen: 'clips'; params: URLSearchParams }
  | { screen: 'missing' };

export function parseRoute(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  if (pathname === '/' || pathname === '/cameras') return { screen: 'cameras' };
  const live = /^\/cameras\/([^/]+)$/.exec(pathname);
  if (live?.[1]) {
    try {
      return { screen: 'live', deviceId: decodeURIComponent(live[1]) };
    } catch {
      return { screen: 'missing' };
    }
  }
  if (pathname === '/events') return { screen: 'events', params };
  if (pathname === '/clips') return { screen: 'clips', params };
  return { screen: 'missing' };
}
