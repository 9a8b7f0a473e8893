// Benchmark: browser live view from the gateway as its own process, one simulated H.264 camera
// (1280x720, 15 frames/s, 4 Mbit/s, a keyframe every second) on loopback, the camera's wall clock
// burnt into its picture (CLOCK_STRIP in src/onvif/simulator/rtsp.ts). A relay viewer (ffmpeg)
// keeps the camera session and the GOP cache warm, as in use.
//  - Time to first frame, BENCH_TRIALS trials each (default 5), in one run so the ratios compare
//    like with like: WebRTC in Debian's chromium (playwright-core), from the start of the WHEP POST
//    (the offer is made before the clock starts) to `framesDecoded > 0` (getStats every 10 ms) and to
//    the first presented frame (requestVideoFrameCallback); LL-HLS in chromium through hls.js
//    (lowLatencyMode), from loadSource (the first playlist request) to the first presented frame;
//    ffmpeg through the RTSP relay and ffmpeg on the camera directly, from spawn to the first byte
//    of the first decoded frame on stdout (minimal probing).
//  - Glass-to-glass latency: in each chromium trial, every frame presented during BENCH_LATENCY_S
//    (default 4) after BENCH_SETTLE_S (default 2: the cached GOP a viewer starts with is old by
//    design, and hls.js moves to its live position) from the first frame is drawn on a canvas and
//    its burnt-in clock read back (bench/support/frame-clock.ts); latency =
//    the frame's expected display time (performance.timeOrigin + expectedDisplayTime) − the camera's
//    clock when it made the picture (before encoding): camera encoder, RTSP server, relay, gateway,
//    loopback, jitter buffer, decoder and compositor, on one machine's clock. For WebRTC also the
//    split at the frame's arrival in chromium (metadata.receiveTime).
//  - Gateway CPU (utime + stime from /proc) per WebRTC viewer at BENCH_VIEWERS (default 1,10,25)
//    recvonly viewers over BENCH_SECONDS (default 8): node-datachannel peers in this process (no
//    decoder), so the figure is the gateway's, not a browser's; packets each viewer received per
//    second against the packets the gateway sent per viewer per second (/metrics).
// BENCH_JITTER_TARGET_MS sets the WebRTC receiver's jitterBufferTarget in the page (default: the
// browser's own). BENCH_STEPS=1 prints each WebRTC trial's start steps (page and gateway).
// Prints a table, then one JSON line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import Type, { type Static } from 'typebox';
import { startBenchFleet } from './support/fleet.ts';
import { cameraEntries, rtspOf } from './support/fleet.ts';
import { FRAME_CLOCK_PAGE, tapFrameClock, WatchedFrames } from './support/frame-clock.ts';
import {
  httpsText,
  metric,
  metricsText,
  onlineDevice,
  onLogEntries,
  startGatewayProcess,
  streamAddress,
} from './support/gateway-process.ts';
import { narrow } from './support/json.ts';
import { cpuSeconds, rssMiB } from './support/proc.ts';
import { quantile, range, round } from './support/stats.ts';
import { closeViewer, webrtcViewer, type WebrtcViewer } from './support/webrtc-viewer.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const trials = Number(process.env.BENCH_TRIALS ?? 5);
const latencyS = Number(process.env.BENCH_LATENCY_S ?? 4);
const settleS = Number(process.env.BENCH_SETTLE_S ?? 2);
const counts = (process.env.BENCH_VIEWERS ?? '1,10,25').split(',').map(Number);
const jitterTargetMs =
  process.env.BENCH_JITTER_TARGET_MS === undefined ? null : Number(process.env.BENCH_JITTER_TARGET_MS);
const median = (xs: readonly (number | null | undefined)[]) => quantile(xs, 0.5);
const step = (msg: string) => console.error(`[live] ${msg}`);

