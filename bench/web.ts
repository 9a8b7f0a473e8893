// Benchmark: the gateway's web app in Debian's chromium (playwright-core), against the
// gateway as its own process (built dist/, dist/web included) and one simulated camera, on loopback.
//  - Sign-in to cameras visible: from the click on the login page's "Sign in" (credentials typed)
//    to the camera's card with its status on the app's first screen; the code exchange, the app's
//    first load and the device list are inside (the built-in client gateway-web: no consent page).
//    Timed in the browser: the click's event to the app's own User Timing mark of its first camera
//    list (nothing of playwright runs in the app's document meanwhile).
//  - Click to first live frame: from the click on the camera's card to the live <video> having
//    decoded a frame (polled every 10 ms in the page): stream address, WHEP offer/answer, ICE, first
//    keyframe. The first trial finds the relay's camera session cold; the others warm.
// BENCH_TRIALS (default 5) fresh browser contexts (no cache, no session). Goal ≤ 1 s each.
// Then the snapshot and event-stream parts (bench/web-snapshot.ts, bench/web-events.ts alone).
// Prints tables, then one JSON line.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliCompressSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import Type from 'typebox';
import { startBenchFleet } from './support/fleet.ts';
import { cameraEntries } from './support/fleet.ts';
import { startGatewayProcess } from './support/gateway-process.ts';
import { narrow } from './support/json.ts';
import { upperMedian } from './support/stats.ts';
import { measureEvents } from './support/web-events.ts';
import { measureSnapshot } from './support/web-snapshot.ts';

const root = path.resolve(import.meta.dirname, '..');
const webRoot = path.join(root, 'dist/web');
if (!existsSync(path.join(webRoot, 'index.html'))) {
  console.error('the web app is not built: node scripts/build-web.mjs (part of npm run build)');
  process.exit(2);
}
const trials = Number(process.env.BENCH_TRIALS ?? 5);
// The app's mark of its first camera list (CAMERAS_SHOWN_MARK in web/src/screens/cameras.tsx).
const CAMERAS_SHOWN_MARK = 'edge-gateway:cameras-shown';
const USER = { username: 'bench', password: 'bench web password' };
const step = (msg: string) => console.error(`[web] ${msg}`);

