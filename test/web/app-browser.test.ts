import { pino } from 'pino';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';
import { launchChromium, newContext } from '../support/browser.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { screenshots, seriousViolations, signIn, videoFrames } from './app-support.js';

// The gateway's web app in Debian's chromium against the started gateway and a simulated camera:
// what a camera owner does with it, in order (sign in, cameras, live, an event as it happens, its
// clip, mark as read, sign out), plus a viewer account, axe-core on each screen and screenshots.
// Access tokens live 15 s here (issued by a clock 45 s behind, with no tolerance), so every step
// after the first quarter minute runs on refreshed tokens: the refresh must be invisible.

const OWNER = { username: 'owner', password: 'owner password 1' };
const VIEWER = { username: 'watcher', password: 'viewer password 1' };
/** A camera name that would run script if the app rendered names as HTML. */
const HOSTILE_NAME = '<img src=x onerror=alert(1)>';
const READ_SCOPES = 'devices:read alerts:read recordings:read';

let fleet: Fleet;
let t: TestGateway;
let origin = '';
let deviceId = '';
let browser: Browser;
let context: BrowserContext;
let page: Page;
const dialogs: string[] = [];
const pageErrors: string[] = [];
/** Every token answer the owner's page got, in order. */
const tokenAnswers: Array<{ grant: string; status: number; refreshToken: string | null }> = [];

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'cam-secret-7',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway(
    {
      cameras: [
        {
          name: HOSTILE_NAME,
          onvif_url: fleet.cameras[0]!.deviceServiceUrl,
          username: 'admin',
          password: 'cam-secret-7',
        },
      ],
      webrtc: { bind_address: '127.0.0.1' },
      recording: { pre_roll_s: 1, post_roll_s: 2 },
      auth: { clock_tolerance_s: 0, local: { access_ttl_s: 60 } },
    },
    { oauthClock: () => Date.now() - 45_000 },
  );
  origin = t.gw.apiUrl;
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  await addUser(t.gw.store, VIEWER.username, VIEWER.password);
  deviceId = await firstOnlineDevice(t);
  browser = await launchChromium();
  context = await newContext(browser);
  page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('response', (res: PageResponse) => {
    if (!res.url().endsWith('/oauth/token')) return;
    const grant = new URLSearchParams(res.request().postData() ?? '').get('grant_type') ?? '';
    void res
      .json()
      .then((body: { refresh_token?: string }) =>
        tokenAnswers.push({ grant, status: res.status(), refreshToken: body.refresh_token ?? null }),
      )
      .catch(() => tokenAnswers.push({ grant, status: res.status(), refreshToken: null }));
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await fleet?.stop();
});

