// Benchmark: LL-HLS from the gateway as its own process, one simulated camera (H.264, 4 Mbit/s,
// 1280x720 at 15 frames/s, a keyframe every second) on loopback, N = 0, 1, 4 viewers: pages of
// Debian's chromium playing the address through hls.js (lowLatencyMode, from node_modules, served by
// a loopback page server). Per N:
//  - first frame: ms from the page's script start (hls.js loaded) to the first decoded picture
//    (totalVideoFrames > 0, polled every 20 ms), median over the pages;
//  - latency: arrival at the gateway to presentation in the page. Each segment's
//    EXT-X-PROGRAM-DATE-TIME is the gateway's wall clock when the segment's first picture reached the
//    muxer (RTP arrival, not the camera's capture: the simulated camera's encoder and its network
//    hop are not in it); hls.js maps the playhead to that clock (hls.playingDate), so
//    Date.now() − playingDate is arrival-to-presentation on one machine's clock. Sampled every
//    500 ms over the run, median and p90 over all pages; also hls.js's own estimate (hls.latency,
//    distance to the live edge);
//  - glass-to-glass: the simulated camera's wall clock burnt into each picture, read back from every
//    frame shown during the same window (bench/support/frame-clock.ts): camera encoder, RTSP
//    server, relay, muxer, hls.js and chromium, on one machine's clock;
//  - gateway CPU (% of one core, and per viewer over the N = 0 row) and RSS.
// Env: BENCH_SECONDS per N (default 10), BENCH_VIEWERS (default 0,1,4), BENCH_TARGET_S
// (hls.target_duration_s, default 4 as in config/default.yaml), CHROMIUM_PATH.
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Page } from 'playwright-core';
import Type from 'typebox';
import { startBenchFleet } from './support/fleet.ts';
import { cameraEntries } from './support/fleet.ts';
import { FRAME_CLOCK_PAGE, WatchedFrames } from './support/frame-clock.ts';
import { onlineDevice, startGatewayProcess, streamAddress } from './support/gateway-process.ts';
import { narrow } from './support/json.ts';
import { cpuSeconds, rssMiB } from './support/proc.ts';
import { quantile, round } from './support/stats.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const counts = (process.env.BENCH_VIEWERS ?? '0,1,4').split(',').map(Number);
const targetS = Number(process.env.BENCH_TARGET_S ?? 4);
const median = (xs: readonly number[]) => quantile(xs, 0.5);
const p90 = (xs: readonly number[]) => quantile(xs, 0.9);

const fleet = await startBenchFleet({ mainKbps: 4000, clockStrip: true });
const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-hls-'));
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n  public_host: 127.0.0.1\n  idle_close_s: 30\nhls:\n  target_duration_s: ${targetS}\n` +
    `onvif:\n  discovery:\n    enabled: false\ncameras:\n${cameraEntries(fleet, 'bench', () => 'Bench')}log:\n  level: info\n`,
);
const gateway = await startGatewayProcess(configFile);
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
const token = gateway.token('devices:read');
const device = await onlineDevice(gateway, ca, token, 150);
/** A fresh HLS address: the stream route's ticket under /live/ on the API port. */
const hlsUrl = async () => {
  const streamUrl = await streamAddress(gateway, ca, token, device.id);
  const ticket = /\/live\/([^/]+)$/.exec(streamUrl)?.[1];
  if (!ticket) throw new Error(`not an address under /live/: ${streamUrl}`);
  return `${gateway.apiUrl}/live/${ticket}/index.m3u8`;
};

const hlsJs = readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'));
const PAGE = `<!doctype html><html><body><video id="v" muted playsinline></video>
<script src="/hls.min.js"></script>
<script src="/frame-clock.js"></script>
<script>
  const t0 = performance.now();
  window.bench = { firstFrameMs: null, latencies: [], hlsLatencies: [], targetLatencies: [], stalls: 0, fatal: null };
  const video = document.getElementById('v');
  // BENCH_HLS_CONFIG: extra hls.js settings (JSON), e.g. {"maxLiveSyncPlaybackRate":1.5}.
  const hls = new Hls({ lowLatencyMode: true, ...JSON.parse(new URLSearchParams(location.search).get('config') || '{}') });
  // hls.js raises its target latency by liveSyncOnStallIncrease (1 s) at each stall, up to one TARGETDURATION.
  video.addEventListener('waiting', () => { if (window.bench.firstFrameMs !== null) window.bench.stalls++; });
  hls.on(Hls.Events.ERROR, (_e, d) => { if (d.fatal) window.bench.fatal = d.details + ' ' + (d.response ? d.response.code : '') + ' ' + ((d.frag && d.frag.url) || (d.context && d.context.url) || ''); });
  hls.loadSource(new URLSearchParams(location.search).get('src'));
  hls.attachMedia(video);
  hls.on(Hls.Events.MANIFEST_PARSED, () => video.play());
  const firstFrame = setInterval(() => {
    if (video.getVideoPlaybackQuality().totalVideoFrames === 0) return;
    window.bench.firstFrameMs = performance.now() - t0;
    clearInterval(firstFrame);
  }, 20);
  setInterval(() => {
    if (window.bench.firstFrameMs === null || video.paused || !hls.playingDate) return;
    window.bench.latencies.push(Date.now() - hls.playingDate.getTime());
    window.bench.hlsLatencies.push(hls.latency * 1000);
    window.bench.targetLatencies.push(hls.targetLatency * 1000);
  }, 500);
