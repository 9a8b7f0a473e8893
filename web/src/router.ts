import { useEffect, useState } from 'preact/hooks';
export { parseRoute, type Route } from './routes.js';

// Client-side routes on the History API. The gateway serves index.html for any path outside
// /v1, /oauth, /live, /.well-known, /metrics and /healthz (src/api/web-app.ts), so these paths
// must stay outside them too: the live view is /cameras/{id}, not /live/….

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

/** Same-origin links go through navigate (no reload); modified clicks keep the browser's meaning. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented) return;
  const target = event.target instanceof Element ? event.target.closest('a') : null;
  if (!target || target.target || target.hasAttribute('download') || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(target.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/v1/') || url.pathname.startsWith('/oauth/')) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}