const fleet = await startBenchFleet();
const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-web-'));
const dataDir = path.join(dir, 'data');
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dataDir}\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n  public_host: 127.0.0.1\n` +
    `webrtc:\n  bind_address: 127.0.0.1\nonvif:\n  discovery:\n    enabled: false\ncameras:\n${cameraEntries(fleet, 'bench', () => 'Bench')}log:\n  level: info\n`,
);
execFileSync(
  process.execPath,
  [
    path.join(root, 'dist/cli.js'),
    'users',
    'add',
    '--username',
    USER.username,
    '--password-stdin',
    '--config',
    configFile,
  ],
  { input: `${USER.password}\n`, stdio: ['pipe', 'ignore', 'inherit'] },
);
const gateway = await startGatewayProcess(configFile);
const origin = gateway.apiUrl;
step(`gateway started: ${origin}`);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--disable-background-networking'],
});

/** Where the sign-in's time went: ms after the click at which each step ended (null: not seen). */
type Phases = Record<string, number | null>;

/**
 * Where the sign-in's time went, in ms after the click's event, read in the app's document:
 * its navigation entry starts with the login form's POST (the 302 to the callback is a same-origin
 * redirect, so its timing is kept) and its resource entries have the app's files and requests.
 * It runs in the page (page.evaluate): nothing of this module is in reach there.
 */
function readSignInPhases(mark: string): { inPageMs: number; phases: Phases } {
  const click = Number(sessionStorage.getItem('bench.click'));
  const shownEntry = performance.getEntriesByName(mark)[0];
  const nav = performance.getEntriesByType('navigation')[0];
  if (!shownEntry || !(nav instanceof PerformanceNavigationTiming))
    throw new Error('no camera list mark or no navigation entry');
  const shown = performance.timeOrigin + shownEntry.startTime;
  const at = (t: number) => Math.round(performance.timeOrigin + t - click);
  const resource = (pattern: RegExp) =>
    performance
      .getEntriesByType('resource')
      .find((e): e is PerformanceResourceTiming => e instanceof PerformanceResourceTiming && pattern.test(e.name));
  const entry = resource(/\/assets\/main-[^/]*\.js$/);
  const app = resource(/\/assets\/mount-[^/]*\.js$/);
  const token = resource(/\/oauth\/token$/);
  const devices = resource(/\/v1\/devices\?/);
  const phases = {
    login_post_sent: at(0),
    login_post_answered: at(nav.redirectEnd),
    html_received: at(nav.responseEnd),
    entry_script_received: entry ? at(entry.responseEnd) : null,
    app_script_received: app ? at(app.responseEnd) : null,
    dom_interactive: at(nav.domInteractive),
    token_sent: token ? at(token.startTime) : null,
    token_server_ms: token ? Math.round(token.responseStart - token.requestStart) : null,
    token_received: token ? at(token.responseEnd) : null,
    dom_content_loaded: at(nav.domContentLoadedEventEnd),
    devices_sent: devices ? at(devices.startTime) : null,
    devices_connecting_ms: devices ? Math.round(devices.connectEnd - devices.connectStart) : null,
    devices_server_ms: devices ? Math.round(devices.responseStart - devices.requestStart) : null,
    devices_received: devices ? at(devices.responseEnd) : null,
    cameras_shown: Math.round(shown - click),
  };
  return { inPageMs: shown - click, phases };
}

/**
 * Types the credentials, then times the click on "Sign in" to the camera list, in the browser's own
 * clock: the click's event (the login page) to the app's mark of its first camera list (two
 * documents later; both same-origin, so the click time waits in sessionStorage).
 */
async function signIn(page: Page): Promise<{ inPageMs: number; phases: Phases }> {
  await page.goto(`${origin}/`);
  await page.waitForSelector('#username');
  await page.fill('#username', USER.username);
  await page.fill('#password', USER.password);
  await page.evaluate(() => {
    const button = document.querySelector('button[value=login]');
    if (!button) throw new Error('no sign-in button');
    button.addEventListener(
      'click',
      () => sessionStorage.setItem('bench.click', String(performance.timeOrigin + performance.now())),
      { capture: true },
    );
  });
  // BENCH_WEB_TRACE=FILE: chromium's trace of the sign-in (the last trial's), for chrome://tracing or Perfetto.
  const trace = process.env.BENCH_WEB_TRACE;
  if (trace)
    await browser.startTracing(page, {
      path: trace,
      screenshots: false,
      categories: [
        'devtools.timeline',
        'v8',
        'blink',
        'loading',
        'navigation',
        'netlog',
        'disabled-by-default-devtools.timeline',
        'disabled-by-default-v8.cpu_profiler',
      ],
    });
  // Nothing of this script runs in the app's document while it starts (playwright's selectors and
  // bindings would evaluate their scripts on the same main thread as the app): the app marks its
  // first camera list itself (CAMERAS_SHOWN_MARK, web/src/screens/cameras.tsx), and the mark is read
  // once the page has loaded and had a second and a half to itself.
  await page.click('button[value=login]');
  await page.waitForURL((url) => !url.pathname.startsWith('/oauth/'), { waitUntil: 'load', timeout: 30_000 });
  await sleep(1500);
  await page.waitForFunction((mark) => performance.getEntriesByName(mark).length > 0, CAMERAS_SHOWN_MARK, {
    timeout: 30_000,
  });
  if (trace) await browser.stopTracing();
  return page.evaluate(readSignInPhases, CAMERAS_SHOWN_MARK);
}

// Waits (in the page) for the camera to be adopted: the first trials must not measure adoption.
{
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  await signIn(page);
  await page.waitForSelector('[data-testid=camera] .status-online', { timeout: 30_000 });
  await context.close();
  step('camera online');
}

const FIRST_FRAME = `(async () => {
  const t0 = performance.now();
  document.querySelector('[data-testid=camera] a').click();
  for (;;) {
    const v = document.querySelector('[data-testid=live-video]');
    if (v && v.getVideoPlaybackQuality().totalVideoFrames > 0) return performance.now() - t0;
    if (performance.now() - t0 > 30000) throw new Error('no live frame in 30 s');
    await new Promise((r) => setTimeout(r, 10));
  }
})()`;

const rows: { trial: number; signInMs: number; phases: Phases; firstFrameMs: number; mode: string }[] = [];
for (let i = 0; i < trials; i++) {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  const { inPageMs: signInMs, phases } = await signIn(page);
  const mode = async () => (await page.textContent('[data-testid=live-mode]').catch(() => null)) ?? '';
  const firstFrameMs = narrow(Type.Number(), await page.evaluate(FIRST_FRAME), 'the first live frame');
  rows.push({ trial: i + 1, signInMs, phases, firstFrameMs, mode: await mode() });
  step(`trial ${i + 1}: sign-in ${signInMs.toFixed(0)} ms, first frame ${firstFrameMs.toFixed(0)} ms`);
  await context.close();
  await sleep(500);
}
await browser.close();

/** What the first screen downloads, brotli-compressed: index.html and what it names. */
function firstScreenBytes() {
  const html = readFileSync(path.join(webRoot, 'index.html'));
  let total = brotliCompressSync(html).length;
  for (const [, file] of html.toString('utf8').matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)) {
    total += readFileSync(path.join(webRoot, `${file}.br`)).length;
  }
  return total;
}

const fmt = (ms: number) => ms.toFixed(0).padStart(8);
const phaseNames = Object.keys(rows[0]?.phases ?? {});
const phaseMedian = (k: string) => upperMedian(rows.map((r) => r.phases[k] ?? NaN));
console.log('trial  sign-in→cameras ms  click→first frame ms  mode');
for (const r of rows)
  console.log(
    `${String(r.trial).padStart(5)}  ${fmt(r.signInMs)}            ${fmt(r.firstFrameMs)}              ${r.mode}`,
  );
console.log('\nsign-in phases, ms after the click (median of the trials)');
for (const k of phaseNames) console.log(`  ${k.padEnd(22)} ${fmt(phaseMedian(k))}`);
const result = {
  bench: 'web',
  trials,
  signin_to_cameras_ms_median: Math.round(upperMedian(rows.map((r) => r.signInMs))),
  signin_to_cameras_ms_max: Math.round(Math.max(...rows.map((r) => r.signInMs))),
  click_to_first_frame_ms_median: Math.round(upperMedian(rows.map((r) => r.firstFrameMs))),
  click_to_first_frame_ms_first: Math.round(rows[0]?.firstFrameMs ?? NaN),
  click_to_first_frame_ms_max: Math.round(Math.max(...rows.map((r) => r.firstFrameMs))),
  signin_phases_ms_median: Object.fromEntries(phaseNames.map((k) => [k, phaseMedian(k)])),
  live_modes: [...new Set(rows.map((r) => r.mode))],
  first_screen_br_bytes: firstScreenBytes(),
  goal_ms: 1000,
};
// Bounded: a stop that hangs must not hold the result back (the exit handler kills the gateway).
await Promise.race([Promise.all([gateway.stop(), fleet.stop()]), sleep(10_000)]);
// The API the app leans on, each against a gateway of its own (BENCH_WEB_PARTS=app skips them):
// the snapshot endpoint with 16 cameras on screen, and the event stream with 100 subscribers.
if ((process.env.BENCH_WEB_PARTS ?? 'all') === 'all') {
  const snapshot = await measureSnapshot();
  console.log(`\nsnapshots (bench/support/web-snapshot.ts):\n${snapshot.table}`);
  const events = await measureEvents();
  console.log(`\nevent stream (bench/support/web-events.ts):\n${events.table}`);
  console.log(JSON.stringify({ ...result, snapshot: snapshot.json, events: events.json }));
} else console.log(JSON.stringify(result));
process.exit(0);
