import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WEB_ROOT } from '../../src/api/web-app.js';
import { launchTrustingChromium } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { tempDir } from '../support/temp-dir.js';
import { screenshots, seriousViolations, signIn } from './app-support.js';
import { ALERT_PUSH } from './push-fixtures.js';

// The web app as an installed app, in Debian's chromium against the started gateway: its manifest
// as chromium reads it and nothing keeping it from being installed, the service worker in control
// of the page and keeping the shell of this build and nothing else (another build's cache dropped
// when a worker takes over), push messages delivered through
// the DevTools protocol shown as notifications (one per camera), and the app opening with no
// network and saying so. The browser trusts the gateway's certificate (launchTrustingChromium):
// service workers need a secure context whose certificate verifies.

const OWNER = { username: 'owner', password: 'owner password 1' };

let t: TestGateway;
let origin = '';
let profile = '';
let context: BrowserContext;
let page: Page;
let cdp: CDPSession;
const pageErrors: string[] = [];
/** Every answer the page got: its URL and whether the service worker gave it. */
const answers: Array<{ url: string; fromServiceWorker: boolean }> = [];

beforeAll(async () => {
  t = await startTestGateway();
  origin = t.gw.apiUrl;
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  profile = tempDir('eg-chromium-');
  context = await launchTrustingChromium(profile, t.gw.certFile);
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('response', (res) => answers.push({ url: res.url(), fromServiceWorker: res.fromServiceWorker() }));
  cdp = await context.newCDPSession(page);
}, 60_000);
afterAll(async () => {
  await context?.close();
  await t?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** What the build's shell must be: index.html, the files it names, and the tab's icon. */
function builtShell(): string[] {
  const html = readFileSync(path.join(DEFAULT_WEB_ROOT, 'index.html'), 'utf8');
  const named = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
  return ['/index.html', ...named, '/icons/icon-192.png'].sort();
}

/** Until the app's service worker controls the page (polled from outside: the CSP forbids eval in it). */
async function controlled(): Promise<void> {
  await expect.poll(() => page.evaluate('navigator.serviceWorker.controller !== null'), { timeout: 30_000 }).toBe(true);
}

interface ShownNotification {
  title: string;
  body: string;
  tag: string;
  icon: string;
  badge: string;
  image: string;
  timestamp: number;
  data: { url?: string; alert_id?: string } | null;
}

/** The notifications the app's worker shows now, as the page sees them. */
function notifications(): Promise<ShownNotification[]> {
  return page.evaluate(`navigator.serviceWorker.ready
    .then((r) => r.getNotifications())
    .then((list) => list.map((n) => ({
      title: n.title, body: n.body, tag: n.tag, icon: n.icon, badge: n.badge, image: n.image,
      timestamp: n.timestamp, data: n.data,
    })))`);
}

describe('the web app, installed', { timeout: 90_000 }, () => {
  it('has a manifest chromium reads without error, and nothing keeps it from being installed', async () => {
    await signIn(page, origin, OWNER);
    await controlled();
    const manifest = await cdp.send('Page.getAppManifest');
    expect(manifest.url).toBe(`${origin}/manifest.webmanifest`);
    expect(manifest.errors).toEqual([]);
    const data = JSON.parse(manifest.data ?? 'null') as Record<string, unknown>;
    expect(data).toMatchObject({
      id: '/',
      name: 'Edge gateway',
      short_name: 'Gateway',
      start_url: '/',
      scope: '/',
      display: 'standalone',
      theme_color: '#111418',
      background_color: '#111418',
    });
    // As chromium understood it (its display mode is the name of a C++ constant: kStandalone).
    expect(manifest.manifest).toMatchObject({
      id: `${origin}/`,
      name: 'Edge gateway',
      startUrl: `${origin}/`,
      scope: `${origin}/`,
      themeColor: 'rgba(17,20,24,1)',
      backgroundColor: 'rgba(17,20,24,1)',
    });
    expect(manifest.manifest.display).toMatch(/^k?standalone$/i);
    // Each icon is a PNG of the size it claims (chromium itself only checks the one it picks).
    const icons = data.icons as Array<{ src: string; sizes: string; purpose: string }>;
    expect(icons.map((i) => `${i.sizes} ${i.purpose}`).sort()).toEqual([
      '192x192 any',
      '192x192 maskable',
      '512x512 any',
      '512x512 maskable',
    ]);
    for (const icon of [...icons, { src: '/icons/apple-touch-icon.png', sizes: '180x180' }]) {
      const size = await page.evaluate(`(async () => {
        const img = new Image();
        img.src = ${JSON.stringify(icon.src)};
        await img.decode();
        return img.naturalWidth + 'x' + img.naturalHeight;
      })()`);
      expect(size, icon.src).toBe(icon.sizes);
    }
    const installability = await cdp.send('Page.getInstallabilityErrors');
    expect(installability.installabilityErrors).toEqual([]);
  });

  it('keeps the shell of this build and nothing else; the API always from the gateway', async () => {
    // Use the app: the cameras, the events (their requests and the event stream), back.
    await page.click('nav >> text=Events');
    await page.waitForSelector('h1:has-text("Events")');
    await page.click('nav >> text=Cameras');
    await page.waitForSelector('h1:has-text("Cameras")');
    answers.length = 0;
    await page.reload();
    await page.waitForSelector('header.top');
    const kept = await page.evaluate<Record<string, string[]>>(`(async () => {
      const out = {};
      for (const name of await caches.keys()) {
        const cache = await caches.open(name);
        out[name] = (await cache.keys()).map((r) => new URL(r.url).pathname + new URL(r.url).search);
      }
      return out;
    })()`);
    const names = Object.keys(kept);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^shell-[0-9a-f]{16}$/);
    expect((kept[names[0] as string] as string[]).sort()).toEqual(builtShell());
    // Reloaded: the shell from the worker's cache, every API answer from the gateway.
    const fromWorker = answers.filter((a) => a.fromServiceWorker).map((a) => new URL(a.url).pathname);
    expect(fromWorker).toEqual(expect.arrayContaining(builtShell().filter((p) => p.startsWith('/assets/'))));
    const api = answers.filter((a) => new URL(a.url).pathname.startsWith('/v1/'));
    expect(api.length).toBeGreaterThan(0);
    expect(api.filter((a) => a.fromServiceWorker)).toEqual([]);
    // Chromium's static routing took them past the worker without running it (routePastWorker in sw.ts).
    const routed = await page.evaluate<Array<[string, string]>>(
      `performance.getEntriesByType('resource')
        .filter((e) => new URL(e.name).pathname.startsWith('/v1/'))
        .map((e) => [e.name, e.workerMatchedSourceType])`,
    );
    expect(routed.length).toBeGreaterThan(0);
    for (const [name, source] of routed) expect(source, name).toBe('network');
  });

  it('drops the cache of any other build when a worker takes over', async () => {
    const current = await page.evaluate<string[]>('caches.keys()');
    // What an older build's worker would have left.
    await page.evaluate(`caches.open('shell-0123456789abcdef').then((c) => c.put('/index.html', new Response('old')))`);
    expect(await page.evaluate<string[]>('caches.keys()')).toHaveLength(2);
    // A worker installed anew, as after an update: the page registers it again once loaded.
    await page.evaluate(`navigator.serviceWorker.getRegistration('/').then((r) => r.unregister())`);
    await page.reload();
    await controlled();
    await expect.poll(() => page.evaluate<string[]>('caches.keys()'), { timeout: 10_000 }).toEqual(current);
  });

  it('shows a push message as a notification, a newer one of the same camera in its place', async () => {
    await context.grantPermissions(['notifications'], { origin });
    const registrationId = await new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const ours = registrations.find((r) => r.scopeURL === `${origin}/` && !r.isDeleted);
        if (ours) resolve(ours.registrationId);
      });
      void cdp.send('ServiceWorker.enable');
    });
    const push = (data: string) => cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data });
    // An alert's picture travels inside the message, as a data: URL.
    const image = await page.evaluate<string>(`(() => {
      const canvas = document.createElement('canvas');
      canvas.width = canvas.height = 16;
      const g = canvas.getContext('2d');
      g.fillStyle = '#6cb6ff';
      g.fillRect(0, 0, 16, 16);
      return canvas.toDataURL('image/jpeg');
    })()`);
    const alert = { ...ALERT_PUSH, image };
    await push(JSON.stringify(alert));
    await expect.poll(notifications, { timeout: 10_000 }).toHaveLength(1);
    const [first] = await notifications();
    expect(first).toMatchObject({
      title: 'Person at Front door',
      body: 'Seen at 14:02',
      tag: 'dev_front',
      icon: `${origin}/icons/icon-192.png`,
      badge: `${origin}/icons/badge-96.png`,
      image,
      timestamp: Date.parse(alert.created_at),
      data: { url: '/events?camera=dev_front', alert_id: 'alr_1' },
    });

    // The same camera again: one notification, the newer.
    await push(JSON.stringify({ ...alert, title: 'Vehicle at Front door', alert_id: 'alr_2', type: 'vehicle' }));
    await expect
      .poll(async () => (await notifications()).map((n) => n.title), { timeout: 10_000 })
      .toEqual(['Vehicle at Front door']);

    // Another camera: beside it. A link to another site: the click goes to the app's start instead.
    await push(
      JSON.stringify({ ...alert, device_id: 'dev_yard', title: 'Person at Yard', url: 'https://evil.example/' }),
    );
    await expect.poll(async () => (await notifications()).length, { timeout: 10_000 }).toBe(2);
    expect((await notifications()).find((n) => n.tag === 'dev_yard')?.data).toMatchObject({ url: '/' });

    // Not JSON: still a notification, the app's own.
    await push('not json');
    await expect.poll(async () => (await notifications()).length, { timeout: 10_000 }).toBe(3);
    expect((await notifications()).find((n) => n.title === 'Edge gateway')).toMatchObject({
      body: 'Something happened at the gateway. Open the app to see it.',
      data: { url: '/events' },
    });
    // A click on a notification cannot be made here: the DevTools protocol has no command for it,
    // and a notificationclick dispatched by script in the worker closes the notification but may
    // not wait (chromium: "Can not call waitUntil on a script constructed ExtendableEvent"), nor
    // focus or open a window. Where a click goes is test/web/push.test.ts's (notificationTarget).
  });

  it('opens with no network and says that the gateway cannot be reached; goes on once it can', async () => {
    await context.setOffline(true);
    // The worker is offline too: what the reload shows can only come from its cache.
    const worker = context.serviceWorkers().find((w) => w.url() === `${origin}/sw.js`);
    expect(await worker?.evaluate(`fetch('/healthz').then(() => 'reached', () => 'no network')`)).toBe('no network');
    await page.reload();
    // The app's page from the worker's cache, not chromium's offline page.
    await page.waitForSelector('h1:has-text("The gateway cannot be reached")', { timeout: 20_000 });
    expect(new URL(page.url()).origin).toBe(origin);
    expect(await page.textContent('main')).toContain("Check that this phone or computer is on the gateway's network.");
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'offline');

    // An installed app opened from the home screen is a new tab: no session in it yet.
    const fresh = await context.newPage();
    await fresh.goto(`${origin}/`);
    await fresh.waitForSelector('h1:has-text("The gateway cannot be reached")', { timeout: 20_000 });

    await context.setOffline(false);
    // The page looks for the gateway every few seconds and goes on by itself: the signed-in tab to
    // its screen, the new one to the sign-in page.
    await page.waitForSelector('header.top', { timeout: 20_000 });
    await fresh.waitForSelector('#username', { timeout: 20_000 });
    await fresh.close();
    expect(pageErrors).toEqual([]);
  });
});
