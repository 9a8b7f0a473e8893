// Motion start → classified alert, through the whole gateway (its own process): part of
// `npm run bench -- detect`, and alone `npm run bench -- detect-latency` (bench/detect-latency.ts).
// A simulated camera loops a 10 s scene made from darknet's person.jpg (a woman slides in from the
// left, then stands still); the gateway's software motion detector starts an episode, the detector
// checks 3 frames from the relay, and the alert appears as human. The alert's created_at is the
// motion start; the latency is when GET /v1/alerts (polled every 100 ms) first lists the human
// alert, minus that. Goal: <= 2 s on this machine.
// Where the time goes: the gateway logs one 'motion check timeline' line per checked motion start
// (ms after the motion start at which each stage ended); the median of each stage is reported.
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import Type from 'typebox';
import { startFleet } from '../../dist/onvif/simulator/fleet.js';
import { cameraOf } from './fleet.ts';
import { httpsText, onLogEntries, startGatewayProcess } from './gateway-process.ts';
import { AlertPage, Health, narrow, parseAs } from './json.ts';

/** The scene of test/detect/scene.ts (same recipe and cache name, so either makes it once). */
function personScene(photos: string): string {
  const dir = path.join(os.tmpdir(), 'edge-gateway-detect-scenes');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'person-walks-in-v1.mp4');
  if (existsSync(file)) return file;
  const tmp = `${file}.${process.pid}.tmp.mp4`;
  const overlay =
    "[1:v]crop=200:380:140:44,scale=300:570[p];[0:v][p]overlay=x='if(lt(t,1),-320,min(480,-320+(t-1)*400))':y=110:shortest=1,format=yuv420p[v]";
  execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'color=c=0x607060:s=1280x720:r=15:d=10',
    '-loop',
    '1',
    '-framerate',
    '15',
    '-i',
    path.join(photos, 'person.jpg'),
    '-filter_complex',
    overlay,
    '-map',
    '[v]',
    '-t',
    '10',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    tmp,
  ]);
  renameSync(tmp, file);
  return file;
}

/** The 'motion check timeline' log line: the check's outcome and its stages (ms after the motion start). */
const Timeline = Type.Object({
  type: Type.String(),
  result: Type.String(),
  ms: Type.Record(Type.String(), Type.Number()),
});
type Stages = Record<string, number>;

export interface AlertLatency {
  /** Seconds from the motion start to the human alert listed by the API, sorted. */
  human: number[];
  /** Alerts that stayed motion. */
  motion: number;
  /** Each stage's median, ms after the motion start. */
  stages: Stages;
  /** When each checked alert was written, ms after the motion start, sorted. */
  written: number[];
}

/** Runs for `seconds` (after the model is ready) and answers the latencies of the human alerts seen. */
export async function alertLatency({ photos, seconds }: { photos: string; seconds: number }): Promise<AlertLatency> {
  const scene = personScene(photos);
  const fleet = await startFleet({
    count: 1,
    firstIndex: 90,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'bench-pw',
    discovery: null,
    rtspPort: 0,
    looped: { width: 1280, height: 720, fps: 15, gopS: 1, seconds: 10, input: ['-i', scene] },
    logger: pino({ level: 'silent' }),
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-detect-'));
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    JSON.stringify({
      gateway: { data_dir: path.join(dir, 'data') },
      api: { host: '127.0.0.1', port: 0 },
      rtsp: { host: '127.0.0.1', port: 0, udp_port: 0 },
      metrics: { listen: null },
      onvif: { discovery: { enabled: false } },
      cameras: [
        { name: 'Front door', onvif_url: cameraOf(fleet, 0).deviceServiceUrl, username: 'admin', password: 'bench-pw' },
      ],
      recording: {
        segment_dir: path.join('/dev/shm', path.basename(dir)),
        pre_roll_s: 1,
        post_roll_s: 2,
        max_clip_s: 10,
        motion: { mode: 'on', threshold: 0.01, fps: 2 },
      },
      detection: { mode: 'on' },
      // info: startGatewayProcess waits for the 'edge gateway started' line.
      log: { level: 'info' },
    }),
  );
  const gateway = await startGatewayProcess(configFile);
  const benchLog = process.env.BENCH_LOG;
  if (benchLog) gateway.child.stdout.on('data', (d: Buffer) => appendFileSync(benchLog, d));
  const timelines: Stages[] = [];
  onLogEntries(gateway.child, (entry) => {
    if (entry.msg !== 'motion check timeline') return;
    const { type, result, ms } = narrow(Timeline, entry, 'a motion check timeline');
    if (type === 'human') timelines.push(ms);
    else console.error(`a check ended as ${type} (${result}): ${JSON.stringify(ms)}`);
  });
  try {
    const token = gateway.token('alerts:read');
    // Loopback to our own gateway's self-signed certificate.
    const get = async (p: string, headers: Record<string, string> = {}) => {
      const res = await httpsText(new URL(p, gateway.apiUrl), { headers, rejectUnauthorized: false });
      if (res.status !== 200) throw new Error(`${p}: ${res.status}`);
      return res.body;
    };
    while (parseAs(Health, await get('/healthz'), 'GET /healthz').detector === 'loading') await sleep(200);
    const seen = new Map<string, { type: string; latencyS: number }>();
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) {
      const { data } = parseAs(
        AlertPage,
        await get('/v1/alerts?limit=200', { authorization: `Bearer ${token}` }),
        'GET /v1/alerts',
      );
      const now = Date.now();
      for (const a of data)
        if (!seen.has(a.id)) seen.set(a.id, { type: a.type, latencyS: (now - Date.parse(a.created_at)) / 1000 });
      await sleep(100);
    }
    const human = [...seen.values()]
      .filter((a) => a.type === 'human')
      .map((a) => a.latencyS)
      .sort((a, b) => a - b);
    const motion = [...seen.values()].filter((a) => a.type === 'motion').length;
    return {
      human,
      motion,
      stages: medianStages(timelines),
      written: timelines.map((t) => t.alert_written ?? NaN).sort((a, b) => a - b),
    };
  } finally {
    await gateway.stop();
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each stage's median over the timelines that have it, in the order stages first appear. */
function medianStages(timelines: readonly Stages[]): Stages {
  const names = [...new Set(timelines.flatMap((t) => Object.keys(t)))];
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;
  return Object.fromEntries(
    names
      .map((n): [string, number] => [n, med(timelines.flatMap((t) => (n in t ? [t[n] ?? NaN] : [])))])
      .sort((a, b) => a[1] - b[1]),
  );
}

/** The detector's test photos (Debian's darknet package, unpacked once by ./run test-photos): their directory. */
export const testPhotos = (): string =>
  execFileSync(path.resolve(import.meta.dirname, '../../run'), ['test-photos'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