</script></body></html>`;
/** The page's window.bench. */
const PageState = Type.Object({
  firstFrameMs: Type.Union([Type.Number(), Type.Null()]),
  latencies: Type.Array(Type.Number()),
  hlsLatencies: Type.Array(Type.Number()),
  targetLatencies: Type.Array(Type.Number()),
  stalls: Type.Number(),
  fatal: Type.Union([Type.String(), Type.Null()]),
});
const pages = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url.startsWith('/hls.min.js')) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(hlsJs);
  if (url.startsWith('/frame-clock.js'))
    return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(FRAME_CLOCK_PAGE);
  res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
});
await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  // As test/support/browser.ts.
  args: [
    '--no-sandbox',
    '--disable-dev-shm-usage',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});

const rows = [];
let baselineCpu: number | null = null;
try {
  for (const n of counts) {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const opened: Page[] = [];
    for (let i = 0; i < n; i++) {
      const page = await context.newPage();
      await page.goto(
        `${origin}/?src=${encodeURIComponent(await hlsUrl())}&config=${encodeURIComponent(process.env.BENCH_HLS_CONFIG ?? '{}')}`,
      );
      opened.push(page);
    }
    const state = () =>
      Promise.all(
        opened.map(async (p) => narrow(PageState, await p.evaluate('window.bench'), "the page's window.bench")),
      );
    const frameCounts = () =>
      Promise.all(
        opened.map(async (p) =>
          narrow(
            Type.Number(),
            await p.evaluate('document.getElementById("v").getVideoPlaybackQuality().totalVideoFrames'),
            'totalVideoFrames',
          ),
        ),
      );
    for (let i = 0; i < 600 && (await state()).some((s) => s.firstFrameMs === null && !s.fatal); i++) await sleep(100);
    const started = await state();
    const fatal = started.find((s) => s.fatal);
    if (fatal) throw new Error(`hls.js: ${fatal.fatal}`);
    await sleep(2000); // settle: hls.js reaches its low-latency position
    for (const p of opened)
      await p.evaluate(
        'window.bench.latencies = []; window.bench.hlsLatencies = []; window.bench.targetLatencies = []',
      );
    const frames0 = await frameCounts();
    // The burnt-in clock of every frame shown over the same window (bench/support/frame-clock.ts).
    const clocks = Promise.all(
      opened.map(async (p) =>
        narrow(
          WatchedFrames,
          await p.evaluate(`window.watchFrames(document.getElementById('v'), performance.now(), 0, ${seconds * 1000})`),
          'watchFrames',
        ),
      ),
    );
    const cpu0 = cpuSeconds(gateway.pid);
    await sleep(seconds * 1000);
    const cpu = (cpuSeconds(gateway.pid) - cpu0) / seconds;
    const g2g = (await clocks).flatMap((c) => c.displayAges);
    const frames1 = await frameCounts();
    const ended = await state();
    const latencies = ended.flatMap((s) => s.latencies);
    if (n === 0) baselineCpu = cpu;
    rows.push({
      viewers: n,
      first_frame_ms: round(median(started.map((s) => s.firstFrameMs ?? NaN))),
      glass_to_glass_ms_median: round(median(g2g)),
      glass_to_glass_ms_p90: round(p90(g2g)),
      latency_ms_median: round(median(latencies)),
      latency_ms_p90: round(p90(latencies)),
      hlsjs_latency_ms_median: round(median(ended.flatMap((s) => s.hlsLatencies))),
      hlsjs_target_latency_ms_median: round(median(ended.flatMap((s) => s.targetLatencies))),
      stalls_per_viewer: n === 0 ? null : round(ended.reduce((a, s) => a + s.stalls, 0) / n, 1),
      fps_per_viewer:
        n === 0 ? null : round(frames1.reduce((a, f, i) => a + f - (frames0[i] ?? 0), 0) / n / seconds, 1),
      gateway_cpu_core_pct: round(cpu * 100, 1),
      gateway_cpu_pct_per_viewer: n === 0 || baselineCpu === null ? null : round(((cpu - baselineCpu) * 100) / n, 2),
      gateway_rss_mib: round(rssMiB(gateway.pid)),
    });
    await context.close();
    await sleep(1000);
  }
} finally {
  await browser.close();
  pages.close();
  await gateway.stop();
  await fleet.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.table(rows);
const hlsConfig: unknown = JSON.parse(process.env.BENCH_HLS_CONFIG ?? '{}');
console.log(
  JSON.stringify({
    bench: 'live-hls',
    seconds,
    part_target_ms: 300,
    target_duration_s: targetS,
    hlsjs_config: hlsConfig,
    camera: 'H.264 1280x720 15 fps 4 Mbit/s GOP 1 s',
    latency: 'gateway RTP arrival (PROGRAM-DATE-TIME) to presentation in chromium (hls.playingDate)',
    glass_to_glass: 'camera clock burnt into the picture to display in chromium',
    loadavg: os.loadavg().map((x) => round(x, 1)),
    rows,
  }),
);
