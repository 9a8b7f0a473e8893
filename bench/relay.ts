// Benchmark: one 4 Mbit/s H.264 simulated camera on loopback, N = 1, 10, 50, 100 TCP viewers through
// the gateway's relay (the gateway as its own process). Per N: gateway CPU per viewer, RSS, packets
// received and lost (RTP sequence gaps) per viewer. Viewers are lightweight RTSP clients (the relay's
// own upstream client pointed at the relay), so those rows measure the gateway, not 100 decoders.
//
// Then start-up, relay against camera in the same run, while one relay viewer keeps the camera
// session (and the relay's GOP cache) warm, as in use. Each relay trial gets a fresh ticket (the API
// call is made before the clock starts). The 7 trials alternate which side goes first and start at
// fixed points of the camera's GOP (the keep-warm viewer's keyframes; trial i at (i + 0.5) / 7 of the
// measured GOP after one), so both sides sample the same GOP phases and not whatever phase the
// previous trial happened to end at. Medians, and the ratio relay / direct:
//  - time to first keyframe packet: the in-process RTSP client above (no ffmpeg), from the start of
//    OPTIONS to the first RTP packet that starts a keyframe. Protocol and GOP cache only, no decoder.
//  - time to first decoded frame (the goal, <= 1.0): real ffmpeg, from spawn() to the first byte of
//    the first decoded frame on its stdout: `ffmpeg -threads 1 -probesize 32 -analyzeduration 0
//    -rtsp_transport tcp -i URL -frames:v 1 -fps_mode passthrough -vf scale=32:18 -pix_fmt gray
//    -flush_packets 1 -f rawvideo pipe:1`. The decoder drops what precedes the first keyframe, so the
//    first frame out is the first decodable one; the scale to a 576-byte grey frame and the flush
//    after each packet make its bytes leave ffmpeg within about a millisecond of being decoded. Exit
//    time (`-f null -`) would add RTSP TEARDOWN and teardown; -progress/-stats report every 0.5 s.
//    Minimal probing and one decoder thread, because the ffmpeg CLI otherwise holds the first frame
//    back: avformat_find_stream_info reads until it has guessed H.264's decode delay (7 decoded frames)
//    and the frame rate (~20 frame durations), and frame threads return a frame only after the next
//    ones went in. Those are client policies that dilute the relay's effect into ~1-2 s of waiting on
//    live frames; they are still shown, as "ffmpeg defaults" (same command without the -threads,
//    -probesize and -analyzeduration options: what a plain ffmpeg/ffplay user sees), for reference.
//    ffmpeg's process start-up (exec, loading libav*, option parsing: `ffmpeg -version` spawn-to-exit,
//    printed) is inside both sides of both figures. It costs the same on both, so the comparison stays
//    fair, but it pulls the ratio towards 1 (it is not subtracted: it is part of what a client pays).
//    Direct uses the camera URL with the credentials in it (rtsp://admin:bench@...).
// Env: BENCH_SECONDS per N (default 8), BENCH_VIEWERS (default 1,10,50,100). Needs ffmpeg >= 5.1
// (-fps_mode) on PATH, as the simulated camera does.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { h264StartsKeyframe } from '../dist/media/h26x.js';
import { UpstreamSession } from '../dist/media/relay/upstream.js';
import { readRtpHeader } from '../dist/media/rtp.js';
import { startBenchFleet } from './support/fleet.ts';
import { cameraEntries, rtspOf } from './support/fleet.ts';
import { onlineDevice, startGatewayProcess, streamAddress } from './support/gateway-process.ts';
import { cpuSeconds, rssMiB } from './support/proc.ts';
import { upperMedian } from './support/stats.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const counts = (process.env.BENCH_VIEWERS ?? '1,10,50,100').split(',').map(Number);
const logger = pino({ level: 'silent' });

