import { GATEWAY_PREFIXES, isGatewayPath } from '../src/paths.js';
import { notificationOf, notificationTarget } from '../src/push.js';

// The web app's service worker, /sw.js (docs/web-app.md, "Installing, offline and notifications"):
// - keeps the app shell of this build (index.html and the files of the first screen) so the app
//   opens with no network and says that the gateway cannot be reached;
// - shows the gateway's push messages as notifications, and opens the app where one points.
// It keeps nothing else: never an answer of the API, the sign-in pages, a live stream, footage or a
// picture. The only write to its cache is the install's, of the list below; every other request
// goes past it to the network as if there were no worker.
//
// The shell's list is written into this file by the build (scripts/build-web.mjs), rather than
// caching what the page fetches: the build knows exactly which files belong together, the app
// opens offline even if the page never loaded some of them, no rule at run time has to tell a
// shell file from an API answer, and this file's bytes change with every build, which is what makes
// the browser install the new worker (and drop the old cache) once the gateway is updated.

declare const self: ServiceWorkerGlobalScope;
/** The build's shell: index.html and the hashed files it loads (paths of this origin). */
declare const SHELL_FILES: readonly string[];
/** A digest of the shell: a new build, a new cache. */
declare const BUILD_ID: string;

const CACHE = `shell-${BUILD_ID}`;
const INDEX = '/index.html';
const shell = new Set(SHELL_FILES);

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // index.html is asked of the gateway (not taken from the HTTP cache), so it names the files
      // of this build; the hashed files may come from the HTTP cache, their names say what they are.
      await cache.addAll(SHELL_FILES.map((path) => (path === INDEX ? new Request(path, { cache: 'no-cache' }) : path)));
      // The new build takes over at once: the gateway serves only its files now, so an open page of
      // the old build is no better off with the old worker.
      await self.skipWaiting();
    })(),
  );
  routePastWorker(event);
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      // Only this worker writes caches on this origin: any other is an older build's.
      for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key);
      // Pages opened before the worker was installed are controlled too: they open offline next time.
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    // The gateway's own pages (the sign-in page, the API) are never the app's: the browser's own
    // error when they cannot be reached.
    if (isGatewayPath(url.pathname)) return;
    // The network first, always: the gateway's index.html is the current build's, and a 404 or a
    // 5xx is its answer to show. Only when it cannot be reached does the kept shell open.
    event.respondWith(fetch(request).catch(async () => (await fromShell(INDEX)) ?? Response.error()));
    return;
  }
  if (shell.has(url.pathname)) event.respondWith(fromShell(url.pathname).then((kept) => kept ?? fetch(request)));
});

function fromShell(path: string): Promise<Response | undefined> {
  return caches.match(path, { cacheName: CACHE });
}

self.addEventListener('push', (event) => {
  let payload: unknown = null;
  try {
    payload = event.data?.json() ?? null;
  } catch {
    // Not JSON: the generic notification below.
  }
  const { title, options } = notificationOf(payload);
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(openApp(notificationTarget(event.notification.data)));
});

/** The app's window brought forward at `path` (a path of this origin), else a new one. */
async function openApp(path: string): Promise<void> {
  const url = new URL(path, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = windows.find((client) => client.focused) ?? windows[0];
  if (open) {
    try {
      const focused = await open.focus();
      // navigate() is refused for a window this worker does not control (opened before it was
      // installed): a new window then.
      if (await focused.navigate(url)) return;
    } catch {
      // Below.
    }
  }
  await self.clients.openWindow(url);
}

/** Chromium's static routing (InstallEvent.addRoutes), absent from TypeScript's types. */
interface RouterRule {
  condition: { urlPattern: unknown };
  source: 'network';
}
type RoutingInstallEvent = ExtendableEvent & { addRoutes?: (rules: RouterRule[]) => Promise<void> };

/**
 * The gateway's paths straight to the network without starting this worker, where the browser can
 * (chromium 123+): the live view's LL-HLS asks for a part every fraction of a second, and a worker
 * in the way of each only adds delay. Elsewhere the fetch handler lets them pass itself.
 */
function routePastWorker(event: RoutingInstallEvent): void {
  const Pattern = (globalThis as { URLPattern?: new (init: { pathname: string }) => unknown }).URLPattern;
  if (typeof event.addRoutes !== 'function' || !Pattern) return;
  try {
    const rules = GATEWAY_PREFIXES.map(
      // The prefix itself and everything under it, as isGatewayPath() reads them.
      (prefix): RouterRule => ({
        condition: { urlPattern: new Pattern({ pathname: `${prefix}{/*}?` }) },
        source: 'network',
      }),
    );
    event.addRoutes(rules).catch(() => undefined);
  } catch {
    // A browser that reads the rules otherwise: the fetch handler lets these requests pass anyway.
  }
}
