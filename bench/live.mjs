// Benchmark: WebRTC live view (WHEP) from the gateway as its own process, one 4 Mbit/s H.264
// simulated camera on loopback.
//  - Time to first decoded frame, median of BENCH_TRIALS (default 5): in Debian's chromium
//    (playwright-core), from the start of the WHEP POST to `framesDecoded > 0` (getStats polled every
//    10 ms in the page; the offer is made before the clock starts), against real ffmpeg through the
//    relay (spawn to the first byte of the first decoded frame on stdout, the command of
//    bench/relay.mjs with minimal probing). A relay viewer keeps the camera session and GOP cache warm.
//  - Gateway CPU (utime + stime from /proc) per WebRTC viewer at BENCH_VIEWERS (default 1,10)
//    recvonly viewers over BENCH_SECONDS (default 8): the viewers are node-datachannel peers in this
//    process (no decoder), so the figure is the gateway's, not a browser's; packets received per
//    viewer per second are shown to prove they play.
// Prints a table, then one JSON line. Not measured yet: HLS, glass-to-glass latency, 25 viewers.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import nodeDataChannel from 'node-datachannel';
import { chromium } from 'playwright-core';
import { pino } from 'pino';
import { startFleet } from '../dist/onvif/simulator/fleet.js';
import { cpuSeconds, startGatewayProcess } from './gateway-process.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const trials = Number(process.env.BENCH_TRIALS ?? 5);
const counts = (process.env.BENCH_VIEWERS ?? '1,10').split(',').map(Number);
const logger = pino({ level: 'silent' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const step = (msg) => console.error(`[live] ${msg}`);
const fleet = await startFleet({ count: 1, host: '127.0.0.1', basePort: 0, username: 'admin', password: 'bench', discovery: null, rtspPort: 0, mainBitrateKbps: 4000, logger });
const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-live-'));
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n  public_host: 127.0.0.1\n  idle_close_s: 30\n` +
    `webrtc:\n  bind_address: 127.0.0.1\n  max_sessions_per_address: 100\n  max_sessions: 100\n` +
    `onvif:\n  discovery:\n    enabled: false\ncameras:\n  - name: Bench\n    onvif_url: ${fleet.cameras[0].deviceServiceUrl}\n    username: admin\n    password: bench\nlog:\n  level: info\n`,
);
step('camera simulator up');
const gateway = await startGatewayProcess(configFile);
step(`gateway started: ${gateway.apiUrl}`);
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
const https = (url, { method = 'GET', headers = {}, body } = {}) =>
  new Promise((resolve, reject) => {
    const req = request(new URL(url, gateway.apiUrl), { method, ca, servername: 'localhost', headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
const token = gateway.token('devices:read');
step('token');
let device;
for (let i = 0; i < 100 && !device; i++) {
  device = JSON.parse((await https('/v1/devices', { headers: { authorization: `Bearer ${token}` } })).text).data.find((d) => d.status === 'online');
  if (!device) await sleep(100);
}
if (!device) throw new Error('camera not adopted');
const streamUrl = async (protocol) => JSON.parse((await https(`/v1/devices/${device.id}/stream?protocol=${protocol}`, { headers: { authorization: `Bearer ${token}` } })).text).stream_url;

// Keeps the camera session and the relay's GOP cache warm, as in use.
const warm = spawn('ffmpeg', ['-v', 'quiet', '-rtsp_transport', 'tcp', '-i', await streamUrl('rtsp'), '-c', 'copy', '-f', 'null', '-'], { stdio: 'ignore' });
process.once('exit', () => warm.kill('SIGKILL'));
await sleep(3000);

// --- time to first decoded frame: chromium by WHEP
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--disable-background-networking', ...(process.env.BENCH_CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)] });
const context = await browser.newContext({ ignoreHTTPSErrors: true });
const PAGE_TRIAL = `async (url) => {
  const pc = new RTCPeerConnection();
  pc.addTransceiver('video', { direction: 'recvonly' });
  pc.addTransceiver('audio', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => { const t = setTimeout(resolve, 3000); pc.addEventListener('icegatheringstatechange', () => { if (pc.iceGatheringState === 'complete') { clearTimeout(t); resolve(); } }); });
  const t0 = performance.now();
  // Where the time goes, in ms after the POST started (null: never happened).
  const steps = { answer: null, iceConnected: null, dtlsConnected: null, firstPacket: null, firstFrameReceived: null, firstFrameDecoded: null };
  const mark = (step) => { steps[step] ??= Math.round(performance.now() - t0); };
  pc.addEventListener('iceconnectionstatechange', () => { if (pc.iceConnectionState === 'connected' || pc.iceConnectionState === 'completed') mark('iceConnected'); });
  pc.addEventListener('connectionstatechange', () => { if (pc.connectionState === 'connected') mark('dtlsConnected'); });
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: pc.localDescription.sdp });
  if (res.status !== 201) throw new Error('POST ' + res.status + ' ' + await res.text());
  const location = new URL(res.headers.get('location'), url).href;
  await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
  const answerMs = performance.now() - t0;
  mark('answer');
  let video = {};
  for (;;) {
    (await pc.getStats()).forEach((r) => { if (r.type === 'inbound-rtp' && r.kind === 'video') video = r; });
    if (video.packetsReceived > 0) mark('firstPacket');
    if (video.framesReceived > 0) mark('firstFrameReceived');
    if (video.framesDecoded > 0) { mark('firstFrameDecoded'); break; }
    if (performance.now() - t0 > 20000) throw new Error('no frame in 20 s');
    await new Promise((r) => setTimeout(r, 10));
  }
  const firstFrameMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 300));
  (await pc.getStats()).forEach((r) => { if (r.type === 'inbound-rtp' && r.kind === 'video') video = r; });
  const after = { framesDecoded: video.framesDecoded, packetsLost: video.packetsLost, nackCount: video.nackCount, pliCount: video.pliCount, jitterBufferDelayMs: video.jitterBufferEmittedCount ? Math.round((video.jitterBufferDelay / video.jitterBufferEmittedCount) * 1000) : null };
  pc.close();
  await fetch(location, { method: 'DELETE' });
  return { answerMs, firstFrameMs, steps, after };
}`;
step('camera adopted; WebRTC first-frame trials');
// The gateway logs each session's start timeline ('webrtc session playing', src/media/webrtc/session.ts).
const gatewayTimelines = [];
let gatewayOut = '';
gateway.child.stdout.on('data', (d) => {
  gatewayOut += d;
  const lines = gatewayOut.split('\n');
  gatewayOut = lines.pop();
  for (const line of lines) if (line.includes('"webrtc session playing"')) gatewayTimelines.push(JSON.parse(line).timeline);
});
const webrtcTrials = [];
for (let i = 0; i < trials; i++) {
  const page = await context.newPage();
  // The gateway's own origin (a page on about:blank would be a public origin reaching a loopback one).
  await page.goto(new URL('/live/', gateway.apiUrl).href);
  webrtcTrials.push(await page.evaluate(`(${PAGE_TRIAL})(${JSON.stringify(await streamUrl('webrtc'))})`));
  await page.close();
  await sleep(700);
  if (process.env.BENCH_STEPS) step(`trial ${i + 1}: page ${JSON.stringify(webrtcTrials[i].steps)} after ${JSON.stringify(webrtcTrials[i].after)}; gateway ${JSON.stringify(gatewayTimelines[i] ?? null)}`);
}

// --- time to first decoded frame: ffmpeg through the relay
function ffmpegFirstFrameMs(url) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = null;
    const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-v', 'error', '-threads', '1', '-probesize', '32', '-analyzeduration', '0', '-rtsp_transport', 'tcp', '-i', url,
      '-an', '-frames:v', '1', '-fps_mode', 'passthrough', '-vf', 'scale=32:18', '-pix_fmt', 'gray', '-flush_packets', '1', '-f', 'rawvideo', 'pipe:1'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', () => (first ??= performance.now() - t0));
    child.on('close', () => {
      clearTimeout(timer);
      if (first === null) reject(new Error('ffmpeg decoded no frame'));
      else resolve(first);
    });
  });
}
step('RTSP first-frame trials');
const rtspTrials = [];
for (let i = 0; i < trials; i++) {
  rtspTrials.push(await ffmpegFirstFrameMs(await streamUrl('rtsp')));
  await sleep(700);
}
await browser.close();

// --- CPU per WebRTC viewer (node-datachannel receivers)
async function receiver(url) {
  const pc = new nodeDataChannel.PeerConnection('bench', { iceServers: [], bindAddress: '127.0.0.1' });
  const video = new nodeDataChannel.Video('0', 'RecvOnly');
  video.addH264Codec(102, 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f');
  for (const line of ['a=rtcp-fb:102 nack', 'a=rtcp-fb:102 nack pli']) video.parseSdpLine(line);
  const track = pc.addTrack(video);
  track.setMediaHandler(new nodeDataChannel.RtcpReceivingSession());
  // The track is held: one nothing refers to is garbage-collected, and its onMessage callback with it.
  const r = { pc, track, packets: 0 };
  track.onMessage(() => r.packets++);
  const offer = await new Promise((resolve) => {
    pc.onGatheringStateChange((s) => s === 'complete' && resolve(pc.localDescription().sdp));
    pc.setLocalDescription();
  });
  const res = await https(url, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: offer });
  if (res.status !== 201) throw new Error(`WHEP POST ${res.status}: ${res.text}`);
  pc.setRemoteDescription(res.text, 'answer');
  r.location = res.headers.location;
  return r;
}
const rows = [];
for (const n of counts) {
  step(`${n} WebRTC viewers`);
  const viewers = [];
  for (let i = 0; i < n; i++) viewers.push(await receiver(await streamUrl('webrtc')));
  await sleep(2000);
  for (const v of viewers) v.packets = 0;
  const cpu0 = cpuSeconds(gateway.child.pid);
  await sleep(seconds * 1000);
  const cpu = cpuSeconds(gateway.child.pid) - cpu0;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gateway.child.pid}/status`, 'utf8'))[1]) / 1024;
  const pps = viewers.map((v) => v.packets / seconds);
  rows.push({ viewers: n, cpu_core_pct: Math.round((cpu / seconds) * 1000) / 10, rss_mib: Math.round(rss), packets_per_viewer_s_min: Math.round(Math.min(...pps)), packets_per_viewer_s_max: Math.round(Math.max(...pps)) });
  for (const v of viewers) {
    await https(v.location, { method: 'DELETE' });
    v.pc.close();
  }
  await sleep(1000);
}
const zero = await (async () => {
  const cpu0 = cpuSeconds(gateway.child.pid);
  await sleep(seconds * 1000);
  return Math.round(((cpuSeconds(gateway.child.pid) - cpu0) / seconds) * 1000) / 10;
})();

