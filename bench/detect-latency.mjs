// Part of `npm run bench -- detect`: motion start → classified alert, through the whole gateway (its
// own process). A simulated camera loops a 10 s scene made from darknet's person.jpg (a woman slides
// in from the left, then stands still); the gateway's software motion detector starts an episode, the
// detector checks 3 frames from the relay, and the alert appears as human. The alert's created_at is
// the motion start; the latency is when GET /v1/alerts (polled every 100 ms) first lists the human
// alert, minus that. Goal: <= 2 s on this machine.
// Where the time goes: the gateway logs one 'motion check timeline' line per checked motion start
// (ms after the motion start at which each stage ended); the median of each stage is reported.
// Alone: `npm run bench -- detect-latency` (BENCH_LATENCY_S, default 60) prints a table and a JSON line.
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startFleet } from '../dist/onvif/simulator/fleet.js';
import { startGatewayProcess } from './gateway-process.mjs';

/** The scene of test/detect/scene.ts (same recipe and cache name, so either makes it once). */
function personScene(photos) {
  const dir = path.join(os.tmpdir(), 'edge-gateway-detect-scenes');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'person-walks-in-v1.mp4');
  if (existsSync(file)) return file;
  const tmp = `${file}.${process.pid}.tmp.mp4`;
  const overlay = "[1:v]crop=200:380:140:44,scale=300:570[p];[0:v][p]overlay=x='if(lt(t,1),-320,min(480,-320+(t-1)*400))':y=110:shortest=1,format=yuv420p[v]";
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', 'color=c=0x607060:s=1280x720:r=15:d=10',
    '-loop', '1', '-framerate', '15', '-i', path.join(photos, 'person.jpg'), '-filter_complex', overlay, '-map', '[v]', '-t', '10',
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', tmp]);
  renameSync(tmp, file);
  return file;
}

function getJson(url, token) {
  return new Promise((resolve, reject) => {
    // Loopback to our own gateway's self-signed certificate.
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs for `seconds` (after the model is ready) and answers the latencies of the human alerts seen. */
export async function alertLatency({ photos, seconds }) {
  const scene = personScene(photos);
  const fleet = await startFleet({
    count: 1, firstIndex: 90, host: '127.0.0.1', basePort: 0, username: 'admin', password: 'bench-pw', discovery: null, rtspPort: 0,
    looped: { width: 1280, height: 720, fps: 15, gopS: 1, seconds: 10, input: ['-i', scene] }, logger: pino({ level: 'silent' }),
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-detect-'));
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(configFile, JSON.stringify({
    gateway: { data_dir: path.join(dir, 'data') },
    api: { host: '127.0.0.1', port: 0 },
    rtsp: { host: '127.0.0.1', port: 0, udp_port: 0 },
    metrics: { listen: null },
    onvif: { discovery: { enabled: false } },
    cameras: [{ name: 'Front door', onvif_url: fleet.cameras[0].deviceServiceUrl, username: 'admin', password: 'bench-pw' }],
    recording: { segment_dir: path.join('/dev/shm', path.basename(dir)), pre_roll_s: 1, post_roll_s: 2, max_clip_s: 10, motion: { mode: 'on', threshold: 0.01, fps: 2 } },
    detection: { mode: 'on' },
    // info: startGatewayProcess waits for the 'edge gateway started' line.
    log: { level: 'info' },
  }));
  const gateway = await startGatewayProcess(configFile);
  const timelines = [];
  let partial = '';
  gateway.child.stdout.on('data', (d) => {
    if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, d);
    const lines = (partial + d).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      if (!line.includes('"motion check timeline"')) continue;
      const entry = JSON.parse(line);
      if (entry.type === 'human') timelines.push(entry.ms);
      else console.error(`a check ended as ${entry.type} (${entry.result}): ${JSON.stringify(entry.ms)}`);
    }
  });
  try {
    const token = gateway.token('alerts:read');
    const healthz = async () => new Promise((resolve) => request(`${gateway.apiUrl}/healthz`, { rejectUnauthorized: false }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(JSON.parse(b).detector));
    }).end());
    while ((await healthz()) === 'loading') await new Promise((r) => setTimeout(r, 200));
    const seen = new Map();
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) {
      const { data } = await getJson(`${gateway.apiUrl}/v1/alerts?limit=200`, token);
      const now = Date.now();
      for (const a of data) if (!seen.has(a.id)) seen.set(a.id, { type: a.type, latencyS: (now - Date.parse(a.created_at)) / 1000 });
      await new Promise((r) => setTimeout(r, 100));
    }
    const human = [...seen.values()].filter((a) => a.type === 'human').map((a) => a.latencyS).sort((a, b) => a - b);
    const motion = [...seen.values()].filter((a) => a.type === 'motion').length;
    return { human, motion, stages: medianStages(timelines), written: timelines.map((t) => t.alert_written).sort((a, b) => a - b) };
  } finally {
    await gateway.stop();
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each stage's median over the timelines that have it, in the order stages first appear. */
function medianStages(timelines) {
  const names = [...new Set(timelines.flatMap((t) => Object.keys(t)))];
  const med = (xs) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  return Object.fromEntries(names.map((n) => [n, med(timelines.filter((t) => n in t).map((t) => t[n]))]).sort((a, b) => a[1] - b[1]));
}

if (process.argv[2] === 'detect-latency') {
  const photos = execFileSync(path.resolve(import.meta.dirname, '../run'), ['test-photos'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const seconds = Number(process.env.BENCH_LATENCY_S ?? 60);
  const load = os.loadavg()[0];
  const r = await alertLatency({ photos, seconds });
  const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const round = (v) => Number(v.toFixed(2));
  console.log(`\nbench detect-latency: motion start → classified alert, whole gateway, ${seconds} s of a looping scene, load ${load.toFixed(1)}\n`);
  console.log(`human alerts ${r.human.length}, motion alerts ${r.motion}; seen by the API after p50 ${r.human.length ? round(pct(r.human, 50)) : '-'} s, max ${r.human.length ? round(Math.max(...r.human)) : '-'} s (goal <= 2 s)`);
  console.log('\nstage (ms after the motion start, median)');
  for (const [stage, ms] of Object.entries(r.stages)) console.log(`  ${stage.padEnd(18)} ${String(Math.round(ms)).padStart(6)}`);
  console.log(
    JSON.stringify({
      bench: 'detect-latency',
      cores: os.cpus().length,
      loadavg_start: round(load),
      loadavg: round(os.loadavg()[0]),
      seconds,
      human_alerts: r.human.length,
      motion_alerts: r.motion,
      p50_s: r.human.length ? round(pct(r.human, 50)) : null,
      max_s: r.human.length ? round(Math.max(...r.human)) : null,
      latencies_s: r.human.map(round),
      alert_written_ms: r.written,
      stages_ms_p50: Object.fromEntries(Object.entries(r.stages).map(([k, v]) => [k, Math.round(v)])),
      goal_met: r.human.length > 0 && Math.max(...r.human) <= 2,
    }),
  );
}
