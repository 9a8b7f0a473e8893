// Part of `npm run bench -- detect`: motion start → classified alert, through the whole gateway (its
// own process). A simulated camera loops a 10 s scene made from darknet's person.jpg (a woman slides
// in from the left, then stands still); the gateway's software motion detector starts an episode, the
// detector checks 3 frames from the relay, and the alert appears as human. The alert's created_at is
// the motion start; the latency is when GET /v1/alerts (polled every 100 ms) first lists the human
// alert, minus that. Goal: <= 2 s on this machine.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
    return { human, motion };
  } finally {
    await gateway.stop();
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
