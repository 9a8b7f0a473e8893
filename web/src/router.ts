import { useEffect, useState } from 'preact/hooks';
import { isGatewayPath } from './paths.js';

// Client-side navigation on the History API; the screens by path are in routes.ts, and the paths
// that are not the app's in paths.ts.

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current location, re-read on every navigation. */
export function useLocation(): { pathname: string; search: string } {
  const read = () => ({ pathname: location.pathname, search: location.search });
  const [current, setCurrent] = useState(read);
  useEffect(() => {
    const update = () => setCurrent(read());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return current;
}

/** Links to the app's own screens go through navigate (no reload); modified clicks keep the browser's meaning. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented) return;
  const target = event.target instanceof Element ? event.target.closest('a') : null;
  if (
    !target ||
    target.target ||
    target.hasAttribute('download') ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  const url = new URL(target.href, location.href);
  if (url.origin !== location.origin || isGatewayPath(url.pathname)) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}