// Each step waits on real video, recording and token lifetimes: minutes on a loaded machine.
describe('the web app, as the owner', { timeout: 120_000 }, () => {
  it('signs in through the gateway and lists the camera, its name shown as text', async () => {
    await signIn(page, origin, OWNER);
    expect(new URL(page.url()).pathname).toBe('/');
    const card = page.locator('[data-testid=camera]');
    await card.first().waitFor();
    expect(await card.count()).toBe(1);
    expect(await card.locator('.camera-name').textContent()).toBe(HOSTILE_NAME);
    expect(await card.locator('.status').textContent()).toBe('Online');
    // Rendered as text: no element came of it, and nothing ran.
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(tokenAnswers[0]).toMatchObject({ grant: 'authorization_code', status: 200 });
    // The refresh token sits in this tab's sessionStorage at most; nothing in localStorage or cookies of the app.
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('shows a still picture of the camera', async () => {
    await expect
      .poll(() => page.evaluate(`document.querySelector('[data-testid=still] img')?.naturalWidth ?? 0`), {
        timeout: 20_000,
      })
      .toBeGreaterThan(0);
  });

  it('has no serious accessibility violation on the cameras screen; screenshots', async () => {
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'cameras');
  });

  it('plays the camera live after a click: decoded frames keep increasing', async () => {
    await page.click('[data-testid=camera] a');
    await page.waitForURL(`${origin}/cameras/${deviceId}`);
    await expect.poll(() => page.textContent('[data-testid=live-mode]'), { timeout: 30_000 }).toMatch(/^Live/);
    await expect.poll(() => videoFrames(page, '[data-testid=live-video]'), { timeout: 20_000 }).toBeGreaterThan(0);
    let last = await videoFrames(page, '[data-testid=live-video]');
    for (let i = 0; i < 3; i++) {
      await page.waitForTimeout(1_000);
      const now = await videoFrames(page, '[data-testid=live-video]');
      expect(now, `look ${i + 1}`).toBeGreaterThan(last);
      last = now;
    }
    expect(await page.locator('h1').textContent()).toBe(HOSTILE_NAME);
    // The owner may control the camera: the buttons are there, each behind a confirmation.
    await page.click('text=Set clock');
    expect(await page.locator('dialog[open]').textContent()).toContain("Set the camera's clock?");
    await page.keyboard.press('Escape');
    expect(await page.locator('dialog[open]').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'live');
  });

  it('falls back to LL-HLS when WebRTC cannot connect: frames keep increasing', async () => {
    // A network that lets no WebRTC through: the WHEP exchange is refused.
    await page.route('**/live/*/whep', (route) => route.abort('connectionrefused'));
    try {
      await page.reload();
      await expect
        .poll(() => page.textContent('[data-testid=live-mode]'), { timeout: 60_000 })
        .toMatch(/^Live \(LL-HLS/);
      await expect.poll(() => videoFrames(page, '[data-testid=live-video]'), { timeout: 20_000 }).toBeGreaterThan(0);
      const first = await videoFrames(page, '[data-testid=live-video]');
      await expect
        .poll(() => videoFrames(page, '[data-testid=live-video]'), { timeout: 10_000 })
        .toBeGreaterThan(first);
    } finally {
      await page.unroute('**/live/*/whep');
    }
  });

  it('shows a person the camera sees in Events within 10 s, without a reload, then its picture', async () => {
    await page.click('nav >> text=Events');
    await page.waitForURL(`${origin}/events`);
    await page.locator('text=No events yet').waitFor();
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    const camera = fleet.cameras[0]!;
    camera.trigger('human', true);
    await page.waitForTimeout(1_500);
    camera.trigger('human', false);
    const row = page.locator('[data-testid=alert]').first();
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator('.type').textContent()).toBe('Person');
    expect(await row.locator('.meta').textContent()).toContain(HOSTILE_NAME);
    // The thumbnail comes with the clip, written after the post-roll.
    const thumbnail = () => page.evaluate(`document.querySelector('[data-testid=alert] img')?.naturalWidth ?? 0`);
    await expect
      .poll(thumbnail, { timeout: 60_000 })
      .toBeGreaterThan(0)
      .catch(async (err: unknown) => {
        // Says whether the gateway had the clip at all, or the page did not show it.
        const alerts = (await t.request('/v1/alerts', { headers: await t.auth('alerts:read') })).text;
        throw new Error(`no thumbnail shown; the gateway's alerts: ${alerts}`, { cause: err });
      });
    expect(navigations).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'events');
  });

  it('marks an alert as read and the unread count goes down', async () => {
    const badge = page.locator('[data-testid=unread-count]');
    await badge.waitFor({ timeout: 60_000 });
    const before = Number(await badge.textContent());
    expect(before).toBeGreaterThan(0);
    await page.locator('[data-testid=alert]').first().locator('text=Mark as read').click();
    await expect
      .poll(async () => ((await badge.count()) === 0 ? 0 : Number(await badge.textContent())))
      .toBe(before - 1);
    expect(await page.locator('[data-testid=alert].read').count()).toBeGreaterThan(0);
  });

  it("plays the event's clip in the page and seeks to its middle", async () => {
    await page.locator('[data-testid=alert]').first().locator('text=Play clip').click();
    await page.waitForURL((url) => url.pathname === '/clips');
    await page.locator('.player').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'clips');
    expect(await page.locator('[data-testid=clip-video]').count()).toBe(1);
    const video = '[data-testid=clip-video]';
    await expect
      .poll(() => page.evaluate(`document.querySelector('${video}').readyState`), { timeout: 15_000 })
      .toBeGreaterThanOrEqual(2);
    const middle: unknown = await page.evaluate(`new Promise((resolve) => {
      const v = document.querySelector('${video}');
      v.addEventListener('seeked', () => resolve({ at: v.currentTime, duration: v.duration }), { once: true });
      v.currentTime = v.duration / 2;
    })`);
    const { at, duration } = middle as { at: number; duration: number };
    expect(duration).toBeGreaterThan(1);
    expect(Math.abs(at - duration / 2)).toBeLessThan(1);
  });

  it('refreshed its access token without the user noticing', async () => {
    // Tokens live 15 s: by now the app has refreshed (on schedule or after a 401) and still works.
    await expect
      .poll(() => tokenAnswers.filter((a) => a.grant === 'refresh_token' && a.status === 200).length, {
        timeout: 30_000,
      })
      .toBeGreaterThan(0);
    await page.click('nav >> text=Cameras');
    await page.locator('[data-testid=camera]').first().waitFor();
    expect(await page.locator('text=Your session expired').count()).toBe(0);
    expect(tokenAnswers.every((a) => a.status === 200)).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it('says when the gateway cannot be reached, and recovers by itself when it can again', async () => {
    // The browser loses the gateway (every request refused), as when the box restarts or Wi-Fi drops.
    await page.route(`${origin}/**`, (route) => route.abort('connectionrefused'));
    const banner = page.locator('text=Lost connection to the gateway');
    await banner.waitFor({ timeout: 20_000 });
    await screenshots(page, 'connection-lost');
    await page.unroute(`${origin}/**`);
    await banner.waitFor({ state: 'detached', timeout: 20_000 });
    await page.locator('[data-testid=camera]').first().waitFor();
  });

  it('signs out: back to a signed-out screen, and the refresh token no longer works', async () => {
    const lastRefresh = [...tokenAnswers].reverse().find((a) => a.refreshToken !== null)?.refreshToken;
    expect(lastRefresh).toBeTruthy();
    await page.click('text=Sign out');
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await screenshots(page, 'signed-out');
    const again = await t.request('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: lastRefresh as string,
        client_id: 'gateway-web',
      }).toString(),
    });
    expect(again.status).toBe(400);
    expect((again.json() as { error: string }).error).toBe('invalid_grant');
  });
});

