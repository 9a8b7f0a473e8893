import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from '../../support/browser.js';
import { hlsAddress, startHlsRig, type HlsRig } from '../../support/live-hls.js';

// A web app on its own loopback origin plays the gateway's LL-HLS address in Debian's chromium
// through hls.js (from node_modules, served by that app): cross-origin, as a dashboard on another
// LAN origin would. Decoded frames must keep increasing, a second of video after another.

const HLS_JS = readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'));

const PAGE = `<!doctype html>
<html><body>
<video id="v" muted playsinline></video>
<script src="/hls.min.js"></script>
<script>
  window.hlsErrors = [];
  const src = new URLSearchParams(location.search).get('src');
  const video = document.getElementById('v');
  const hls = new Hls({ lowLatencyMode: true });
  hls.on(Hls.Events.ERROR, (_e, data) => window.hlsErrors.push({ fatal: data.fatal, type: data.type, details: data.details }));
  hls.loadSource(src);
  hls.attachMedia(video);
  hls.on(Hls.Events.MANIFEST_PARSED, () => video.play().catch((err) => window.hlsErrors.push({ fatal: true, type: 'play', details: String(err) })));
  window.hls = hls;
</script>
</body></html>`;

let rig: HlsRig;
let browser: Browser;
let app: Server;
let origin = '';

beforeAll(async () => {
  rig = await startHlsRig({ hls: { idle_close_s: 6 } });
  browser = await launchChromium();
  app = createServer((req, res) => {
    if (req.url?.startsWith('/hls.min.js'))
      return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(HLS_JS);
    if (req.url === '/' || req.url?.startsWith('/?'))
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  app?.close();
  await rig?.stop();
});

describe('LL-HLS in a browser', () => {
  it('hls.js in chromium plays H.264 + AAC from another origin; decoded frames keep increasing', async () => {
    const { url } = await hlsAddress(rig.t, rig.devices.AAC);
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/?src=${encodeURIComponent(url)}`);
      // Page expressions as text: the tests are compiled without the DOM library.
      const frames = async () =>
        Number(await page.evaluate('document.getElementById("v").getVideoPlaybackQuality().totalVideoFrames'));
      await expect.poll(frames, { timeout: 20_000, interval: 250 }).toBeGreaterThan(0);
      // Three times a second of video more (10 frames): playing on, not a first picture that stays.
      // A player on a loaded machine may wait a moment for the next part; it must then go on.
      const samples = [await frames()];
      for (let i = 0; i < 3; i++) {
        const last = samples.at(-1)!;
        await expect
          .poll(frames, { timeout: 20_000, interval: 250, message: `frames ${samples.join(' → ')} → ?` })
          .toBeGreaterThanOrEqual(last + 10);
        samples.push(await frames());
      }
      const errors = await page.evaluate<Array<{ fatal: boolean; details: string }>>('window.hlsErrors');
      expect(errors.filter((e) => e.fatal)).toEqual([]);
      // hls.js read the parts (low-latency mode), not only whole segments.
      expect(Number(await page.evaluate('window.hls.latestLevelDetails?.partList?.length ?? 0'))).toBeGreaterThan(0);
    } finally {
      await context.close();
    }
  }, 90_000);
});
