// The app's screens by path (none under the paths of paths.ts); pure, so tests run it without a browser.

type Route =
  | { screen: 'cameras' }
  | { screen: 'live'; deviceId: string }
  | { screen: 'timeline'; deviceId: string; params: URLSearchParams }
  | { screen: 'settings'; deviceId: string }
  | { screen: 'add-camera'; params: URLSearchParams }
  | { screen: 'events'; params: URLSearchParams }
  | { screen: 'clips'; params: URLSearchParams }
  | { screen: 'system' }
  | { screen: 'notifications' }
  | { screen: 'missing' };

export function parseRoute(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  if (pathname === '/' || pathname === '/cameras') return { screen: 'cameras' };
  // Device ids are dev_… (src/domain/ids.ts): none is "new".
  if (pathname === '/cameras/new') return { screen: 'add-camera', params };
  const camera = /^\/cameras\/([^/]+)(\/timeline|\/settings)?$/.exec(pathname);
  if (camera?.[1]) {
    let deviceId: string;
    try {
      deviceId = decodeURIComponent(camera[1]);
    } catch {
      return { screen: 'missing' };
    }
    if (camera[2] === '/timeline') return { screen: 'timeline', deviceId, params };
    return camera[2] === '/settings' ? { screen: 'settings', deviceId } : { screen: 'live', deviceId };
  }
  if (pathname === '/events') return { screen: 'events', params };
  if (pathname === '/clips') return { screen: 'clips', params };
  if (pathname === '/system') return { screen: 'system' };
  if (pathname === '/notifications') return { screen: 'notifications' };
  return { screen: 'missing' };
}

export function settingsHref(deviceId: string): string {
  return `/cameras/${encodeURIComponent(deviceId)}/settings`;
}

/** The add-camera screen, with the camera whose password is wanted first. */
export function addCameraHref(deviceId?: string): string {
  return deviceId ? `/cameras/new?camera=${encodeURIComponent(deviceId)}` : '/cameras/new';
}

/** The footage timeline of a camera at a moment (from an event or a clip). */
export function timelineHref(deviceId: string, atMs: number): string {
  return `/cameras/${encodeURIComponent(deviceId)}/timeline?at=${encodeURIComponent(new Date(atMs).toISOString())}`;
}
