import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../../web/src/types.js';
import type { SimulatedRtsp } from '../../src/onvif/simulator/rtsp.js';
import { launchChromium, newContext } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { startDigestCamera } from '../support/rtsp-camera.js';
import { screenshots, seriousViolations, signIn } from './app-support.js';

// Adding a plain RTSP camera from the web app's "Add camera" screen, in Debian's chromium against
// the started gateway and a real gst-rtsp-server behind Digest authentication (the simulator's,
// with live video): what is wrong is said next to its field, before sending (a URL that is not
// rtsp://) or as the API answers (the gateway's own relay); the camera added goes online, and its
// settings show its address read-only and never its password. axe-core; screenshots at a phone's
// and a desktop's size.

const OWNER = { username: 'owner', password: 'owner password 1' };
const CAMERA_PASSWORD = 'digest-cam-pw';
let camera: SimulatedRtsp;
let t: TestGateway;
let origin = '';
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

async function listed(): Promise<Device[]> {
  const headers = await t.auth('devices:read');
  return ((await t.request('/v1/devices', { headers })).json() as { data: Device[] }).data;
}

beforeAll(async () => {
  camera = await startDigestCamera(CAMERA_PASSWORD);
  t = await startTestGateway({ onvif: { health_interval_s: 1, max_backoff_s: 2 } });
  origin = t.gw.apiUrl;
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  browser = await launchChromium();
  page = await (await newContext(browser)).newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await signIn(page, origin, OWNER);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await camera?.stop();
});

describe('adding a camera by its RTSP address', { timeout: 120_000 }, () => {
  it('says what is wrong next to the field, before sending and as the API answers, adding nothing', async () => {
    await page.click('[data-testid=add-camera-link]');
    await page.waitForURL(`${origin}/cameras/new`);
    await page.click('button:has-text("By RTSP address")');
    expect(await page.getAttribute('button:has-text("By RTSP address")', 'aria-pressed')).toBe('true');
    await page.locator('#rtsp-url').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'add-camera-rtsp-form', '.add-kind');

    const sent: string[] = [];
    const onRequest = (req: { method(): string; url(): string }) => {
      if (req.method() === 'POST' && req.url().endsWith('/v1/devices')) sent.push(req.url());
    };
    page.on('request', onRequest);
    await page.fill('#rtsp-url', 'http://192.168.1.20/stream1');
    await page.click('text=Add camera');
    expect(await page.textContent('#rtsp-url-error')).toMatch(/starts with rtsp:\/\//);
    expect(await page.textContent('#rtsp-name-error')).toMatch(/Give the camera a name/);
    expect(await page.getAttribute('#rtsp-url', 'aria-invalid')).toBe('true');
    expect(sent).toEqual([]);

    // The gateway's own relay: only the API knows its port; its refusal lands under the URL.
    await page.fill('#rtsp-url', `rtsp://127.0.0.1:${t.gw.relayPort}/live/x`);
    await page.fill('#rtsp-name', 'Loop');
    await page.click('text=Add camera');
    await expect.poll(() => page.textContent('[data-testid=rtsp-outcome]')).toMatch(/^Not added: /);
    expect(await page.textContent('#rtsp-url-error')).toMatch(/own RTSP relay/);
    expect(await page.inputValue('#rtsp-name')).toBe('Loop');
    expect(sent).toHaveLength(1);
    page.off('request', onRequest);
    expect(await listed()).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'add-camera-rtsp-refused', '.add-kind');
  });

  it('adds the camera with its sub stream and account: it goes online, and its settings show the address read-only', async () => {
    await page.fill('#rtsp-url', camera.url(0, 'main'));
    await page.fill('#rtsp-sub_url', camera.url(0, 'sub'));
    await page.fill('#rtsp-username', 'admin');
    await page.fill('#rtsp-password', CAMERA_PASSWORD);
    await page.fill('#rtsp-name', 'Yard');
    await page.click('text=Add camera');
    expect(await page.locator('#rtsp-url-error').count()).toBe(0);
    const added = page.locator('[data-testid=added-camera]');
    await added.waitFor();
    await expect.poll(() => added.locator('.status').textContent(), { timeout: 30_000 }).toBe('Online');
    const yard = (await listed()).find((d) => d.name === 'Yard')!;
    expect(yard).toMatchObject({ status: 'online', source: 'rtsp', rtsp_url: camera.url(0, 'main') });
    expect(await page.textContent('[data-testid=rtsp-outcome]')).toBe('Yard added.');
    // The form is empty again, the password gone from the page.
    expect(await page.inputValue('#rtsp-password')).toBe('');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'add-camera-rtsp');

    await added.locator('text=Settings').click();
    await page.waitForURL(`${origin}/cameras/${yard.id}/settings`);
    await page.locator('[data-testid=stream-addresses]').waitFor();
    expect(await page.inputValue('#setting-rtsp-url')).toBe(camera.url(0, 'main'));
    expect(await page.getAttribute('#setting-rtsp-url', 'readonly')).not.toBeNull();
    expect(await page.inputValue('#setting-sub-rtsp-url')).toBe(camera.url(0, 'sub'));
    expect(await page.textContent('.settings-screen .meta')).toContain('Added by its RTSP address, at 127.0.0.1:');
    expect(await page.inputValue('#setting-username')).toBe('admin');
    expect(await page.inputValue('#setting-password')).toBe('');
    expect(await page.content()).not.toContain(CAMERA_PASSWORD);
    // Its picture comes from the relay's keyframe.
    await expect
      .poll(() => page.evaluate(`document.querySelector('[data-testid=area-picture] img')?.naturalWidth ?? 0`), {
        timeout: 20_000,
      })
      .toBeGreaterThan(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'settings-rtsp');
    await screenshots(page, 'settings-rtsp-streams', '[data-testid=stream-addresses]');
    expect(pageErrors).toEqual([]);
  });
});
