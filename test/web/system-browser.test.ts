import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import type { Fleet } from '../../src/onvif/simulator/fleet.js';
import { launchChromium, newContext } from '../support/browser.js';
import { onlineDevicesByName, startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { startCameraWithoutStream, startStreamingCamera } from '../support/streaming-cameras.js';
import type { SystemStatus } from '../../web/src/types.js';
import { screenshots, seriousViolations, signIn } from './app-support.js';

// The System screen in Debian's chromium, against the started gateway, a simulated camera whose
// main stream the recorder reads through the relay and one whose stream cannot be opened: an admin
// finds it in the navigation and sees the first camera's bitrate, the other's last error, and the
// data disk; the warnings in words; it asks again while shown, not while the tab is hidden or once
// left; a viewer has no link and is told they may not. axe-core, and screenshots at a phone's and a
// desktop's size.

const OWNER = { username: 'owner', password: 'owner password 1' };
const VIEWER = { username: 'watcher', password: 'viewer password 1' };
const ACCOUNT = { username: 'admin', password: 'cam-secret-9' };
let fleet: Fleet;
let noStream: SimulatedCamera;
let t: TestGateway;
let origin = '';
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
/** GET /v1/system requests the owner's page has sent. */
let asked = 0;

/** Makes the page's document hidden or visible as a switched tab would, and tells it so. */
async function setVisibility(state: 'hidden' | 'visible'): Promise<void> {
  await page.evaluate(`(() => {
    Object.defineProperty(document, 'visibilityState', { value: ${JSON.stringify(state)}, configurable: true });
    Object.defineProperty(document, 'hidden', { value: ${state === 'hidden'}, configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  })()`);
}

/** Resolves after `ms`: how long the page is watched for asking when it should not. */
const during = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  fleet = await startStreamingCamera(ACCOUNT);
  noStream = await startCameraWithoutStream(ACCOUNT, 'NOSTREAM2');
  t = await startTestGateway({
    cameras: [
      { name: 'Front door', onvif_url: fleet.cameras[0]!.deviceServiceUrl, ...ACCOUNT },
      { name: 'Garage', onvif_url: noStream.deviceServiceUrl, ...ACCOUNT },
    ],
  });
  origin = t.gw.apiUrl;
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  await addUser(t.gw.store, VIEWER.username, VIEWER.password, 'viewer');
  await onlineDevicesByName(t, ['Front door', 'Garage']);
  browser = await launchChromium();
  page = await (await newContext(browser)).newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('request', (req) => {
    if (new URL(req.url()).pathname === '/v1/system') asked++;
  });
  await signIn(page, origin, OWNER);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await noStream?.stop();
  await fleet?.stop();
});