describe('the web app, as a viewer (devices:read, alerts:read, recordings:read)', { timeout: 120_000 }, () => {
  it('shows no control or mark-as-read buttons, and the API refuses control anyway', async () => {
    const viewerContext = await newContext(browser);
    try {
      const viewer = await viewerContext.newPage();
      // Until accounts have roles on this branch (h-appauth: users add --role viewer), the viewer's
      // grant is limited by asking for the read scopes only: the gateway grants what is asked.
      await viewer.route('**/oauth/authorize?*', async (route) => {
        const url = new URL(route.request().url());
        if (url.searchParams.get('scope') !== READ_SCOPES) {
          url.searchParams.set('scope', READ_SCOPES);
          return route.continue({ url: url.href });
        }
        return route.continue();
      });
      let viewerToken = '';
      viewer.on('response', (res) => {
        if (res.url().endsWith('/oauth/token'))
          void res
            .json()
            .then((b: { access_token?: string; scope?: string }) => (viewerToken = b.access_token ?? viewerToken))
            .catch(() => undefined);
      });
      await signIn(viewer, origin, VIEWER);
      await viewer.locator('[data-testid=camera]').first().waitFor();
      await viewer.goto(`${origin}/cameras/${deviceId}`);
      await viewer.locator('[data-testid=live-mode]').waitFor();
      await viewer.locator('.latest').waitFor();
      expect(await viewer.locator('[data-testid=device-controls]').count()).toBe(0);
      expect(await viewer.locator('button', { hasText: /Reboot|Set clock/ }).count()).toBe(0);
      await viewer.goto(`${origin}/events`);
      await viewer.locator('[data-testid=alert]').first().waitFor();
      expect(await viewer.locator('button', { hasText: /Mark/ }).count()).toBe(0);
      expect(viewerToken).not.toBe('');
      const refused = await t.request(`/v1/devices/${deviceId}/control`, {
        method: 'POST',
        headers: { authorization: `Bearer ${viewerToken}` },
        body: { action: 'reboot' },
      });
      expect(refused.status).toBe(403);
      expect((refused.json() as { error: string }).error).toBe('insufficient_scope');

      // The account is removed (its grants with it): at its next refresh the app says the session
      // expired and offers to sign in again, instead of failing request after request.
      t.gw.store.deleteLocalUser(VIEWER.username);
      await viewer.locator('h1', { hasText: 'Your session expired' }).waitFor({ timeout: 40_000 });
      expect(await viewer.locator('button', { hasText: 'Sign in' }).count()).toBe(1);
      expect(await seriousViolations(viewer)).toEqual([]);
      await screenshots(viewer, 'session-expired');
    } finally {
      await viewerContext.close();
    }
  });
});
