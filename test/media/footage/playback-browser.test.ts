import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from '../../support/browser.js';
import { startFootageRig, type FootageRig } from '../../support/footage-rig.js';
import type { TestGateway } from '../../support/gateway.js';
import { tmpfsUnavailable } from '../../support/tmpfs.js';

// A window of continuous footage across several files and a gap (the footage disk was full for a
// while), played in Debian's chromium through hls.js from the window's playback_url, as the web app
// does (same origin: the page is served at the gateway's origin by the test's route). The player's
// time must pass the join of the files and the gap, and the date it plays (hls.js's playingDate,
// from EXT-X-PROGRAM-DATE-TIME) must jump over the gap.

const run = promisify(execFile);
const HLS_JS = readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'));
const PASSWORD = 'cam-secret-footage-play';
const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`skipping the footage playback test: ${unavailable}`);

const PAGE = `<!doctype html>
<html><body>
<video id="v" muted playsinline></video>
<script src="/__test/hls.min.js"></script>
<script>
  window.hlsErrors = [];
  window.dates = [];
  const src = new URLSearchParams(location.search).get('src');
  const video = document.getElementById('v');
  const hls = new Hls();
  hls.on(Hls.Events.ERROR, (_e, data) => window.hlsErrors.push({ fatal: data.fatal, type: data.type, details: data.details }));
  hls.loadSource(src);
  hls.attachMedia(video);
  hls.on(Hls.Events.MANIFEST_PARSED, () => { video.playbackRate = 4; video.play().catch((err) => window.hlsErrors.push({ fatal: true, type: 'play', details: String(err) })); });
  video.addEventListener('timeupdate', () => { if (hls.playingDate) window.dates.push([video.currentTime, hls.playingDate.getTime()]); });
  window.hls = hls;
</script>
</body></html>`;

let rig: FootageRig;
let t: TestGateway;
let browser: Browser;
let disk = '';
let deviceId = '';
const spans = () => rig.spans();

describe.skipIf(unavailable !== null)('continuous footage in a browser', () => {
  beforeAll(async () => {
    rig = await startFootageRig({ name: 'Porch', password: PASSWORD });
    ({ t, disk, deviceId } = rig);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await rig?.stop();
  });

  it('hls.js plays a window across files and a gap: time goes on past both, the date jumps the gap', async () => {
    // Footage, then a gap (the disk full for a few seconds), then footage again.
    await expect.poll(async () => (await spans()).length, { timeout: 40_000, interval: 500 }).toBe(1);
    await expect
      .poll(
        async () => {
          const [s] = await spans();
          return s ? Date.parse(s.end) - Date.parse(s.start) : 0;
        },
        { timeout: 40_000, interval: 500 },
      )
      .toBeGreaterThan(12_000);
    const filler = path.join(disk, 'filler');
    await run('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'status=none']).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 6000));
    rmSync(filler);
    await expect.poll(async () => (await spans()).length, { timeout: 60_000, interval: 1000 }).toBe(2);
    await expect
      .poll(
        async () => {
          const s = (await spans())[1];
          return s ? Date.parse(s.end) - Date.parse(s.start) : 0;
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toBeGreaterThan(8000);
    const [before, after] = await spans();

    // From 8 s before the end of the first stretch to 6 s into the second.
    const start = Date.parse(before!.end) - 8000;
    const end = Date.parse(after!.start) + 6000;
    const q = `start=${new Date(start).toISOString()}&end=${new Date(end).toISOString()}`;
    const res = await t.request(`/v1/devices/${deviceId}/footage/playback?${q}`, {
      headers: await t.auth('recordings:read'),
    });
    expect(res.status, res.text).toBe(200);
    const { playback_url: url } = res.json() as { playback_url: string };

    const context = await newContext(browser);
    try {
      // The page at the gateway's own origin, as the web app is: the playlist is same-origin.
      await context.route(`${t.gw.apiUrl}/__test/**`, (route) => {
        const u = new URL(route.request().url());
        if (u.pathname === '/__test/hls.min.js')
          return route.fulfill({ status: 200, contentType: 'text/javascript', body: HLS_JS });
        return route.fulfill({ status: 200, contentType: 'text/html', body: PAGE });
      });
      const page = await context.newPage();
      await page.goto(`${t.gw.apiUrl}/__test/page?src=${encodeURIComponent(url)}`);
      const dates = () => page.evaluate<Array<[number, number]>>('window.dates');
      // Past the gap: a date in the second stretch.
      await expect
        .poll(async () => (await dates()).some(([, d]) => d >= Date.parse(after!.start)), {
          timeout: 45_000,
          interval: 500,
        })
        .toBe(true);
      const seen = await dates();
      expect(seen.some(([, d]) => d < Date.parse(before!.end) && d >= start - 2000)).toBe(true);
      // Media time went on (no stall at the join), while the date jumped at least the gap.
      const times = seen.map(([time]) => time);
      expect(Math.max(...times)).toBeGreaterThan(8);
      const gapMs = Date.parse(after!.start) - Date.parse(before!.end);
      expect(gapMs).toBeGreaterThan(2000);
      const jumps = seen.slice(1).map(([time, d], i) => d - seen[i]![1] - (time - seen[i]![0]) * 1000);
      expect(Math.max(...jumps)).toBeGreaterThan(gapMs - 1500);
      const errors = await page.evaluate<Array<{ fatal: boolean; details: string }>>('window.hlsErrors');
      expect(errors.filter((e) => e.fatal)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);
});
