// Benchmark: authenticated GET /v1/devices (50 devices in the store) against the same server's
// /healthz, both driven by autocannon over HTTPS on loopback, interleaved in one run so machine
// noise hits both alike. The gateway runs as its own process, as in production.
// Env: BENCH_SECONDS (per slice, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 50).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measure, seedDevices, startGatewayProcess, summarize } from './gateway-process.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-api-'));
const dataDir = path.join(dir, 'data');
const configFile = path.join(dir, 'config.yaml');
writeFileSync(configFile, `gateway:\n  data_dir: ${dataDir}\napi:\n  host: 127.0.0.1\n  port: 0\nonvif:\n  discovery:\n    enabled: false\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\nlog:\n  level: info\n`);

seedDevices(dataDir, 50);

const gateway = await startGatewayProcess(configFile);
const { child, apiUrl } = gateway;
const token = gateway.token('devices:read');

const targets = {
  healthz: { url: `${apiUrl}/healthz`, headers: {} },
  devices: { url: `${apiUrl}/v1/devices?limit=50`, headers: { authorization: `Bearer ${token}` } },
};

const slice = (name, duration) => measure(child.pid, name, targets[name], { connections, duration });

await slice('healthz', 2); // warm-up: JIT, TLS session setup, token cache
await slice('devices', 2);
const results = { healthz: [], devices: [] };
for (let i = 0; i < rounds; i++) {
  for (const name of i % 2 ? ['devices', 'healthz'] : ['healthz', 'devices']) results[name].push(await slice(name, seconds));
}
await gateway.stop();
rmSync(dir, { recursive: true, force: true });

const h = summarize(results.healthz);
const d = summarize(results.devices);
const ratio = Number((d.rps / h.rps).toFixed(3));

console.log(`\nbench api: ${connections} connections, ${rounds} rounds × ${seconds}s per endpoint, HTTPS on loopback, node ${process.version}, ${os.cpus().length} cores\n`);
const row = (name, r) =>
  `| ${name.padEnd(32)} | ${String(r.rps).padStart(6)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)} | ${String(r.server_cpu_us_per_req).padStart(14)} | ${String(r.bytes_per_req).padStart(9)} |`;
console.log('| endpoint                         | req/s  | p50 ms | p99 ms | server µs CPU/req | bytes/req |');
console.log('|----------------------------------|--------|--------|--------|----------------|-----------|');
console.log(row('GET /healthz', h));
console.log(row('GET /v1/devices (50, bearer JWT)', d));
const cpuRatio = Number((h.server_cpu_us_per_req / d.server_cpu_us_per_req).toFixed(3));
console.log(`\nratio devices/healthz req/s: ${ratio} (goal >= 0.8); by server CPU per request: ${cpuRatio}; devices p99 ${d.p99_ms} ms (goal <= 10)\n`);
console.log(JSON.stringify({ bench: 'api', connections, seconds, rounds, healthz: h, devices: d, ratio, cpu_ratio: cpuRatio, goal_ratio_met: ratio >= 0.8, goal_p99_met: d.p99_ms <= 10 }));
