import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from '../support/browser.js';
import { startFootageRig, type FootageRig } from '../support/footage-rig.js';
import type { TestGateway } from '../support/gateway.js';
import { addUser } from '../support/oauth.js';
import { tmpfsUnavailable } from '../support/tmpfs.js';
import { screenshots, seriousViolations, signIn, videoFrames } from './app-support.js';

// The footage timeline of the web app in Debian's chromium, against the started gateway recording
// a simulated camera around the clock onto a tmpfs of its own: reached from the live view and from
// an event, the footage kept drawn on the bar, the picture of the moment under the playhead while
// it is dragged or moved by keys, playing from there at a chosen speed, the previous event, a range
// exported as an MP4 that ffprobe reads; axe-core and screenshots at a phone's and a desktop's size.

const run = promisify(execFile);
const OWNER = { username: 'owner', password: 'owner password 1' };
const VIEWER = { username: 'watcher', password: 'viewer password 1' };
const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`skipping the timeline's browser test: ${unavailable}`);

let rig: FootageRig;
let t: TestGateway;
let origin = '';
let deviceId = '';
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** The moment under the playhead, as the slider tells a screen reader (ms). */
async function playheadMs(): Promise<number> {
  return Number(await page.getAttribute('[data-testid=timeline-bar]', 'aria-valuenow')) * 1000;
}

