import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

// The gateway's own web app (docs/web-app.md): the files scripts/build-web.mjs writes to dist/web,
// served at / with @fastify/static (precompressed .br/.gz, ETags) and the app's security headers
// from @fastify/helmet. Registered as an encapsulated plugin, so the headers and routes stay here:
// the API, the OAuth pages and /live keep their own.

export interface WebAppOptions {
  /** The built app (index.html and assets/); the app is not served when it has no index.html. */
  root: string;
}

/** dist/web of this checkout or install: src/api and dist/api are both two levels below it. */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../dist/web/', import.meta.url));

/** Paths that belong to the API and its neighbours: an unknown one there is their JSON 404, never the app. */
const RESERVED = ['/v1', '/oauth', '/live', '/.well-known', '/metrics', '/healthz'];

export function isReservedPath(pathname: string): boolean {
  return RESERVED.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/** The app's Content-Security-Policy: its own files only, no inline script, never framed. */
export const WEB_APP_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  // Stills and thumbnails are fetched with the token and shown from blob: URLs.
  imgSrc: ["'self'", 'blob:', 'data:'],
  // hls.js plays through MediaSource (blob: URLs); WebRTC needs nothing here.
  mediaSrc: ["'self'", 'blob:'],
  connectSrc: ["'self'"],
  workerSrc: ["'self'", 'blob:'],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

export async function webApp(app: FastifyInstance, opts: WebAppOptions): Promise<void> {
  const root = path.resolve(opts.root);
  if (!existsSync(path.join(root, 'index.html'))) {
    app.log.warn({ root }, 'the web app is not built (npm run build): / is not served');
    return;
  }
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: WEB_APP_CSP },
    referrerPolicy: { policy: 'same-origin' },
    // The app opens nothing cross-origin; these defaults of helmet would only get in the way of
    // playing video from the same origin (COEP) for nothing gained here.
    crossOriginEmbedderPolicy: false,
    // A self-signed certificate on a LAN box: HSTS would lock browsers out once it changes.
    strictTransportSecurity: false,
  });
  await app.register(fastifyStatic, {
    root,
    serve: false,
    preCompressed: true,
    etag: true,
    lastModified: false,
    setHeaders: cacheHeaders,
  });

  // The files are known at start: a request for anything else is either an app route
  // (index.html, the app routes itself) or a missing asset (404).
  const files = new Set(listFiles(root).filter((f) => !f.endsWith('.br') && !f.endsWith('.gz')));
  const serve = (pathname: string, reply: FastifyReply): FastifyReply => {
    const file = pathname.slice(1);
    if (files.has(file)) return reply.sendFile(file);
    // Reserved: the API's JSON 404. A path with an extension is a file the build did not write
    // (an old asset name): 404 too, not the app.
    if (isReservedPath(pathname) || /\.[A-Za-z0-9]+$/.test(pathname)) {
      reply.callNotFound();
      return reply;
    }
    return reply.sendFile('index.html');
  };
  const config = { public: true };
  const schema = { hide: true };
  app.route({
    method: ['GET', 'HEAD'],
    url: '/',
    config,
    schema,
    handler: (_request, reply) => serve('/index.html', reply),
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    config,
    schema,
    handler: (request, reply) => {
      let pathname: string;
      try {
        pathname = decodeURIComponent(request.url.split('?')[0] ?? '/');
      } catch {
        reply.callNotFound();
        return reply;
      }
      return serve(pathname, reply);
    },
  });
}

/**
 * Hashed assets never change under their name; the rest (index.html, the service worker /sw.js,
 * the manifest, the icons) is asked for again each time, with a 304 when unchanged: a stale
 * index.html or sw.js would hold a browser on an old build.
 */
function cacheHeaders(reply: FastifyReply, filePath: string): void {
  reply.header(
    'cache-control',
    filePath.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
  );
}

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}