const ttff = { webrtc: Math.round(median(webrtcTrials.map((t) => t.firstFrameMs))), rtsp_relay_ffmpeg: Math.round(median(rtspTrials)) };
const answerMs = Math.round(median(webrtcTrials.map((t) => t.answerMs)));
console.log(`\ntime to first decoded frame, median of ${trials} (ms; min-max):`);
console.log(`  WebRTC (chromium, from the WHEP POST): ${ttff.webrtc} (${Math.round(Math.min(...webrtcTrials.map((t) => t.firstFrameMs)))}-${Math.round(Math.max(...webrtcTrials.map((t) => t.firstFrameMs)))}); POST to answer applied: ${answerMs}`);
console.log(`  RTSP through the relay (ffmpeg, from spawn): ${ttff.rtsp_relay_ffmpeg} (${Math.round(Math.min(...rtspTrials))}-${Math.round(Math.max(...rtspTrials))})`);
console.log(`\ngateway CPU with the camera session and one relay viewer, no WebRTC viewer: ${zero} % of a core`);
console.log('| WebRTC viewers | gateway CPU % of a core | RSS MiB | packets/viewer/s (min-max) |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.viewers} | ${r.cpu_core_pct} | ${r.rss_mib} | ${r.packets_per_viewer_s_min}-${r.packets_per_viewer_s_max} |`);
console.log(JSON.stringify({ bench: 'live', trials, seconds, ttff_webrtc_ms: ttff.webrtc, whep_answer_ms: answerMs, ttff_rtsp_relay_ffmpeg_ms: ttff.rtsp_relay_ffmpeg, ttff_ratio_webrtc_rtsp: Math.round((ttff.webrtc / ttff.rtsp_relay_ffmpeg) * 100) / 100, cpu_core_pct_no_webrtc: zero, rows }));
warm.kill('SIGTERM');
await gateway.stop();
await fleet.stop();
process.exit(0);
