import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { launchChromium, newContext } from '../support/browser.js';
import { onlineDevicesByName, startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { screenshots, seriousViolations, signIn } from './app-support.js';

// Steering a pan-tilt-zoom camera from its live view in Debian's chromium, against the started
// gateway and a simulated PTZ camera (no live video: its picture comes from its snapshot URI).
// Where the camera is and what it was sent are read from the simulator itself: held with a mouse,
// a finger (touch events through CDP) and the space bar, the camera turns while the button is down
// and stops when it is let go; presets are saved and recalled; a tap on the picture centres it. A
// fixed camera shows no pad, and a viewer sees none.

const OWNER = { username: 'owner', password: 'owner password 1' };
const VIEWER = { username: 'watcher', password: 'viewer password 1' };
/** Nothing listens there: the gateway falls back to the cameras' snapshot URI for their pictures. */
const NO_RTSP = { rtspMain: 'rtsp://127.0.0.1:9/main', rtspSub: 'rtsp://127.0.0.1:9/sub' };

const dome = new SimulatedCamera({ username: 'admin', password: 'pw', ...NO_RTSP });
const fixed = new SimulatedCamera({ username: 'admin', password: 'pw', ptz: false, ...NO_RTSP });
let t: TestGateway;
let ids: Record<string, string> = {};
let browser: Browser;
let page: Page;
let cdp: CDPSession;

const sent = (op: string) => dome.calls.get(op) ?? 0;
const pan = () => dome.ptz!.position().pan;
const button = (label: string) => page.locator(`[data-testid=ptz] button[aria-label="${label}"]`);

/** Holds until the move has been sent `moves` times in all (the hold resends it), checking as it goes. */
async function whileHeld(moves: number): Promise<void> {
  await expect.poll(() => sent('ContinuousMove'), { timeout: 20_000 }).toBeGreaterThanOrEqual(moves);
}

/** The camera has stopped: the Stop came, and two looks a moment apart see it at the same place. */
async function stoppedAfter(stops: number): Promise<number> {
  await expect.poll(() => sent('Stop'), { timeout: 10_000 }).toBeGreaterThan(stops);
  const at = pan();
  await new Promise((r) => setTimeout(r, 300));
  expect(pan()).toBe(at);
  return at;
}

beforeAll(async () => {
  for (const cam of [dome, fixed]) await cam.start();
  t = await startTestGateway({
    cameras: [
      { name: 'Dome', onvif_url: dome.deviceServiceUrl, username: 'admin', password: 'pw' },
      { name: 'Porch', onvif_url: fixed.deviceServiceUrl, username: 'admin', password: 'pw' },
    ],
  });
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  await addUser(t.gw.store, VIEWER.username, VIEWER.password, 'viewer');
  ids = await onlineDevicesByName(t, ['Dome', 'Porch']);
  browser = await launchChromium();
  page = await (await newContext(browser)).newPage();
  cdp = await page.context().newCDPSession(page);
  await signIn(page, t.gw.apiUrl, OWNER);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  for (const cam of [dome, fixed]) await cam.stop();
});

describe('the live view of a PTZ camera', { timeout: 120_000 }, () => {
  it('turns the camera while an arrow is held with the mouse, and stops it on release', async () => {
    await page.goto(`${t.gw.apiUrl}/cameras/${ids.Dome}`);
    await button('Pan right').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    const moves = sent('ContinuousMove');
    const stops = sent('Stop');
    await button('Pan right').hover();
    await page.mouse.down();
    await whileHeld(moves + 1);
    const early = pan();
    expect(early).toBeGreaterThanOrEqual(0);
    // Held past the gateway's own stop (a second after the last move): the resent moves keep it going.
    await whileHeld(moves + 4);
    expect(pan()).toBeGreaterThan(early);
    await page.mouse.up();
    const at = await stoppedAfter(stops);
    expect(at).toBeGreaterThan(0);
    expect(await page.textContent('[data-testid=ptz-outcome]')).toBe('');
  });

  it('turns it while a finger holds an arrow, and stops when it lifts', async () => {
    await button('Pan left').scrollIntoViewIfNeeded();
    const box = (await button('Pan left').boundingBox())!;
    const point = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    const before = pan();
    const moves = sent('ContinuousMove');
    const stops = sent('Stop');
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [point] });
    await whileHeld(moves + 2);
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    expect(await stoppedAfter(stops)).toBeLessThan(before);
  });

  it('turns it while the space bar is held on a focused arrow', async () => {
    await button('Tilt up').focus();
    const before = dome.ptz!.position().tilt;
    const moves = sent('ContinuousMove');
    const stops = sent('Stop');
    await page.keyboard.down(' ');
    await whileHeld(moves + 2);
    await page.keyboard.up(' ');
    await stoppedAfter(stops);
    expect(dome.ptz!.position().tilt).toBeGreaterThan(before);
  });

  it('saves the position as a preset, and goes back to it from elsewhere', async () => {
    const saved = dome.ptz!.position();
    await page.getByLabel('New preset').fill('Front gate');
    await page.click('text=Save position');
    await expect.poll(() => page.textContent('[data-testid=ptz-outcome]')).toBe('Saved this position as Front gate.');
    await expect.poll(() => page.locator('[data-testid=ptz] select option').allTextContents()).toEqual(['Front gate']);
    await page.click('[data-testid=ptz] >> text=Home');
    await expect.poll(() => page.textContent('[data-testid=ptz-outcome]')).toBe('Gone to the home position.');
    expect(dome.ptz!.position()).not.toEqual(saved);
    await page.click('[data-testid=ptz] button:text-is("Go")');
    await expect.poll(() => page.textContent('[data-testid=ptz-outcome]')).toBe('Gone to Front gate.');
    expect(dome.ptz!.position()).toEqual(saved);
    await screenshots(page, 'live-ptz', '[data-testid=ptz]');
  });

  it('centres the camera on a point tapped on the picture', async () => {
    await expect
      .poll(() => page.evaluate(`document.querySelector('[data-testid=live-stage] img')?.naturalWidth ?? 0`), {
        timeout: 20_000,
      })
      .toBeGreaterThan(0);
    const relative = sent('RelativeMove');
    const before = pan();
    await page.click('[data-testid=ptz-centre]');
    await page.locator('[data-testid=live-stage] img').scrollIntoViewIfNeeded();
    const box = (await page.locator('[data-testid=live-stage] img').boundingBox())!;
    // Right of the middle: the camera turns right.
    await page.mouse.click(box.x + box.width * 0.9, box.y + box.height / 2);
    await expect.poll(() => page.textContent('[data-testid=ptz-outcome]')).toBe('Centred on the point you tapped.');
    expect(sent('RelativeMove')).toBe(relative + 1);
    expect(pan()).toBeGreaterThan(before);
  });

  it('removes a preset', async () => {
    await page.click('[data-testid=ptz] >> text=Remove');
    await expect.poll(() => page.textContent('[data-testid=ptz-outcome]')).toBe('Removed Front gate.');
    await expect.poll(() => page.locator('[data-testid=ptz] .placeholder-text').count()).toBe(1);
  });

  it('shows no pad for a fixed camera', async () => {
    await page.goto(`${t.gw.apiUrl}/cameras/${ids.Porch}`);
    await page.locator('[data-testid=device-controls]').waitFor();
    expect(await page.locator('[data-testid=ptz]').count()).toBe(0);
  });

  it('shows no pad to a viewer', async () => {
    const viewer = await (await newContext(browser)).newPage();
    await signIn(viewer, t.gw.apiUrl, VIEWER);
    await viewer.goto(`${t.gw.apiUrl}/cameras/${ids.Dome}`);
    await viewer.locator('[data-testid=live-mode]').waitFor();
    expect(await viewer.locator('[data-testid=ptz]').count()).toBe(0);
    await viewer.close();
  });
});
