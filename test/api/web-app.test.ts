import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WEB_ROOT } from '../../src/api/web-app.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

// The web app as the gateway serves it (src/api/web-app.ts): the built files of dist/web (the test
// setup builds them with scripts/build-web.mjs) at /, precompressed and with ETags, index.html for
// the app's own routes, the security headers on the app only, and the API's JSON 404s untouched.

let t: TestGateway;
let assetNames: string[] = [];

beforeAll(async () => {
  if (!existsSync(path.join(DEFAULT_WEB_ROOT, 'index.html')))
    throw new Error('dist/web is not built: node scripts/build-web.mjs');
  assetNames = readdirSync(path.join(DEFAULT_WEB_ROOT, 'assets')).filter(
    (f) => !f.endsWith('.br') && !f.endsWith('.gz'),
  );
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.stop();
});

describe('the app at /', () => {
  it('serves index.html naming hashed assets, with the CSP and the other security headers', async () => {
    const res = await t.request('/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    // The app's own file, which the small entry imports once it has started the session, is
    // preloaded beside it (scripts/build-web.mjs), so both download at once.
    const app = /<link rel="modulepreload" href="\/assets\/(mount-[A-Z0-9]+\.js)">/.exec(res.text)?.[1];
    expect(app).toBeDefined();
    const entry = /src="\/assets\/(main-[A-Z0-9]+\.js)"/.exec(res.text)?.[1] as string;
    expect(readFileSync(path.join(DEFAULT_WEB_ROOT, 'assets', entry), 'utf8')).toContain(`import("./${app}")`);
    // No inline script: every <script> names a file.
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('same-origin');
    // The same as the sign-in pages' (src/api/oauth-pages.ts), so chromium keeps one renderer
    // process from the login page back to the app.
    expect(res.headers['origin-agent-cluster']).toBe('?1');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toBeTruthy();
  });

  it('answers an app route (client-side routing) with the same index.html', async () => {
    const index = await t.request('/');
    for (const route of ['/cameras/dev_1', '/events?camera=x&unread=1', '/clips', '/signin/callback?code=a&state=b']) {
      const res = await t.request(route);
      expect(res.status, route).toBe(200);
      expect(res.text, route).toBe(index.text);
    }
  });

  it('sends the precompressed file the client accepts, with an ETag that gives 304, hashed assets cached for good', async () => {
    const js = assetNames.find((f) => f.startsWith('main-') && f.endsWith('.js'));
    expect(js).toBeDefined();
    const plain = readFileSync(path.join(DEFAULT_WEB_ROOT, 'assets', js as string));
    const br = await t.request(`/assets/${js}`, { headers: { 'accept-encoding': 'br, gzip' } });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(br.body).equals(plain)).toBe(true);
    const gz = await t.request(`/assets/${js}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plain)).toBe(true);
    const identity = await t.request(`/assets/${js}`);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.equals(plain)).toBe(true);
    const etag = String(br.headers.etag);
    const again = await t.request(`/assets/${js}`, { headers: { 'accept-encoding': 'br', 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('serves the service worker and the manifest under fixed names, asked for again each time', async () => {
    const sw = await t.request('/sw.js');
    expect(sw.status).toBe(200);
    expect(sw.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    // The browser checks for a new worker on each visit; the build changes its bytes.
    expect(sw.headers['cache-control']).toBe('no-cache');
    expect(sw.text).toContain('/index.html');
    const csp = String(sw.headers['content-security-policy']);
    expect(csp).toMatch(/worker-src 'self'/);
    const manifest = await t.request('/manifest.webmanifest');
    expect(manifest.status).toBe(200);
    expect(manifest.headers['content-type']).toMatch(/^application\/manifest\+json/);
    expect((manifest.json() as { start_url: string }).start_url).toBe('/');
    const icon = await t.request('/icons/icon-512.png');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/png');
    const index = await t.request('/');
    expect(index.text).toContain('<link rel="manifest" href="/manifest.webmanifest">');
  });

  it('answers a missing asset with 404, not the app', async () => {
    const res = await t.request('/assets/main-OLDHASH.js');
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('<!doctype html>');
  });
});

describe('what the app never shadows', () => {
  it('keeps the JSON 404 of unknown paths under /v1, /oauth, /live, /.well-known, /metrics and /healthz', async () => {
    for (const p of [
      '/v1/nothing',
      '/v1',
      '/oauth/nothing',
      '/live/nothing',
      '/live',
      '/.well-known/nothing',
      '/metrics',
      '/healthz/x',
    ]) {
      const res = await t.request(p);
      expect(res.status, p).toBe(404);
      expect((res.json() as { error: string }).error, p).toBe('not_found');
    }
  });

  it('leaves the API, the OAuth pages and /healthz their own headers (no app CSP on them)', async () => {
    const api = await t.request('/v1/devices', { headers: await t.auth('devices:read') });
    expect(api.status).toBe(200);
    expect(api.headers['content-security-policy']).toBeUndefined();
    const health = await t.request('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers['content-security-policy']).toBeUndefined();
    const page = await t.request('/oauth/authorize?client_id=nobody');
    // The OAuth pages' own policy (no script at all, their one style block pinned by its hash), not the app's.
    expect(page.headers['content-security-policy']).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; frame-ancestors 'none'; base-uri 'none'$/,
    );
  });

  it('refuses other methods on app paths as before', async () => {
    const res = await t.request('/events', { method: 'POST', body: {} });
    expect(res.status).toBe(404);
    expect((res.json() as { error: string }).error).toBe('not_found');
  });
});
