import type { Device } from '../../web/src/types.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { launchChromium, newContext } from '../support/browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { screenshots, seriousViolations, signIn } from './app-support.js';

// The web app's camera set-up screens in Debian's chromium, against the started gateway and
// simulated ONVIF cameras (no live video: their pictures come from their snapshot URI): an admin
// renames a camera, draws a zone and a mask on its picture (a crossing shape refused before
// anything is sent), gives a camera that refuses the gateway its password, adds a camera by its
// address and removes it; a camera of the config file shows its fields read-only; a viewer gets
// none of it. axe-core on each screen; screenshots at a phone's and a desktop's size.

const OWNER = { username: 'owner', password: 'owner password 1' };
const VIEWER = { username: 'watcher', password: 'viewer password 1' };
/** Nothing listens there: the gateway falls back to the cameras' snapshot URI for their pictures. */
const NO_RTSP = { rtspMain: 'rtsp://127.0.0.1:9/main', rtspSub: 'rtsp://127.0.0.1:9/sub' };

const fileCam = new SimulatedCamera({ username: 'admin', password: 'file-pw', ...NO_RTSP });
const yardCam = new SimulatedCamera({ username: 'admin', password: 'yard-pw', ...NO_RTSP });
const lockedCam = new SimulatedCamera({ username: 'admin', password: 'right-one', ...NO_RTSP });
const garageCam = new SimulatedCamera({ username: 'admin', password: 'garage-pw', ...NO_RTSP });
const cameras = [fileCam, yardCam, lockedCam, garageCam];
let t: TestGateway;
let origin = '';
let yardId = '';
let lockedId = '';
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

const hostOf = (cam: SimulatedCamera) => new URL(cam.baseUrl).host;
const admin = () => t.auth('devices:read devices:write');

async function getDevice(id: string): Promise<{ status: number; device: Device }> {
  const res = await t.request(`/v1/devices/${id}`, { headers: await admin() });
  return { status: res.status, device: res.json() as Device };
}

async function listed(): Promise<Device[]> {
  return ((await t.request('/v1/devices', { headers: await admin() })).json() as { data: Device[] }).data;
}

async function addByApi(cam: SimulatedCamera, password: string, name: string): Promise<string> {
  const res = await t.request('/v1/devices', {
    method: 'POST',
    headers: await admin(),
    body: { address: hostOf(cam), username: 'admin', password, name },
  });
  if (res.status !== 201) throw new Error(`POST /v1/devices: ${res.status} ${res.text}`);
  return (res.json() as Device).id;
}