describe('the System screen, as an admin', { timeout: 120_000 }, () => {
  it("is in the navigation; shows the camera's bitrate and frame rate, and the data disk", async () => {
    await page.click('nav >> text=System');
    await page.waitForURL(`${origin}/system`);
    await page.locator('h1', { hasText: 'System' }).waitFor();
    const row = page.locator('[data-testid=system-camera]', { hasText: 'Front door' });
    await expect
      .poll(() => row.locator('[data-testid=bitrate]').textContent(), { timeout: 30_000 })
      .toMatch(/kbit\/s$/);
    await expect.poll(() => row.locator('[data-testid=fps]').textContent(), { timeout: 15_000 }).toMatch(/ fps$/);
    expect(await row.locator('[data-testid=bitrate]').textContent()).not.toMatch(/^0 kbit/);
    expect(await row.locator('[data-testid=last-error]').textContent()).toBe('None');
    const garage = page.locator('[data-testid=system-camera]', { hasText: 'Garage' });
    await expect
      .poll(() => garage.locator('[data-testid=last-error]').textContent(), { timeout: 30_000 })
      .toMatch(/^main stream: .+\(.+\)$/);
    expect(await garage.locator('[data-testid=bitrate]').textContent()).toBe('Not streaming');
    expect(await page.textContent('[data-testid=version]')).toMatch(/^\d+\.\d+\.\d+/);
    const data = page.locator('[data-testid=disk-data]');
    expect(await data.textContent()).toContain('Gateway data');
    expect(await data.locator('[data-testid=disk-figures]').textContent()).toMatch(
      /^\d+\.\d GB used, \d+\.\d GB free of \d+\.\d GB$/,
    );
    // The CPU share needs a second look: the screen's next refresh brings it.
    await expect.poll(() => page.textContent('[data-testid=cpu]'), { timeout: 15_000 }).toMatch(/^\d+ % busy/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'system');
    // On a phone the cameras are cards, further down.
    await screenshots(page, 'system-cameras', '#streams-title');
    expect(pageErrors).toEqual([]);
  });

  it('warns in plain words of heat, short memory and a disk in trouble', async () => {
    // The test machine is neither hot nor short of memory or disk: the gateway's answer is altered on
    // its way into the page, as a board at 84 °C with its footage disk unplugged would send it.
    await page.route('**/v1/system', async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as SystemStatus;
      body.host.temperature_c = 84.2;
      body.host.memory_available_bytes = Math.floor(body.host.memory_total_bytes * 0.055);
      body.storage.push({
        name: 'footage',
        path: '/mnt/footage',
        total_bytes: null,
        free_bytes: null,
        used_by_gateway_bytes: 120e9,
        state: 'missing',
      });
      await route.fulfill({ response: res, json: body });
    });
    try {
      await page.goto(`${origin}/system`);
      const warnings = page.locator('[data-testid=system-warnings] li');
      await expect
        .poll(() => warnings.allTextContents(), { timeout: 15_000 })
        .toEqual([
          expect.stringMatching(/^The gateway is hot \(84 °C\)/),
          expect.stringMatching(/^Memory is nearly used up \(5 % available\)/),
          'Continuous footage (/mnt/footage) is missing: is the disk plugged in and mounted?',
        ]);
      expect(await page.textContent('[data-testid=disk-footage] [data-testid=disk-figures]')).toBe(
        'Size unknown while the disk is missing',
      );
      expect(await seriousViolations(page)).toEqual([]);
      await screenshots(page, 'system-warnings');
    } finally {
      await page.unroute('**/v1/system');
    }
  });

  it('asks again while shown, not while the tab is hidden, at once when it is shown again, never once left', async () => {
    const before = asked;
    await expect.poll(() => asked, { timeout: 15_000 }).toBeGreaterThan(before);
    await setVisibility('hidden');
    const hiddenAt = asked;
    await during(7_000);
    expect(asked).toBe(hiddenAt);
    await setVisibility('visible');
    await expect.poll(() => asked, { timeout: 5_000 }).toBeGreaterThan(hiddenAt);
    await page.click('nav >> text=Cameras');
    await page.locator('[data-testid=camera]').first().waitFor();
    const leftAt = asked;
    await during(7_000);
    expect(asked).toBe(leftAt);
  });
});

describe('the System screen, as a viewer', { timeout: 120_000 }, () => {
  it('is not in the navigation, and its address says the account may not', async () => {
    const context = await newContext(browser);
    try {
      const viewer = await context.newPage();
      await signIn(viewer, origin, VIEWER);
      await viewer.locator('[data-testid=camera]').first().waitFor();
      expect(await viewer.locator('nav >> text=System').count()).toBe(0);
      await viewer.goto(`${origin}/system`);
      await viewer.locator("text=Your account may not see the gateway's system status").waitFor();
      expect(await viewer.locator('[data-testid=system-camera]').count()).toBe(0);
      expect(await seriousViolations(viewer)).toEqual([]);
      await screenshots(viewer, 'system-viewer');
    } finally {
      await context.close();
    }
  });
});
