// Benchmark: 32 simulated cameras on loopback (each on its own 127.0.0.x address with its own
// WS-Discovery responder), the gateway as its own process probing them by unicast: time from the
// gateway's start until all are discovered, adopted and online through the API, and the daemon's
// RSS before and after. Env: BENCH_CAMERAS (default 32).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { startFleet, type Fleet } from '../dist/onvif/simulator/fleet.js';
import { getJson, startGatewayProcess } from './support/gateway-process.ts';
import { DevicePage } from './support/json.ts';
import { statusKiB } from './support/proc.ts';

const count = Number(process.env.BENCH_CAMERAS ?? 32);
const logger = pino({ level: 'silent' });

const fleets: Fleet[] = [];
for (let i = 0; i < count; i++) {
  fleets.push(
    await startFleet({
      count: 1,
      firstIndex: i,
      host: `127.0.0.${10 + i}`,
      basePort: 0,
      username: 'admin',
      password: 'admin',
      discovery: { port: 3702, interfaceAddress: `127.0.0.${10 + i}` },
      rtspPort: null,
      logger,
    }),
  );
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-disc-'));
const configFile = path.join(dir, 'config.yaml');
const targets = fleets.map((_, i) => `"127.0.0.${10 + i}:3702"`).join(', ');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n` +
    `onvif:\n  discovery:\n    enabled: true\n    interfaces: [lo]\n    unicast_targets: [${targets}]\n    interval_s: 60\n` +
    `  credentials:\n    - username: admin\n      password: admin\n  health_interval_s: 30\nlog:\n  level: info\n`,
);

const rssKiB = (pid: number) => statusKiB(pid, 'VmRSS');
const t0 = performance.now();
const gateway = await startGatewayProcess(configFile);
const { pid, apiUrl } = gateway;
const tStarted = performance.now();
const rssStart = rssKiB(pid);
const token = gateway.token('devices:read');
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));

const online = async () =>
  (await getJson(DevicePage, apiUrl, ca, token, '/v1/devices?limit=200&status=online')).data.length;

let n = 0;
let firstOnlineMs: number | null = null;
const deadline = performance.now() + 60_000;
while (performance.now() < deadline) {
  n = await online();
  if (n > 0 && firstOnlineMs === null) firstOnlineMs = performance.now() - tStarted;
  if (n >= count) break;
  await sleep(50);
}
const allOnlineMs = performance.now() - tStarted;
await sleep(2000); // let event subscriptions settle
const rssAfter = rssKiB(pid);
await gateway.stop();
for (const f of fleets) await f.stop();
rmSync(dir, { recursive: true, force: true });

const growthPerCameraKiB = Math.round((rssAfter - rssStart) / count);
console.log(
  `\nbench discovery: ${count} simulated cameras on loopback (unicast WS-Discovery), node ${process.version}, ${os.cpus().length} cores\n`,
);
console.log('| measure                               | value      |');
console.log('|---------------------------------------|------------|');
console.log(`| gateway process start → API ready     | ${(tStarted - t0).toFixed(0).padStart(7)} ms |`);
console.log(`| API ready → first camera online       | ${(firstOnlineMs?.toFixed(0) ?? '-').padStart(7)} ms |`);
console.log(`| ${`API ready → all ${count} cameras online`.padEnd(37)} | ${allOnlineMs.toFixed(0).padStart(7)} ms |`);
console.log(`| cameras online                        | ${String(n).padStart(10)} |`);
console.log(`| daemon RSS at start                   | ${String(Math.round(rssStart / 1024)).padStart(7)} MiB |`);
console.log(`| daemon RSS with all online (+2 s)     | ${String(Math.round(rssAfter / 1024)).padStart(7)} MiB |`);
console.log(`| RSS growth per camera                 | ${String(growthPerCameraKiB).padStart(7)} KiB |`);
console.log(
  `\ngoals: all ${count} online within 5 s: ${allOnlineMs <= 5000 && n >= count}; growth <= 1 MiB per camera: ${growthPerCameraKiB <= 1024}\n`,
);
console.log(
  JSON.stringify({
    bench: 'discovery',
    cameras: count,
    online: n,
    start_to_ready_ms: Math.round(tStarted - t0),
    first_online_ms: firstOnlineMs === null ? null : Math.round(firstOnlineMs),
    all_online_ms: Math.round(allOnlineMs),
    rss_start_kib: rssStart,
    rss_after_kib: rssAfter,
    rss_growth_per_camera_kib: growthPerCameraKiB,
    goal_all_online_5s_met: allOnlineMs <= 5000 && n >= count,
    goal_rss_met: growthPerCameraKiB <= 1024,
  }),
);
process.exit(0);