/** Waits for a camera's status, for beforeAll where expect.poll does not belong. Throws after ~20 s. */
async function statusReached(id: string, status: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await getDevice(id)).device.status === status) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${id} did not become ${status}`);
}

/** Clicks the picture being drawn on at these points (0–1 of its size). */
async function clickPicture(points: Array<[number, number]>): Promise<void> {
  const box = (await page.locator('[data-testid=area-picture]').boundingBox())!;
  for (const [x, y] of points) await page.mouse.click(box.x + x * box.width, box.y + y * box.height);
}

async function pictureShown(): Promise<void> {
  await expect
    .poll(() => page.evaluate(`document.querySelector('[data-testid=area-picture] img')?.naturalWidth ?? 0`), {
      timeout: 20_000,
    })
    .toBeGreaterThan(0);
}

beforeAll(async () => {
  for (const cam of cameras) await cam.start();
  t = await startTestGateway({
    cameras: [
      { name: 'Gate', onvif_url: fileCam.deviceServiceUrl, username: 'admin', password: 'file-pw', detection: 'on' },
    ],
    // A refused account is tried again only after the manager's wait (minutes) otherwise.
    onvif: { health_interval_s: 1, max_backoff_s: 2 },
  });
  origin = t.gw.apiUrl;
  await addUser(t.gw.store, OWNER.username, OWNER.password);
  await addUser(t.gw.store, VIEWER.username, VIEWER.password, 'viewer');
  yardId = await addByApi(yardCam, 'yard-pw', 'Yard');
  lockedId = await addByApi(lockedCam, 'wrong', 'Shed');
  browser = await launchChromium();
  page = await (await newContext(browser)).newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await statusReached(yardId, 'online');
  await statusReached(lockedId, 'unauthorized');
  await signIn(page, origin, OWNER);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  for (const cam of cameras) await cam.stop();
});

describe('camera set-up, as an admin', { timeout: 120_000 }, () => {
  it("opens a camera's settings from its live view and renames it: the cameras screen says the new name", async () => {
    await page.goto(`${origin}/cameras/${yardId}`);
    await page.click('[data-testid=settings-link]');
    await page.waitForURL(`${origin}/cameras/${yardId}/settings`);
    await pictureShown();
    expect(await page.inputValue('#setting-name')).toBe('Yard');
    // This gateway keeps no continuous footage: the choice says so instead of failing.
    expect(await page.locator('#setting-recording option[value=continuous]').isDisabled()).toBe(true);
    expect(await page.textContent('#setting-password-hint')).toBe('A password is set; enter a new one to change it.');
    expect(await page.inputValue('#setting-password')).toBe('');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'settings');

    await page.fill('#setting-name', 'Back yard');
    await page.click('text=Save changes');
    await expect.poll(() => page.textContent('[data-testid=settings-outcome]')).toBe('Saved.');
    expect((await getDevice(yardId)).device.name).toBe('Back yard');
    expect(await page.locator('h1').textContent()).toBe('Back yard: settings');
    await page.click('nav >> text=Cameras');
    await expect.poll(() => page.locator('[data-testid=camera] .camera-name').allTextContents()).toContain('Back yard');
  });

  it('draws a zone with clicks on the picture, makes it required, saves it, and finds it after a reload', async () => {
    await page.goto(`${origin}/cameras/${yardId}/settings`);
    await pictureShown();
    await page.click('text=Draw a zone');
    const corners: Array<[number, number]> = [
      [0.55, 0.5],
      [0.9, 0.5],
      [0.9, 0.9],
      [0.55, 0.9],
    ];
    await clickPicture(corners);
    expect(await page.locator('[data-corner]').count()).toBe(4);
    await page.click('.draw-tools button:has-text("Finish")');
    const zone = page.locator('[data-testid=zone]');
    expect(await zone.count()).toBe(1);
    expect(await zone.locator('input').first().inputValue()).toBe('zone-1');
    await zone.locator('text=Required').click();
    await zone.locator('text=Alert for things that stay put').click();
    const stay = zone.getByLabel('Alert when a person stays');
    await stay.fill('0');
    expect(await zone.locator('.field-error').textContent()).toMatch(/whole number of seconds, 1 to 3600/);
    await stay.fill('45');
    expect(await zone.locator('.field-error').count()).toBe(0);
    await page.click('text=Save mask and zones');
    await expect.poll(() => page.textContent('[data-testid=areas-outcome]')).toMatch(/^Saved/);
    const { zones } = (await getDevice(yardId)).device.settings;
    expect(zones).toHaveLength(1);
    expect(zones[0]).toMatchObject({ name: 'zone-1', required: true, alert_on_stationary: true, loitering_s: 45 });
    zones[0]!.polygon.forEach(([x, y], i) => {
      expect(x).toBeCloseTo(corners[i]![0], 2);
      expect(y).toBeCloseTo(corners[i]![1], 2);
    });

    await page.reload();
    await page.locator('[data-testid=zone]').waitFor();
    expect(await page.locator('[data-testid=zone] input').first().inputValue()).toBe('zone-1');
    expect(await page.locator('[data-testid=zone] input[type=checkbox]').first().isChecked()).toBe(true);
    expect(await page.locator('[data-testid=zone]').getByLabel('Alert when a person stays').inputValue()).toBe('45');
    expect(await page.locator('.area-shape.area-zone.area-required').count()).toBe(1);
    await screenshots(page, 'settings-zone', '[data-testid=zone]');
  });

  it('draws a mask closed on its first corner, and moves a corner with the keys', async () => {
    await pictureShown();
    await page.click('text=Draw a mask area');
    await clickPicture([
      [0.05, 0.05],
      [0.4, 0.05],
      [0.4, 0.3],
      [0.05, 0.3],
    ]);
    await page.click('[data-corner="0"]');
    expect(await page.locator('[data-testid=mask-area]').count()).toBe(1);
    // The new shape's corners are being edited: the first one has the focus; the keys move it.
    const corner = page.locator('[data-corner="1"]');
    await corner.focus();
    const before = await corner.getAttribute('aria-label');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    expect(await corner.getAttribute('aria-label')).not.toBe(before);
    expect(await page.textContent('[data-testid=area-list]')).toMatch(/It covers \d+ of the 144 cells/);
    await page.click('text=Save mask and zones');
    await expect.poll(() => page.textContent('[data-testid=areas-outcome]')).toMatch(/^Saved/);
    const { motion_mask } = (await getDevice(yardId)).device.settings;
    expect(motion_mask).toHaveLength(1);
    expect(motion_mask[0]![1]![0]).toBeCloseTo(0.41, 2);
    expect(motion_mask[0]![1]![1]).toBeCloseTo(0.06, 2);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'settings-areas', '.areas');
  });

  it('drags a corner with a mouse and with a finger', async () => {
    const box = (await page.locator('[data-testid=area-picture]').boundingBox())!;
    const at = (x: number, y: number) => ({ x: box.x + x * box.width, y: box.y + y * box.height });
    const corner = page.locator('[data-corner="2"]');
    const place = async () => {
      const b = (await corner.boundingBox())!;
      return [(b.x + b.width / 2 - box.x) / box.width, (b.y + b.height / 2 - box.y) / box.height];
    };
    // A tap inside the mask area chooses it.
    await page.mouse.click(at(0.2, 0.15).x, at(0.2, 0.15).y);
    expect(await page.getAttribute('[data-testid=mask-area] button[aria-pressed]', 'aria-pressed')).toBe('true');
    const [x0, y0] = await place();
    const start = at(x0!, y0!);
    let to = at(0.45, 0.4);
    await page.mouse.move(start.x, start.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y, { steps: 6 });
    await page.mouse.up();
    let now = await place();
    expect(now[0]).toBeCloseTo(0.45, 2);
    expect(now[1]).toBeCloseTo(0.4, 2);
    // A finger: touch events as a phone sends them; a corner takes them all (touch-action: none), no scrolling.
    const cdp = await page.context().newCDPSession(page);
    const from = at(now[0]!, now[1]!);
    to = at(0.3, 0.35);
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [from] });
    for (let i = 1; i <= 6; i++) {
      const p = { x: from.x + ((to.x - from.x) * i) / 6, y: from.y + ((to.y - from.y) * i) / 6 };
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [p] });
    }
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    now = await place();
    expect(now[0]).toBeCloseTo(0.3, 2);
    expect(now[1]).toBeCloseTo(0.35, 2);
    await cdp.detach();
    await page.click('text=Undo changes');
  });

  it('refuses a shape whose edges cross, saying so, and sends nothing', async () => {
    const saved = (await getDevice(yardId)).device.settings;
    await page.click('text=Draw a mask area');
    await clickPicture([
      [0.1, 0.45],
      [0.4, 0.75],
      [0.4, 0.45],
      [0.1, 0.85],
    ]);
    await page.click('.draw-tools button:has-text("Finish")');
    expect(await page.locator('.area-shape.area-bad').count()).toBe(1);
    expect(await page.locator('[data-testid=mask-area]').nth(1).textContent()).toMatch(/Its edges cross/);
    const sent: string[] = [];
    page.on('request', (req) => {
      if (req.method() === 'PATCH') sent.push(req.url());
    });
    await page.click('text=Save mask and zones');
    expect(await page.textContent('[data-testid=areas-outcome]')).toMatch(/^Not saved\. Mask area 2: Its edges cross/);
    expect(sent).toEqual([]);
    expect((await getDevice(yardId)).device.settings).toEqual(saved);
    await screenshots(page, 'settings-refused', '.areas');
    await page.click('text=Undo changes');
    expect(await page.locator('[data-testid=mask-area]').count()).toBe(1);
  });

  it('draws a zone by keyboard alone: a square, a corner moved, one added and one removed', async () => {
    // The focus moves once the new controls are drawn (an effect after the next frame).
    const focused = () =>
      page.evaluate(
        `document.activeElement?.textContent?.trim() || document.activeElement?.getAttribute('aria-label')`,
      );
    await page.locator('button[data-add=zone]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Start from a square');
    await page.keyboard.press('Enter');
    // The new zone's first corner has the focus.
    await expect.poll(focused).toMatch(/^Corner 1 of Zone zone-2: \d+ % across/);
    await page.keyboard.press('Shift+ArrowLeft');
    expect(await page.locator('[data-corner]').count()).toBe(4);
    // A "+" is a button: it adds a corner and the focus goes to it.
    await page.locator('.area-midpoint').first().focus();
    await page.keyboard.press('Enter');
    expect(await page.locator('[data-corner]').count()).toBe(5);
    await expect.poll(focused).toMatch(/^Corner 2 of Zone zone-2/);
    await page.keyboard.press('Delete');
    expect(await page.locator('[data-corner]').count()).toBe(4);
    await expect.poll(focused).toMatch(/^Corner 1 of Zone zone-2/);
    expect(await page.locator('[data-testid=zone]').count()).toBe(2);
    await page.click('text=Undo changes');
    expect(await page.locator('[data-testid=zone]').count()).toBe(1);
  });

  it('follows a change made elsewhere at once: untouched fields and the areas take it, what is typed here stays', async () => {
    await page.goto(`${origin}/cameras/${yardId}/settings`);
    await pictureShown();
    const before = (await getDevice(yardId)).device;
    await page.selectOption('#setting-detection', 'on');
    // Another admin, in another browser (here: the API), renames the camera and draws a mask.
    const patch = await t.request(`/v1/devices/${yardId}`, {
      method: 'PATCH',
      headers: await admin(),
      body: {
        name: 'Yard (east)',
        motion_mask: [
          ...before.settings.motion_mask,
          [
            [0, 0],
            [0.2, 0],
            [0.2, 0.2],
          ],
        ],
      },
    });
    expect(patch.status).toBe(200);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Yard (east): settings');
    // The form takes the change in an effect after the render that shows the new title.
    await expect.poll(() => page.inputValue('#setting-name')).toBe('Yard (east)');
    expect(await page.inputValue('#setting-detection')).toBe('on');
    await expect
      .poll(() => page.locator('[data-testid=mask-area]').count())
      .toBe(before.settings.motion_mask.length + 1);
    // Saving sends what was changed here only: the other admin's name stays.
    await page.click('text=Save changes');
    await expect.poll(() => page.textContent('[data-testid=settings-outcome]')).toBe('Saved.');
    const after = (await getDevice(yardId)).device;
    expect([after.name, after.settings.detection, after.settings.motion_mask.length]).toEqual([
      'Yard (east)',
      'on',
      before.settings.motion_mask.length + 1,
    ]);
    // Put back as the tests after this one expect it.
    const back = await t.request(`/v1/devices/${yardId}`, {
      method: 'PATCH',
      headers: await admin(),
      body: { name: before.name, detection: before.settings.detection, motion_mask: before.settings.motion_mask },
    });
    expect(back.status).toBe(200);
  });

  it('shows what the config file sets read-only, and offers no removal of its camera', async () => {
    const gate = (await listed()).find((d) => d.name === 'Gate')!;
    await page.goto(`${origin}/cameras/${gate.id}/settings`);
    await page.locator('#setting-name').waitFor();
    expect(await page.getAttribute('#setting-name', 'readonly')).not.toBeNull();
    expect(await page.getAttribute('#setting-username', 'readonly')).not.toBeNull();
    expect(await page.locator('#setting-password').count()).toBe(0);
    expect(await page.locator('#setting-detection').isDisabled()).toBe(true);
    expect(await page.textContent('#setting-name-note')).toBe("Set in the gateway's configuration file.");
    expect(await page.textContent('#setting-detection-note')).toBe("Set in the gateway's configuration file.");
    // What the file leaves out is the app's.
    expect(await page.locator('#setting-recording').isDisabled()).toBe(false);
    expect(await page.locator('text=Delete camera…').count()).toBe(0);
    expect(await page.textContent('.remove-camera')).toContain('remove it there');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'settings-file-camera');
  });

  it("gives a camera that refuses the gateway its password, from the camera's card", async () => {
    await page.click('nav >> text=Cameras');
    const card = page.locator('[data-testid=camera]', { hasText: 'Shed' });
    await card.locator('[data-testid=enter-password]').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'cameras-admin');
    await card.locator('[data-testid=enter-password]').click();
    await page.waitForURL((url) => url.pathname === '/cameras/new');
    const item = page.locator('[data-testid=refusing-camera]').first();
    expect(await item.locator('.camera-name').textContent()).toBe('Shed');
    await item.locator('input[type=password]').fill('right-one');
    await item.locator('text=Connect').click();
    await expect.poll(() => item.locator('.status').textContent(), { timeout: 20_000 }).toBe('Online');
    expect((await getDevice(lockedId)).device.status).toBe('online');
  });

  it('adds a camera by its address and password: it goes online; then removes it', async () => {
    await page.click('nav >> text=Cameras');
    await page.click('[data-testid=add-camera-link]');
    await page.waitForURL(`${origin}/cameras/new`);
    // An RTSP address in the ONVIF form is refused with a sentence pointing at the other form, before anything is sent.
    await page.fill('#add-address', 'rtsp://10.0.0.9/stream');
    await page.fill('#add-username', 'admin');
    await page.click('text=Add camera');
    expect(await page.textContent('#add-address-error')).toMatch(/That is an RTSP address: choose "By RTSP address"/);
    await page.fill('#add-address', hostOf(garageCam));
    await page.fill('#add-password', 'garage-pw');
    await page.fill('#add-name', 'Garage');
    await page.click('text=Add camera');
    const added = page.locator('[data-testid=added-camera]');
    await added.waitFor();
    await expect.poll(() => added.locator('.status').textContent(), { timeout: 20_000 }).toBe('Online');
    const garage = (await listed()).find((d) => d.name === 'Garage')!;
    expect(garage.status).toBe('online');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'add-camera');

    await added.locator('text=Settings').click();
    await page.waitForURL(`${origin}/cameras/${garage.id}/settings`);
    await page.click('text=Delete camera…');
    const dialog = page.locator('dialog[open]');
    expect(await dialog.textContent()).toContain('kept until their retention');
    await screenshots(page, 'settings-delete-dialog');
    await dialog.locator('button', { hasText: 'Delete camera' }).click();
    await page.waitForURL(`${origin}/`);
    await page.locator('[data-testid=camera]').first().waitFor();
    expect(await page.locator('[data-testid=camera]', { hasText: 'Garage' }).count()).toBe(0);
    expect((await getDevice(garage.id)).status).toBe(404);
    expect(pageErrors).toEqual([]);
  });
});

describe('camera set-up, as a viewer', { timeout: 120_000 }, () => {
  it('offers no settings, and the settings address says the account may not', async () => {
    const context = await newContext(browser);
    try {
      const viewer = await context.newPage();
      await signIn(viewer, origin, VIEWER);
      await viewer.locator('[data-testid=camera]').first().waitFor();
      expect(await viewer.locator('[data-testid=add-camera-link]').count()).toBe(0);
      expect(await viewer.locator('[data-testid=enter-password]').count()).toBe(0);
      await viewer.goto(`${origin}/cameras/${yardId}`);
      await viewer.locator('[data-testid=live-mode]').waitFor();
      expect(await viewer.locator('[data-testid=settings-link]').count()).toBe(0);
      for (const path of [`/cameras/${yardId}/settings`, '/cameras/new']) {
        await viewer.goto(`${origin}${path}`);
        await viewer.locator('text=Your account may not set cameras up').waitFor();
        expect(await viewer.locator('form').count()).toBe(0);
      }
      expect(await seriousViolations(viewer)).toEqual([]);
      await screenshots(viewer, 'settings-viewer');
    } finally {
      await context.close();
    }
  });
});