const fleet = await startBenchFleet({ mainKbps: 4000, logger });
const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-relay-'));
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  public_host: 127.0.0.1\n  idle_close_s: 30\n  max_connections_per_address: 1000\n` +
    `onvif:\n  discovery:\n    enabled: false\ncameras:\n${cameraEntries(fleet, 'bench', () => 'Bench')}log:\n  level: info\n`,
);
const gateway = await startGatewayProcess(configFile);
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
const token = gateway.token('devices:read');
const device = await onlineDevice(gateway, ca, token, 100);
const streamUrl = () => streamAddress(gateway, ca, token, device.id);

/** An RTSP client of the relay (or the camera) in this process: the relay's own upstream client. */
interface Viewer {
  packets: number;
  lost: number;
  lastSeq: number;
  firstKeyframeAt: number | null;
  /** Keyframes looked for after the first (the keep-warm viewer only: not in this process's CPU during the rows). */
  watchKeyframes: boolean;
  lastKeyframeAt: number | null;
  keyframeTimestamp: number | null;
  keyframeWaiters: ((timestamp: number) => void)[];
  open: Promise<UpstreamSession>;
}

function viewer(url: string, username: string | null = null, password: string | null = null): Viewer {
  const v: Omit<Viewer, 'open'> = {
    packets: 0,
    lost: 0,
    lastSeq: -1,
    firstKeyframeAt: null,
    watchKeyframes: false,
    lastKeyframeAt: null,
    keyframeTimestamp: null,
    keyframeWaiters: [],
  };
  const open = UpstreamSession.open({
    url,
    username,
    password,
    logger,
    onPacket: (_t, p) => {
      const h = readRtpHeader(p);
      if (!h) return;
      if (v.lastSeq >= 0) v.lost += (h.sequence - v.lastSeq - 1 + 65536) % 65536;
      v.lastSeq = h.sequence;
      v.packets++;
      if ((v.firstKeyframeAt === null || v.watchKeyframes) && h264StartsKeyframe(p, h.payloadOffset, h.payloadLength)) {
        const now = performance.now();
        if (v.firstKeyframeAt === null) v.firstKeyframeAt = now;
        // SPS and the IDR's first slice are separate packets of one access unit, with one RTP timestamp.
        if (h.timestamp !== v.keyframeTimestamp) {
          v.keyframeTimestamp = h.timestamp;
          v.lastKeyframeAt = now;
          for (const resolve of v.keyframeWaiters.splice(0)) resolve(h.timestamp);
        }
      }
    },
    onClose: () => undefined,
  });
  return Object.assign(v, { open });
}
const nextKeyframe = (v: Viewer) => new Promise<number>((resolve) => v.keyframeWaiters.push(resolve));

const rows = [];
for (const n of counts) {
  const url = await streamUrl();
  const viewers = Array.from({ length: n }, () => viewer(url));
  const sessions = await Promise.all(viewers.map((v) => v.open));
  await sleep(1000); // settle
  for (const v of viewers) Object.assign(v, { packets: 0, lost: 0 });
  const cpu0 = cpuSeconds(gateway.pid);
  await sleep(seconds * 1000);
  const cpu = cpuSeconds(gateway.pid) - cpu0;
  const rss = rssMiB(gateway.pid);
  const packets = viewers.reduce((a, v) => a + v.packets, 0) / n;
  const lost = viewers.reduce((a, v) => a + v.lost, 0);
  rows.push({
    viewers: n,
    cpu_core_pct: Math.round((cpu / seconds) * 1000) / 10,
    cpu_us_per_viewer_s: Math.round(((cpu / seconds) * 1e6) / n),
    rss_mib: Math.round(rss),
    packets_per_viewer_s: Math.round(packets / seconds),
    lost_total: lost,
  });
  for (const s of sessions) s.close();
  await sleep(500);
}

async function timeToKeyframe(url: string, user: string | null = null, pass: string | null = null): Promise<number> {
  const t0 = performance.now();
  const v = viewer(url, user, pass);
  const session = await v.open;
  while (v.firstKeyframeAt === null) await sleep(5);
  session.close();
  return v.firstKeyframeAt - t0;
}

const ffmpegs = new Set<ChildProcess>();
process.once('exit', () => ffmpegs.forEach((c) => c.kill('SIGKILL')));
/** Runs ffmpeg; resolves with ms from spawn() to its first byte on stdout, once it has exited. */
function ffmpegFirstByte(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstByteMs: number | null = null;
    let stderr = '';
    const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    ffmpegs.add(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', () => {
      if (firstByteMs === null) firstByteMs = performance.now() - t0;
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      ffmpegs.delete(child);
      if (firstByteMs !== null && code === 0) resolve(firstByteMs);
      else
        reject(
          new Error(
            `ffmpeg ${args.join(' ')}: exit ${code ?? signal}, ${firstByteMs === null ? 'no frame' : 'after a frame'}: ${stderr.trim().slice(0, 500)}`,
          ),
        );
    });
  });
}
// One decoded frame, scaled to 32x18 grey (576 bytes), written and flushed as soon as it is decoded.
const FIRST_FRAME_OUT = [
  '-an',
  '-sn',
  '-dn',
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
];
const timeToDecodedFrame = (url: string, clientDefaults: boolean) =>
  ffmpegFirstByte([
    '-v',
    'error',
    ...(clientDefaults ? [] : ['-threads', '1', '-probesize', '32', '-analyzeduration', '0']),
    '-rtsp_transport',
    'tcp',
    '-i',
    url,
    ...FIRST_FRAME_OUT,
  ]);
async function ffmpegStartupMs(): Promise<number> {
  const t0 = performance.now();
  await new Promise((resolve, reject) =>
    spawn('ffmpeg', ['-hide_banner', '-version'], { stdio: 'ignore' }).on('error', reject).on('close', resolve),
  );
  return performance.now() - t0;
}

const TRIALS = 7;
// Keep one relay viewer attached so the camera session (and its GOP cache) stays warm, as in use.
const keepWarm = viewer(await streamUrl());
keepWarm.watchKeyframes = true;
const keepWarmSession = await keepWarm.open;
// The GOP from RTP timestamps (H.264's clock is 90 kHz): the first keyframe comes from the GOP cache at
// once, so its arrival time says nothing about the camera's cadence.
const keyframes: number[] = [];
while (keyframes.length < 3) keyframes.push(await nextKeyframe(keepWarm));
const gopMs = ((keyframes[2]! - keyframes[0]! + 2 ** 32) % 2 ** 32) / 90 / 2;
/** Waits until the camera's GOP is `fraction` of the way from one keyframe to the next. */
async function atGopPhase(fraction: number) {
  const now = performance.now() - (keepWarm.lastKeyframeAt ?? 0);
  await sleep((fraction * gopMs - (now % gopMs) + gopMs) % gopMs);
}
const directUrl = rtspOf(fleet).url(0, 'main');
const directUrlWithCredentials = directUrl.replace('rtsp://', 'rtsp://admin:bench@');

/**
 * TRIALS alternating relay/direct pairs at spread GOP phases, `measure` given the relay's address (a
 * fresh ticket) or `direct`; medians (ms) and ratio relay/direct.
 */
async function compare(direct: string, measure: (side: 'relay' | 'direct', url: string) => Promise<number>) {
  const t = { relay: [] as number[], direct: [] as number[] };
  for (let i = 0; i < TRIALS; i++) {
    for (const side of i % 2 === 0 ? (['relay', 'direct'] as const) : (['direct', 'relay'] as const)) {
      const url = side === 'relay' ? await streamUrl() : direct;
      await atGopPhase((i + 0.5) / TRIALS);
      t[side].push(await measure(side, url));
    }
  }
  const relay = upperMedian(t.relay);
  const median = upperMedian(t.direct);
  const range = (xs: number[]) => `${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))}`;
  return {
    relay: Math.round(relay),
    direct: Math.round(median),
    ratio: Math.round((relay / median) * 100) / 100,
    relayRange: range(t.relay),
    directRange: range(t.direct),
  };
}
const keyframePacket = await compare(directUrl, (side, url) =>
  side === 'relay' ? timeToKeyframe(url) : timeToKeyframe(url, 'admin', 'bench'),
);
const startupT: number[] = [];
for (let i = 0; i < TRIALS; i++) startupT.push(await ffmpegStartupMs());
const ffmpegStartup = Math.round(upperMedian(startupT));
const decodedFrame = await compare(directUrlWithCredentials, (_side, url) => timeToDecodedFrame(url, false));
const decodedFrameDefaults = await compare(directUrlWithCredentials, (_side, url) => timeToDecodedFrame(url, true));
keepWarmSession.close();

await gateway.stop();
await fleet.stop();
rmSync(dir, { recursive: true, force: true });
console.log(
  `\nbench relay: one 4 Mbit/s H.264 camera (simulated, loopback), TCP viewers through the relay, ${seconds} s per N, node ${process.version}, ${os.cpus().length} cores\n`,
);
console.log('| viewers | gateway CPU % of a core | µs CPU per viewer per s | RSS MiB | packets/s per viewer | lost |');
console.log('|---------|-------------------------|-------------------------|---------|----------------------|------|');
for (const r of rows)
  console.log(
    `| ${String(r.viewers).padStart(7)} | ${String(r.cpu_core_pct).padStart(23)} | ${String(r.cpu_us_per_viewer_s).padStart(23)} | ${String(r.rss_mib).padStart(7)} | ${String(r.packets_per_viewer_s).padStart(20)} | ${String(r.lost_total).padStart(4)} |`,
  );
const startRows = [
  ['first keyframe packet (RTSP client, no decoder)', keyframePacket],
  ['first decoded frame (ffmpeg, minimal probing)', decodedFrame],
  ['first decoded frame (ffmpeg defaults)', decodedFrameDefaults],
] as const;
console.log(
  `\nstart-up, median of ${TRIALS} alternating trials at spread phases of the ${Math.round(gopMs)} ms GOP, one relay viewer keeping the camera session warm (ms; min-max):\n`,
);
console.log(
  '| time to                                          | relay            | direct           | relay/direct |',
);
console.log(
  '|--------------------------------------------------|------------------|------------------|--------------|',
);
for (const [name, r] of startRows)
  console.log(
    `| ${name.padEnd(48)} | ${`${r.relay} (${r.relayRange})`.padStart(16)} | ${`${r.direct} (${r.directRange})`.padStart(16)} | ${String(r.ratio).padStart(12)} |`,
  );
console.log(
  `\nffmpeg process start-up (spawn to exit of \`ffmpeg -version\`, median): ${ffmpegStartup} ms, inside both sides of both ffmpeg rows`,
);
const at100 = rows.find((r) => r.viewers === 100);
console.log(
  `goals: 100 viewers within 50 % of one core: ${at100 ? at100.cpu_core_pct <= 50 : 'n/a'}; no loss: ${rows.every((r) => r.lost_total === 0)}; ` +
    `first decoded frame relay/direct <= 1.0: ${decodedFrame.ratio <= 1} (${decodedFrame.ratio})\n`,
);
console.log(
  JSON.stringify({
    bench: 'relay',
    seconds,
    rows,
    gop_ms: Math.round(gopMs),
    ttfkp_relay_ms: keyframePacket.relay,
    ttfkp_direct_ms: keyframePacket.direct,
    ttfkp_ratio: keyframePacket.ratio,
    ttfdf_relay_ms: decodedFrame.relay,
    ttfdf_direct_ms: decodedFrame.direct,
    ttfdf_ratio: decodedFrame.ratio,
    ttfdf_ffmpeg_defaults_relay_ms: decodedFrameDefaults.relay,
    ttfdf_ffmpeg_defaults_direct_ms: decodedFrameDefaults.direct,
    ttfdf_ffmpeg_defaults_ratio: decodedFrameDefaults.ratio,
    ffmpeg_startup_ms: ffmpegStartup,
  }),
);
process.exit(0);
