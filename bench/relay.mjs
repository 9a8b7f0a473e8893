// Benchmark: one 4 Mbit/s H.264 simulated camera on loopback, N = 1, 10, 50, 100 TCP viewers through
// the gateway's relay (the gateway as its own process). Per N: gateway CPU per viewer, RSS, packets
// received and lost (RTP sequence gaps) per viewer. Then time to the first keyframe packet through
// the relay (GOP cache) against directly from the camera, in the same run.
// Viewers are lightweight RTSP clients (the relay's own upstream client pointed at the relay), so the
// benchmark measures the gateway, not 100 decoders. Env: BENCH_SECONDS per N (default 8), BENCH_VIEWERS.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { h264StartsKeyframe } from '../dist/media/h26x.js';
import { UpstreamSession } from '../dist/media/relay/upstream.js';
import { readRtpHeader } from '../dist/media/rtp.js';
import { startFleet } from '../dist/onvif/simulator/fleet.js';
import { startGatewayProcess } from './gateway-process.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const counts = (process.env.BENCH_VIEWERS ?? '1,10,50,100').split(',').map(Number);
const logger = pino({ level: 'silent' });
const cpuSeconds = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

const fleet = await startFleet({ count: 1, host: '127.0.0.1', basePort: 0, username: 'admin', password: 'bench', discovery: null, rtspPort: 0, mainBitrateKbps: 4000, logger });
const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-relay-'));
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  public_host: 127.0.0.1\n  idle_close_s: 30\n  max_connections_per_address: 1000\n` +
    `onvif:\n  discovery:\n    enabled: false\ncameras:\n  - name: Bench\n    onvif_url: ${fleet.cameras[0].deviceServiceUrl}\n    username: admin\n    password: bench\nlog:\n  level: info\n`,
);
const gateway = await startGatewayProcess(configFile);
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
const api = (p, scope) =>
  new Promise((resolve, reject) => {
    const req = request(new URL(p, gateway.apiUrl), { ca, servername: 'localhost', headers: { authorization: `Bearer ${gateway.token(scope)}` } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
    req.end();
  });
let device;
for (let i = 0; i < 100 && !device; i++) {
  device = (await api('/v1/devices', 'devices:read')).data.find((d) => d.status === 'online');
  if (!device) await new Promise((r) => setTimeout(r, 100));
}
if (!device) throw new Error('camera not adopted');
const streamUrl = async () => (await api(`/v1/devices/${device.id}/stream`, 'devices:read')).stream_url;

function viewer(url, username = null, password = null) {
  const v = { packets: 0, lost: 0, lastSeq: -1, firstKeyframeAt: null, session: null };
  v.open = UpstreamSession.open({
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
      if (v.firstKeyframeAt === null && h264StartsKeyframe(p, h.payloadOffset, h.payloadLength)) v.firstKeyframeAt = performance.now();
    },
    onClose: () => undefined,
  }).then((s) => (v.session = s));
  return v;
}

const rows = [];
for (const n of counts) {
  const url = await streamUrl();
  const viewers = Array.from({ length: n }, () => viewer(url));
  await Promise.all(viewers.map((v) => v.open));
  await new Promise((r) => setTimeout(r, 1000)); // settle
  for (const v of viewers) Object.assign(v, { packets: 0, lost: 0 });
  const cpu0 = cpuSeconds(gateway.child.pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const cpu = cpuSeconds(gateway.child.pid) - cpu0;
  const rss = rssMiB(gateway.child.pid);
  const packets = viewers.reduce((a, v) => a + v.packets, 0) / n;
  const lost = viewers.reduce((a, v) => a + v.lost, 0);
  rows.push({ viewers: n, cpu_core_pct: Math.round((cpu / seconds) * 1000) / 10, cpu_us_per_viewer_s: Math.round(((cpu / seconds) * 1e6) / n), rss_mib: Math.round(rss), packets_per_viewer_s: Math.round(packets / seconds), lost_total: lost });
  for (const v of viewers) v.session?.close();
  await new Promise((r) => setTimeout(r, 500));
}

async function timeToKeyframe(url, user, pass) {
  const t0 = performance.now();
  const v = viewer(url, user, pass);
  await v.open;
  while (v.firstKeyframeAt === null) await new Promise((r) => setTimeout(r, 5));
  v.session.close();
  return v.firstKeyframeAt - t0;
}
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// Keep one relay viewer attached so the camera session (and its GOP cache) stays warm, as in use.
const keepWarm = viewer(await streamUrl());
await keepWarm.open;
const relayT = [];
const directT = [];
for (let i = 0; i < 7; i++) {
  relayT.push(await timeToKeyframe(await streamUrl()));
  directT.push(await timeToKeyframe(fleet.rtsp.url(0, 'main'), 'admin', 'bench'));
  await new Promise((r) => setTimeout(r, 137)); // land at different points of the 1 s GOP
}
keepWarm.session.close();
const relayMs = Math.round(median(relayT));
const directMs = Math.round(median(directT));
const ratio = Math.round((relayMs / directMs) * 100) / 100;

await gateway.stop();
await fleet.stop();
rmSync(dir, { recursive: true, force: true });

console.log(`\nbench relay: one 4 Mbit/s H.264 camera (simulated, loopback), TCP viewers through the relay, ${seconds} s per N, node ${process.version}, ${os.cpus().length} cores\n`);
console.log('| viewers | gateway CPU % of a core | µs CPU per viewer per s | RSS MiB | packets/s per viewer | lost |');
console.log('|---------|-------------------------|-------------------------|---------|----------------------|------|');
for (const r of rows) console.log(`| ${String(r.viewers).padStart(7)} | ${String(r.cpu_core_pct).padStart(23)} | ${String(r.cpu_us_per_viewer_s).padStart(23)} | ${String(r.rss_mib).padStart(7)} | ${String(r.packets_per_viewer_s).padStart(20)} | ${String(r.lost_total).padStart(4)} |`);
console.log(`\ntime to first keyframe packet (median of 7): relay ${relayMs} ms, direct ${directMs} ms, ratio ${ratio}`);
const at100 = rows.find((r) => r.viewers === 100);
console.log(`goals: 100 viewers within 50 % of one core: ${at100 ? at100.cpu_core_pct <= 50 : 'n/a'}; no loss: ${rows.every((r) => r.lost_total === 0)}; ratio <= 1.0: ${ratio <= 1}\n`);
console.log(JSON.stringify({ bench: 'relay', seconds, rows, ttff_relay_ms: relayMs, ttff_direct_ms: directMs, ttff_ratio: ratio }));
process.exit(0);