const fleet = await startBenchFleet({ mainKbps: 4000, clockStrip: true });
const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-live-'));
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n  public_host: 127.0.0.1\n  idle_close_s: 30\n` +
    `webrtc:\n  bind_address: 127.0.0.1\n  max_sessions_per_address: 100\n  max_sessions: 100\nmetrics:\n  listen: 127.0.0.1:0\n` +
    `onvif:\n  discovery:\n    enabled: false\ncameras:\n${cameraEntries(fleet, 'bench', () => 'Bench')}log:\n  level: info\n`,
);
step('camera simulator up');
const gateway = await startGatewayProcess(configFile);
step(`gateway started: ${gateway.apiUrl}`);
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
const https = (url: string, options: RequestOptions = {}, body?: string) =>
  httpsText(new URL(url, gateway.apiUrl), { ...options, ca, servername: 'localhost' }, body);
const packetsSent = async () => metric(await metricsText(gateway), 'edge_gateway_webrtc_packets_sent_total') ?? NaN;
const token = gateway.token('devices:read');
const device = await onlineDevice(gateway, ca, token, 100);
const streamUrl = (protocol: string) => streamAddress(gateway, ca, token, device.id, protocol);

const warm = spawn(
  'ffmpeg',
  ['-v', 'quiet', '-rtsp_transport', 'tcp', '-i', await streamUrl('rtsp'), '-c', 'copy', '-f', 'null', '-'],
  { stdio: 'ignore' },
);
process.once('exit', () => warm.kill('SIGKILL'));
await sleep(3000);

// The gateway logs each session's start timeline ('webrtc session playing', src/media/webrtc/session.ts).
/** Start steps: ms after the start at which each happened (null: never). */
const Steps = Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]));
type Steps = Static<typeof Steps>;
const gatewayTimelines: Steps[] = [];
onLogEntries(gateway.child, (entry) => {
  if (entry.msg === 'webrtc session playing')
    gatewayTimelines.push(narrow(Steps, entry.timeline, "a WebRTC session's timeline"));
});

// --- chromium: first frame and glass-to-glass, WebRTC and LL-HLS
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-dev-shm-usage',
    '--disable-gpu',
    '--disable-background-networking',
    '--autoplay-policy=no-user-gesture-required',
  ],
});
// bypassCSP: the scripts below go into a page of the gateway's origin, whose CSP allows only its own.
const context = await browser.newContext({ ignoreHTTPSErrors: true, bypassCSP: true });
const hlsJs = readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'), 'utf8');
const WEBRTC_TRIAL = `async ({ url, settleMs, latencyMs, jitterTargetMs }) => {
  const pc = new RTCPeerConnection();
  pc.addTransceiver('video', { direction: 'recvonly' });
  pc.addTransceiver('audio', { direction: 'recvonly' });
  if (jitterTargetMs !== null) for (const r of pc.getReceivers()) r.jitterBufferTarget = jitterTargetMs;
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  document.body.append(video);
  pc.addEventListener('track', (e) => { if (e.track.kind === 'video') { video.srcObject = new MediaStream([e.track]); video.play(); } });
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => { const t = setTimeout(resolve, 3000); pc.addEventListener('icegatheringstatechange', () => { if (pc.iceGatheringState === 'complete') { clearTimeout(t); resolve(); } }); });
  const t0 = performance.now();
  // Where the time goes, in ms after the POST started (null: never happened).
  const steps = { answer: null, iceConnected: null, dtlsConnected: null, firstPacket: null, firstFrameReceived: null, firstFrameDecoded: null };
  const mark = (step) => { steps[step] ??= Math.round(performance.now() - t0); };
  pc.addEventListener('iceconnectionstatechange', () => { if (pc.iceConnectionState === 'connected' || pc.iceConnectionState === 'completed') mark('iceConnected'); });
  pc.addEventListener('connectionstatechange', () => { if (pc.connectionState === 'connected') mark('dtlsConnected'); });
  const frames = window.watchFrames(video, t0, settleMs, latencyMs);
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: pc.localDescription.sdp });
  if (res.status !== 201) throw new Error('POST ' + res.status + ' ' + await res.text());
  const location = new URL(res.headers.get('location'), url).href;
  await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
  mark('answer');
  let stats = {};
  for (;;) {
    (await pc.getStats()).forEach((r) => { if (r.type === 'inbound-rtp' && r.kind === 'video') stats = r; });
    if (stats.packetsReceived > 0) mark('firstPacket');
    if (stats.framesReceived > 0) mark('firstFrameReceived');
    if (stats.framesDecoded > 0) { mark('firstFrameDecoded'); break; }
    if (performance.now() - t0 > 20000) throw new Error('no frame in 20 s');
    await new Promise((r) => setTimeout(r, 10));
  }
  const watched = await frames;
  (await pc.getStats()).forEach((r) => { if (r.type === 'inbound-rtp' && r.kind === 'video') stats = r; });
  const after = { framesDecoded: stats.framesDecoded, packetsLost: stats.packetsLost, nackCount: stats.nackCount, pliCount: stats.pliCount, jitterBufferDelayMs: stats.jitterBufferEmittedCount ? Math.round((stats.jitterBufferDelay / stats.jitterBufferEmittedCount) * 1000) : null };
  pc.close();
  await fetch(location, { method: 'DELETE' });
  return { ...watched, firstFrameMs: steps.firstFrameDecoded, presentedMs: watched.firstFrameMs, steps, after };
}`;
const HLS_TRIAL = `async ({ url, settleMs, latencyMs }) => {
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  document.body.append(video);
  const hls = new Hls({ lowLatencyMode: true });
  let fatal = null;
  hls.on(Hls.Events.ERROR, (_e, d) => { if (d.fatal) fatal = d.details; });
  hls.on(Hls.Events.MANIFEST_PARSED, () => video.play());
  const t0 = performance.now();
  const frames = window.watchFrames(video, t0, settleMs, latencyMs);
  hls.loadSource(url);
  hls.attachMedia(video);
  const watched = await Promise.race([frames, new Promise((_, reject) => setTimeout(() => reject(new Error('hls.js: ' + (fatal ?? 'no frame in 30 s'))), 30000 + settleMs + latencyMs))]);
  hls.destroy();
  return watched;
}`;
/**
 * What WEBRTC_TRIAL resolves with: the frames watched, the first frame decoded and shown, the steps, the receiver's
 * figures after.
 */
const WebrtcTrial = Type.Intersect([
  WatchedFrames,
  Type.Object({
    presentedMs: Type.Union([Type.Number(), Type.Null()]),
    steps: Steps,
    after: Type.Record(Type.String(), Type.Unknown()),
  }),
]);
/** A trial in chromium; one that failed (no frame in time on a loaded machine) has no frames and says why. */
interface Trial extends WatchedFrames {
  failed?: string;
  presentedMs?: number | null;
  steps: Steps;
  after?: Record<string, unknown>;
}

async function browserTrial(
  fn: string,
  schema: typeof WebrtcTrial | typeof WatchedFrames,
  arg: object,
  libs: readonly string[],
): Promise<Trial> {
  const page = await context.newPage();
  // The gateway's own origin (a page on about:blank would be a public origin reaching a loopback one).
  await page.goto(new URL('/live/', gateway.apiUrl).href);
  for (const content of libs) await page.addScriptTag({ content });
  // A trial that fails (no frame in time on a loaded machine) is counted, not the end of the run.
  const result: Trial = await page
    .evaluate(`(${fn})(${JSON.stringify(arg)})`)
    .then((value) => ({ steps: {}, ...narrow(schema, value, 'a trial in chromium') }))
    .catch((err: Error) => ({
      failed: err.message.split('\n')[0] ?? err.message,
      firstFrameMs: null,
      displayAges: [],
      receiveAges: [],
      unreadable: 0,
      steps: {},
    }));
  await page.close();
  await sleep(700);
  if (result.failed) step(`trial failed: ${result.failed}`);
  return result;
}
// The same clock read by ffmpeg on the camera and through the relay during the chromium trials:
// how old a picture already is when the camera's RTSP server, and the relay, hand it on.
const cameraUrl = rtspOf(fleet).url(0, 'main').replace('rtsp://', 'rtsp://admin:bench@');
const taps = { camera: tapFrameClock(cameraUrl), relay: tapFrameClock(await streamUrl('rtsp')) };
step('camera adopted; WebRTC trials in chromium');
const webrtcTrials: Trial[] = [];
for (let i = 0; i < trials; i++) {
  const trial = await browserTrial(
    WEBRTC_TRIAL,
    WebrtcTrial,
    { url: await streamUrl('webrtc'), settleMs: settleS * 1000, latencyMs: latencyS * 1000, jitterTargetMs },
    [FRAME_CLOCK_PAGE],
  );
  webrtcTrials.push(trial);
  if (process.env.BENCH_STEPS)
    step(
      `trial ${i + 1}: page ${JSON.stringify(trial.steps)} after ${JSON.stringify(trial.after)}; gateway ${JSON.stringify(gatewayTimelines[i] ?? null)}`,
    );
}
step('LL-HLS trials in chromium (hls.js)');
const hlsTrials: Trial[] = [];
for (let i = 0; i < trials; i++)
  hlsTrials.push(
    await browserTrial(
      HLS_TRIAL,
      WatchedFrames,
      { url: await streamUrl('hls'), settleMs: settleS * 1000, latencyMs: latencyS * 1000 },
      [hlsJs, FRAME_CLOCK_PAGE],
    ),
  );
await browser.close();
for (const tap of Object.values(taps)) tap.stop();

// --- ffmpeg: through the relay, and on the camera directly
function ffmpegFirstFrameMs(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first: number | null = null;
    const child = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-nostdin',
        '-v',
        'error',
        '-threads',
        '1',
        '-probesize',
        '32',
        '-analyzeduration',
        '0',
        '-rtsp_transport',
        'tcp',
        '-i',
        url,
        '-an',
        '-frames:v',
        '1',
        '-fps_mode',
        'passthrough',
        '-vf',
        'scale=32:18',
        '-pix_fmt',
        'gray',
        '-flush_packets',
        '1',
        '-f',
        'rawvideo',
        'pipe:1',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', () => (first ??= performance.now() - t0));
    child.on('close', () => {
      clearTimeout(timer);
      if (first === null) reject(new Error('ffmpeg decoded no frame'));
      else resolve(first);
    });
  });
}
step('RTSP first-frame trials (relay, camera)');
const rtspTrials: number[] = [];
const cameraTrials: number[] = [];
for (let i = 0; i < trials; i++) {
  rtspTrials.push(await ffmpegFirstFrameMs(await streamUrl('rtsp')));
  await sleep(500);
  cameraTrials.push(await ffmpegFirstFrameMs(cameraUrl));
  await sleep(500);
}

// --- CPU per WebRTC viewer (node-datachannel receivers)
async function cpuOver(ms: number) {
  const cpu0 = cpuSeconds(gateway.pid);
  await sleep(ms);
  return ((cpuSeconds(gateway.pid) - cpu0) / (ms / 1000)) * 100;
}
step('gateway CPU, no WebRTC viewer');
const zero = await cpuOver(seconds * 1000);
interface Row {
  viewers: number;
  cpu_core_pct: number;
  cpu_pct_per_viewer: number | null;
  rss_mib: number;
  sent_per_viewer_s: number | null;
  received_per_viewer_s_min: number | null;
  received_per_viewer_s_max: number | null;
}
const rows: Row[] = [
  {
    viewers: 0,
    cpu_core_pct: round(zero, 1),
    cpu_pct_per_viewer: null,
    rss_mib: round(rssMiB(gateway.pid)),
    sent_per_viewer_s: null,
    received_per_viewer_s_min: null,
    received_per_viewer_s_max: null,
  },
];
for (const n of counts) {
  step(`${n} WebRTC viewers`);
  const viewers: WebrtcViewer[] = [];
  for (let i = 0; i < n; i++) viewers.push(await webrtcViewer(await streamUrl('webrtc'), https, step));
  await sleep(2000);
  for (const v of viewers) v.packets = 0;
  const sent0 = await packetsSent();
  const cpu = await cpuOver(seconds * 1000);
  const sent = (await packetsSent()) - sent0;
  const pps = viewers.map((v) => v.packets / seconds);
  rows.push({
    viewers: n,
    cpu_core_pct: round(cpu, 1),
    cpu_pct_per_viewer: round((cpu - zero) / n, 2),
    rss_mib: round(rssMiB(gateway.pid)),
    sent_per_viewer_s: round(sent / n / seconds),
    received_per_viewer_s_min: round(Math.min(...pps)),
    received_per_viewer_s_max: round(Math.max(...pps)),
  });
  for (const v of viewers) await closeViewer(v, https);
  await sleep(1500);
}

const stats = (xs: readonly (number | null | undefined)[]) => {
  const { min, max } = range(xs);
  return { median: round(median(xs)), min: round(min), max: round(max) };
};
const ttff = {
  webrtc: stats(webrtcTrials.map((t) => t.firstFrameMs)),
  webrtc_presented: stats(webrtcTrials.map((t) => t.presentedMs)),
  hls: stats(hlsTrials.map((t) => t.firstFrameMs)),
  rtsp_relay_ffmpeg: stats(rtspTrials),
  camera_ffmpeg: stats(cameraTrials),
};
const latency = (ages: readonly (number | null)[]) => ({
  median: round(median(ages)),
  p90: round(quantile(ages, 0.9)),
  frames: ages.length,
});
const g2gWebrtc = latency(webrtcTrials.flatMap((t) => t.displayAges));
const g2gWebrtcToArrival = latency(webrtcTrials.flatMap((t) => t.receiveAges));
const g2gCamera = latency(taps.camera.ages());
const g2gRelay = latency(taps.relay.ages());
const g2g = {
  webrtc: g2gWebrtc,
  webrtc_to_arrival: g2gWebrtcToArrival,
  hls: latency(hlsTrials.flatMap((t) => t.displayAges)),
  camera_output_ffmpeg: g2gCamera,
  relay_output_ffmpeg: g2gRelay,
  failed_trials: { webrtc: webrtcTrials.filter((t) => t.failed).length, hls: hlsTrials.filter((t) => t.failed).length },
  unreadable_frames: [...webrtcTrials, ...hlsTrials].reduce((a, t) => a + t.unreadable, 0),
  // ffmpeg's own RTSP client and decoder hold a frame longer than chromium does, so its ages are not
  // subtracted from the page's; the difference between the two taps (same client) is the relay's.
  relay_minus_camera: g2gRelay.median === null || g2gCamera.median === null ? null : g2gRelay.median - g2gCamera.median,
  webrtc_in_chromium:
    g2gWebrtc.median === null || g2gWebrtcToArrival.median === null
      ? null
      : g2gWebrtc.median - g2gWebrtcToArrival.median,
};
/** Each step's median over the trials (the steps the first one has). */
const stepMedians = (list: readonly Steps[]) =>
  Object.fromEntries(Object.keys(list[0] ?? {}).map((k) => [k, median(list.map((s) => s[k]))]));
const pageSteps = stepMedians(webrtcTrials.filter((t) => !t.failed).map((t) => t.steps));
const gatewaySteps = stepMedians(gatewayTimelines.slice(0, trials));
const ratio = (a: number | null, b: number | null) => (a === null || b === null ? null : round(a / b, 2));

console.log(`\ntime to first frame, ${trials} trials each, ms: median (min-max)`);
const line = (name: string, s: ReturnType<typeof stats>) =>
  console.log(`  ${name.padEnd(58)} ${s.median} (${s.min}-${s.max})`);
line('WebRTC, chromium, WHEP POST -> framesDecoded > 0', ttff.webrtc);
line('WebRTC, chromium, WHEP POST -> first frame shown', ttff.webrtc_presented);
line('LL-HLS, chromium hls.js, loadSource -> first frame shown', ttff.hls);
line('RTSP through the relay, ffmpeg, spawn -> first frame', ttff.rtsp_relay_ffmpeg);
line('RTSP from the camera, ffmpeg, spawn -> first frame', ttff.camera_ffmpeg);
console.log(`  WebRTC start, page (median ms after the POST): ${JSON.stringify(pageSteps)}`);
console.log(`  WebRTC start, gateway (median ms after the POST arrived): ${JSON.stringify(gatewaySteps)}`);
console.log(`\nglass-to-glass (camera clock burnt into the picture -> display in chromium), ms: median / p90 (frames)`);
console.log(
  `  WebRTC ${g2g.webrtc.median} / ${g2g.webrtc.p90} (${g2g.webrtc.frames}); of which to the frame's arrival in chromium ${g2g.webrtc_to_arrival.median} / ${g2g.webrtc_to_arrival.p90}`,
);
console.log(`  LL-HLS ${g2g.hls.median} / ${g2g.hls.p90} (${g2g.hls.frames})`);
console.log(`  (frames shown ${settleS}-${settleS + latencyS} s after each trial's first frame)`);
console.log(
  `  the same clock decoded by ffmpeg: from the camera ${g2g.camera_output_ffmpeg.median} / ${g2g.camera_output_ffmpeg.p90}, through the relay ${g2g.relay_output_ffmpeg.median} / ${g2g.relay_output_ffmpeg.p90}`,
);
console.log(
  `  the relay's share (relay − camera, same client): ${g2g.relay_minus_camera}; chromium's share of WebRTC (display − arrival): ${g2g.webrtc_in_chromium}`,
);
console.log(
  `  unreadable clocks: ${g2g.unreadable_frames}; failed trials: WebRTC ${g2g.failed_trials.webrtc}, LL-HLS ${g2g.failed_trials.hls}`,
);
console.log(
  '\n| WebRTC viewers | gateway CPU % of a core | per viewer (over 0) | RSS MiB | sent/viewer/s | received/viewer/s (min-max) |',
);
console.log('|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.viewers} | ${r.cpu_core_pct} | ${r.cpu_pct_per_viewer ?? '-'} | ${r.rss_mib} | ${r.sent_per_viewer_s ?? '-'} | ${r.viewers ? `${r.received_per_viewer_s_min}-${r.received_per_viewer_s_max}` : '-'} |`,
  );
console.log(
  JSON.stringify({
    bench: 'live',
    trials,
    seconds,
    settle_s: settleS,
    latency_s: latencyS,
    jitter_target_ms: jitterTargetMs,
    camera: 'H.264 1280x720 15 fps 4 Mbit/s GOP 1 s, clock burnt in',
    ttff_ms: Object.fromEntries(Object.entries(ttff).map(([k, v]) => [k, v.median])),
    ttff_ratio: {
      webrtc_rtsp_relay: ratio(ttff.webrtc.median, ttff.rtsp_relay_ffmpeg.median),
      webrtc_camera: ratio(ttff.webrtc.median, ttff.camera_ffmpeg.median),
      hls_rtsp_relay: ratio(ttff.hls.median, ttff.rtsp_relay_ffmpeg.median),
      hls_camera: ratio(ttff.hls.median, ttff.camera_ffmpeg.median),
    },
    webrtc_start_page_ms: pageSteps,
    webrtc_start_gateway_ms: gatewaySteps,
    glass_to_glass_ms: g2g,
    rows,
    loadavg: os.loadavg().map((x) => round(x, 1)),
  }),
);
warm.kill('SIGTERM');
await gateway.stop();
await fleet.stop();
rmSync(dir, { recursive: true, force: true });