describe.skipIf(unavailable !== null)('the footage timeline in a browser', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    rig = await startFootageRig({
      name: 'Front door',
      password: 'cam-secret-timeline',
      recording: { pre_roll_s: 1, post_roll_s: 2 },
    });
    ({ t, deviceId } = rig);
    origin = t.gw.apiUrl;
    await addUser(t.gw.store, OWNER.username, OWNER.password);
    await addUser(t.gw.store, VIEWER.username, VIEWER.password, 'viewer');
    browser = await launchChromium();
    page = await (await newContext(browser)).newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    await signIn(page, origin, OWNER);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await rig?.stop();
  });

  it('records around the clock, and a person at the door', async () => {
    await expect.poll(async () => (await rig.spans()).length, { timeout: 40_000, interval: 500 }).toBe(1);
    const camera = rig.fleet.cameras[0]!;
    camera.trigger('human', true);
    await new Promise((r) => setTimeout(r, 1_500));
    camera.trigger('human', false);
    await expect
      .poll(
        async () =>
          (
            await t.request(`/v1/devices/${deviceId}/recordings`, { headers: await t.auth('recordings:read') })
          ).json() as { data: unknown[] },
        { timeout: 60_000, interval: 1000 },
      )
      .toMatchObject({ data: [expect.anything()] });
    await expect
      .poll(
        async () => {
          const [s] = await rig.spans();
          return s ? Date.parse(s.end) - Date.parse(s.start) : 0;
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toBeGreaterThan(30_000);
  });

  it('is reached from the live view, draws the footage kept and shows the picture under the playhead', async () => {
    await page.goto(`${origin}/cameras/${encodeURIComponent(deviceId)}`);
    await page.click('[data-testid=timeline-link]');
    await page.waitForURL((url) => url.pathname.endsWith('/timeline'));
    await page.locator('[data-testid=timeline-span]').first().waitFor({ timeout: 20_000 });
    await expect
      .poll(() => page.evaluate(`document.querySelector('[data-testid=footage-frame] img')?.naturalWidth ?? 0`), {
        timeout: 20_000,
      })
      .toBeGreaterThan(0);
    expect(await page.textContent('[data-testid=footage-kept]')).toContain('Recording around the clock');
    expect(await page.locator('[data-testid=timeline-event]').count()).toBeGreaterThan(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'timeline');
    expect(pageErrors).toEqual([]);
  });

  it('moves by keys and by dragging, asking for the picture of the moment it rests on', async () => {
    const frames: number[] = [];
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (url.pathname.endsWith('/footage/frame')) frames.push(Date.parse(url.searchParams.get('at') ?? ''));
    });
    const bar = page.locator('[data-testid=timeline-bar]');
    await bar.focus();
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    const before = await playheadMs();
    await page.keyboard.press('ArrowLeft');
    const stepped = await playheadMs();
    expect(stepped).toBeLessThan(before);
    // The slider says whole seconds; the picture is asked for the moment itself.
    await expect.poll(() => Math.abs(frames.at(-1)! - stepped), { timeout: 10_000 }).toBeLessThan(1000);

    // Dragged right by a quarter of the bar: the playhead goes back in time (as far as the oldest footage).
    const box = (await bar.boundingBox())!;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width / 2, y);
    await page.mouse.down();
    await page.mouse.move(box.x + (box.width * 3) / 4, y, { steps: 8 });
    await page.mouse.up();
    const dragged = await playheadMs();
    expect(dragged).toBeLessThan(stepped - 5_000);
    expect(dragged).toBeGreaterThanOrEqual(Number(await bar.getAttribute('aria-valuemin')) * 1000);
    await expect.poll(() => Math.abs(frames.at(-1)! - dragged), { timeout: 10_000 }).toBeLessThan(1000);
  });

  it('jumps to the previous event and plays from there, faster when asked', async () => {
    await page.click('text=Latest');
    const now = await playheadMs();
    await page.click('text=◀ Previous event');
    const [clip] = (
      (await t.request(`/v1/devices/${deviceId}/recordings`, { headers: await t.auth('recordings:read') })).json() as {
        data: Array<{ started_at: string }>;
      }
    ).data;
    await expect.poll(playheadMs).toBe(Math.round(Date.parse(clip!.started_at) / 1000) * 1000);
    expect(await playheadMs()).toBeLessThan(now);

    await page.click('button:has-text("4×")');
    await page.click('[data-testid=timeline-play]');
    const video = '[data-testid=footage-video]';
    await expect.poll(() => videoFrames(page, video), { timeout: 20_000 }).toBeGreaterThan(10);
    expect(await page.evaluate(`document.querySelector('${video}').playbackRate`)).toBe(4);
    // The playhead follows the video: later than where it started.
    const from = Date.parse(clip!.started_at);
    await expect.poll(playheadMs, { timeout: 20_000 }).toBeGreaterThan(from + 4_000);
    await screenshots(page, 'timeline-playing');
    await page.click('[data-testid=timeline-play]');
  });

  it('exports a range as an MP4 that ffprobe reads, as long as the range', async () => {
    const [span] = await rig.spans();
    const start = Date.parse(span!.start) + 2_000;
    const end = start + 12_000;
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    await page.click('text=Export…');
    await page.fill('form.export >> text=From >> input', local(start));
    await page.fill('form.export >> text=To >> input', local(end));
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('text=Download MP4')]);
    expect(download.suggestedFilename()).toMatch(/^Front-door-.*\.mp4$/);
    const file = await download.path();
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'format=duration',
      '-of',
      'csv=p=0',
      file,
    ]);
    // From the keyframe at or before start (the simulator's GOP is at most 2 s).
    expect(Number(stdout.trim())).toBeGreaterThan(12 - 0.5);
    expect(Number(stdout.trim())).toBeLessThan(12 + 2.5);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('opens at the moment of an event from the events screen', async () => {
    await page.click('nav >> text=Events');
    const row = page.locator('[data-testid=alert]').first();
    await row.waitFor();
    const alertAt = Date.parse((await row.locator('time').getAttribute('datetime'))!);
    await row.locator('text=Show in timeline').click();
    await page.waitForURL((url) => url.pathname.endsWith('/timeline') && url.searchParams.has('at'));
    await expect.poll(playheadMs).toBe(Math.round((alertAt - 5_000) / 1000) * 1000);
  });

  it('offers a viewer the footage but no export', async () => {
    const viewer = await (await newContext(browser)).newPage();
    await signIn(viewer, origin, VIEWER);
    await viewer.goto(`${origin}/cameras/${encodeURIComponent(deviceId)}/timeline`);
    await viewer.locator('[data-testid=timeline-span]').first().waitFor({ timeout: 20_000 });
    expect(await viewer.locator('text=Export…').count()).toBe(0);
    await viewer.close();
  });
});
