// Benchmark: authenticated GET /v1/devices (50 devices in the store) against a bare Fastify HTTPS
// server (bench/support/bare-https-server.ts: same node_modules, same node, same certificate,
// its own process) answering the very same bytes with no auth, no store, no serialisation, and
// against the gateway's own /healthz. All are driven by autocannon over HTTPS on loopback, in
// alternating rounds of one run so machine noise hits each alike. The gateway runs as its own
// process, as in production. The ratio that matters is gateway req/s / bare req/s (goal >= 0.8,
// with the gateway's p99 <= 10 ms). The bare server sends the body as a string (the goal's
// yardstick); the same bare server sending it as a Buffer (as the gateway does, cheaper) is
// measured too, as a stricter yardstick. Also printed: each round's p99 (the yardstick's too: at
// 50 connections the client, autocannon in this process on the same 2 cores, sets much of it) and
// the gateway's garbage collections during its /v1/devices slices (from its /metrics).
// Env: BENCH_SECONDS (per slice, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 50),
// BENCH_CPU_PROF (a directory: the gateway runs with --cpu-prof and writes its profile there on exit),
// BENCH_BASELINE (another build's dist/cli.js, e.g. of a worktree at the commit before a change: that
// gateway, with the same 50 devices, takes its turns in the same rounds; its ratio is printed too, and
// this build against it round by round),
// BENCH_RATE (the offered load of the unsaturated rounds, req/s; default half the gateway's rate),
// BENCH_PROCESSES (default 2): each server runs as this many processes, started in turn (gateway,
// bare, bare, [baseline, baseline,] bare, bare, gateway) and each taking its turn in every slice.
// One process of the very same build can cost ~5 µs a request more or less than another for as long
// as it runs (where its memory landed), enough to decide a before/after comparison on its own
// (docs/notes/performance-history.md, seventh round); pooled over two, that mostly evens out.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  apiBenchConfig,
  defaultCli,
  getTrusted,
  measure,
  seedDevices,
  selfSignedCert,
  startBareServer,
  startGatewayProcess,
  storeOfBuild,
  summarize,
  type BareServer,
  type GatewayProcess,
  type Measured,
  type Target,
} from './support/gateway-process.ts';
import { Health, parseAs } from './support/json.ts';
import { median } from './support/stats.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const profileDir = process.env.BENCH_CPU_PROF;
const baselineCli = process.env.BENCH_BASELINE;
const processes = Math.max(1, Number(process.env.BENCH_PROCESSES ?? 2));

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-api-'));
const dataDir = path.join(dir, 'data');
const configFile = path.join(dir, 'config.yaml');
// One certificate (ECDSA P-256, like the gateway's own) for both servers: the same TLS work.
const { certFile, keyFile } = selfSignedCert(dir);
writeFileSync(configFile, apiBenchConfig({ dataDir, certFile, keyFile }));

seedDevices(dataDir, 50);

/** Another gateway of build `cli` beside the first, with its own copy of the config and 50 devices. */
const startAnotherGateway = async (name: string, cli: string) => {
  const otherDir = path.join(dir, name);
  const otherConfig = path.join(dir, `${name}.yaml`);
  writeFileSync(otherConfig, readFileSync(configFile, 'utf8').replace(`data_dir: ${dataDir}`, `data_dir: ${otherDir}`));
  seedDevices(otherDir, 50, await storeOfBuild(cli));
  return startGatewayProcess(otherConfig, [], path.resolve(cli));
};
const route = '/v1/devices';
/** A server process and the request each of its runs sends. */
interface Runner {
  pid: number;
  target: Target;
}
const gatewayTarget = (g: GatewayProcess): Runner => ({
  pid: g.pid,
  target: { url: `${g.apiUrl}${route}?limit=50`, headers: { authorization: `Bearer ${g.token('devices:read')}` } },
});

const gateway = await startGatewayProcess(configFile, profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []);
const firstGateway = gatewayTarget(gateway);
const devices = firstGateway.target;

// Measured in the steady state: the detector's model loads in a worker for a few seconds after
// the start, which would land in the first slices.
const steady = async (g: GatewayProcess) => {
  for (let i = 0; i < 120; i++) {
    const health = await getTrusted(certFile, { url: `${g.apiUrl}/healthz`, headers: {} });
    if (parseAs(Health, health.body, 'GET /healthz').detector !== 'loading') return;
    await sleep(250);
  }
};
await steady(gateway);

// The bare server answers exactly what the gateway answered.
const answer = await getTrusted(certFile, devices);
if (answer.status !== 200) throw new Error(`GET ${route}: ${answer.status} ${answer.body}`);
const bodyFile = path.join(dir, 'devices.json');
writeFileSync(bodyFile, answer.body);
const startBare = () => startBareServer({ certFile, keyFile, bodyFile, route, contentType: answer.contentType });
// A stricter yardstick beside it: the same bytes sent as a Buffer, as the gateway sends them.
const startBareBytes = () =>
  startBareServer({ certFile, keyFile, bodyFile, route, contentType: answer.contentType, bodyAs: 'bytes' });
const bares = [await startBare()];
const bareBytesServers = [await startBareBytes()];
const baselines: GatewayProcess[] = [];
if (baselineCli)
  for (let k = 0; k < processes; k++) baselines.push(await startAnotherGateway(`baseline-${k}`, baselineCli));
for (let k = 1; k < processes; k++) bareBytesServers.push(await startBareBytes());
for (let k = 1; k < processes; k++) bares.push(await startBare());
const gateways = [gateway];
for (let k = 1; k < processes; k++) gateways.push(await startAnotherGateway(`gateway-${k}`, defaultCli));
for (const g of [...gateways, ...baselines]) await steady(g);

// The yardsticks get the very same request as the gateway, its bearer header included (~800 bytes
// to decrypt and parse on every request), and ignore it: they differ from the gateway only in what
// they do with it.
// Each name's processes, each measured for a whole slice in its turn.
type Name = 'bare' | 'bare_bytes' | 'devices' | 'healthz' | 'baseline';
const bareTarget = (server: BareServer): Runner => ({
  pid: server.pid,
  target: { url: `${server.url}${route}?limit=50`, headers: devices.headers },
});
const targets = new Map<Name, Runner[]>([
  ['bare', bares.map(bareTarget)],
  ['bare_bytes', bareBytesServers.map(bareTarget)],
  ['devices', [firstGateway, ...gateways.slice(1).map(gatewayTarget)]],
  ['healthz', [{ pid: gateway.pid, target: { url: `${gateway.apiUrl}/healthz`, headers: {} } }]],
]);
if (baselineCli) targets.set('baseline', baselines.map(gatewayTarget));
const runnersOf = (name: Name): Runner[] => targets.get(name) ?? [];
const names = [...targets.keys()];
// The gateway's garbage collections during its /v1/devices slices (prom-client's default metrics):
// at 50 connections a pause holds every request in flight, so they set much of the p99.
type GcTotals = Map<string, { count: number; s: number }>;
const gc: GcTotals = new Map();
const gcTotals = async (): Promise<GcTotals | null> => {
  const totals: GcTotals = new Map();
  for (const g of gateways) {
    if (!g.metricsUrl) return null;
    const text = await (await fetch(g.metricsUrl)).text();
    for (const [, part, kind, value] of text.matchAll(
      /^edge_gateway_nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\} (\S+)$/gm,
    )) {
      if (kind === undefined) continue;
      const total = totals.get(kind) ?? { count: 0, s: 0 };
      total[part === 'sum' ? 's' : 'count'] += Number(value);
      totals.set(kind, total);
    }
  }
  return totals;
};
/** A slice of `name`: each of its processes in turn for `duration` s; their runs. */
const slice = async (name: Name, duration: number) => {
  const before = name === 'devices' ? await gcTotals() : null;
  const runs: Measured[] = [];
  for (const { pid, target } of runnersOf(name)) runs.push(await measure(pid, name, target, { connections, duration }));
  const after = before ? await gcTotals() : null;
  for (const [kind, total] of after ?? []) {
    const sum = gc.get(kind) ?? { count: 0, s: 0 };
    sum.count += total.count - (before?.get(kind)?.count ?? 0);
    sum.s += total.s - (before?.get(kind)?.s ?? 0);
    gc.set(kind, sum);
  }
  return runs;
};

for (const name of names) await slice(name, 2); // warm-up: JIT, TLS session setup, token cache
gc.clear(); // the warm-up's do not count
/** Per name, per round: each of its processes' runs. */
const rounded = new Map<Name, Measured[][]>(names.map((n) => [n, []]));
const roundsOf = (name: Name): Measured[][] => rounded.get(name) ?? [];
for (let i = 0; i < rounds; i++) {
  // Each round in another order, so none always runs first after the others.
  const order = names.map((_, k) => names[(k + i) % names.length]!);
  for (const name of order) roundsOf(name).push(await slice(name, seconds));
}
// Per round: each name's processes pooled.
const perSecond = (runs: readonly Measured[]) =>
  runs.reduce((a, r) => a + r.requests.total, 0) / runs.reduce((a, r) => a + r.duration, 0);
const bareRounds = roundsOf('bare');
const roundRatiosOf = (name: Name) =>
  roundsOf(name).map((runs, i) => Number((perSecond(runs) / perSecond(bareRounds[i] ?? [])).toFixed(3)));
const roundRatios = roundRatiosOf('devices');
// The machine's speed can swing ~2× within a minute: a slow spell that falls on one server's slices
// moves the pooled ratio, the median round much less.
const medianOf = (xs: readonly number[]) => Number(median(xs).toFixed(3));
// This build against the baseline round by round (both pooled over their processes): req/s ratio and
// CPU µs a request more (+) or less (-). Paired like this, a before/after survives a noisy machine
// better than the totals do.
const cpuPerRequest = (runs: readonly Measured[]) =>
  (runs.reduce((a, r) => a + r.serverCpuS, 0) / runs.reduce((a, r) => a + r.requests.total, 0)) * 1e6;
const baselineRounds = roundsOf('baseline');
const paired = roundsOf('devices').map((runs, i) => ({
  ratio: perSecond(runs) / perSecond(baselineRounds[i] ?? []),
  cpuUs: cpuPerRequest(runs) - cpuPerRequest(baselineRounds[i] ?? []),
}));
/** Every run of `name`, all rounds. */
const results = (name: Name): Measured[] => roundsOf(name).flat();
// The same requests at one offered load that neither server is saturated by (half the gateway's
// rate above, or BENCH_RATE): CPU per request as a Pi pays it with its clients elsewhere. At
// saturation the slower server also pays for waking its client on the other core on every write,
// which makes the req/s ratio wider than the CPU spent on the request (docs/performance.md, "Reading
// profiles").
const d = summarize(results('devices'));
const offered = Number(process.env.BENCH_RATE ?? Math.round(d.rps / 2));
const atRate = { bare_bytes: [] as Measured[], devices: [] as Measured[] };
for (let i = 0; i < rounds; i++) {
  for (const name of i % 2 ? (['devices', 'bare_bytes'] as const) : (['bare_bytes', 'devices'] as const)) {
    const [first] = runnersOf(name);
    if (!first) throw new Error(`no ${name} server`);
    atRate[name].push(
      await measure(first.pid, name, first.target, { connections, duration: seconds, overallRate: offered }),
    );
  }
}
for (const server of [...bares, ...bareBytesServers, ...gateways, ...baselines]) await server.stop();
rmSync(dir, { recursive: true, force: true });

const b = summarize(results('bare'));
const bb = summarize(results('bare_bytes'));
const ratioBytes = Number((d.rps / bb.rps).toFixed(3));
const h = summarize(results('healthz'));
const ratio = Number((d.rps / b.rps).toFixed(3));
const cpuRatio = Number((d.server_cpu_us_per_req / b.server_cpu_us_per_req).toFixed(2));
const base = baselineCli ? summarize(results('baseline')) : null;

console.log(
  `\nbench api: ${connections} connections, ${rounds} rounds × ${seconds}s per endpoint and process, ${processes} processes of each server, HTTPS on loopback, node ${process.version}, ${os.cpus().length} cores\n`,
);
const row = (name: string, r: ReturnType<typeof summarize>) =>
  `| ${name.padEnd(40)} | ${String(r.rps).padStart(6)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)} | ${String(r.server_cpu_us_per_req).padStart(17)} | ${String(r.bytes_per_req).padStart(9)} |`;
console.log('| endpoint                                 | req/s  | p50 ms | p99 ms | server µs CPU/req | bytes/req |');
console.log('|------------------------------------------|--------|--------|--------|-------------------|-----------|');
console.log(row('bare Fastify, same bytes (string)', b));
console.log(row('bare Fastify, same bytes (Buffer)', bb));
console.log(row('gateway GET /v1/devices (50, bearer JWT)', d));
console.log(row('gateway GET /healthz', h));
if (base) console.log(row('baseline build GET /v1/devices', base));
console.log(
  `\nratio gateway/bare req/s: ${ratio} (goal >= 0.8; by round: ${roundRatios.join(', ')}; median round ${medianOf(roundRatios)}); gateway CPU per request ${cpuRatio}× the bare server's; gateway p99 ${d.p99_ms} ms (goal <= 10)`,
);
console.log(
  `against the bare server sending a Buffer (stricter): ratio ${ratioBytes}, CPU per request ${(d.server_cpu_us_per_req / bb.server_cpu_us_per_req).toFixed(2)}×`,
);
const baselineFigures = base
  ? {
      baseline: base,
      baseline_ratio: Number((base.rps / b.rps).toFixed(3)),
      baseline_round_ratios: roundRatiosOf('baseline'),
      baseline_round_ratio_median: medianOf(roundRatiosOf('baseline')),
      baseline_cpu_per_req_x: Number((base.server_cpu_us_per_req / b.server_cpu_us_per_req).toFixed(2)),
      vs_baseline: {
        round_rps_ratio_median: medianOf(paired.map((p) => p.ratio)),
        round_cpu_us_diff_median: Number(medianOf(paired.map((p) => p.cpuUs)).toFixed(1)),
        rounds_faster: paired.filter((p) => p.ratio > 1).length,
        rounds: paired.length,
      },
    }
  : null;
if (base && baselineFigures) {
  console.log(
    `baseline build: ratio ${baselineFigures.baseline_ratio} (median round ${baselineFigures.baseline_round_ratio_median}), CPU per request ${baselineFigures.baseline_cpu_per_req_x}× the bare server's, p99 ${base.p99_ms} ms`,
  );
  const v = baselineFigures.vs_baseline;
  console.log(
    `this build against the baseline, round by round: req/s ratio median ${v.round_rps_ratio_median}, CPU a request ${v.round_cpu_us_diff_median >= 0 ? '+' : ''}${v.round_cpu_us_diff_median} µs (median); faster in ${v.rounds_faster} of ${v.rounds} rounds`,
  );
}
const rateBare = summarize(atRate.bare_bytes);
const rateDevices = summarize(atRate.devices);
const atOfferedRate = {
  offered_rps: offered,
  bare_bytes_cpu_us_per_req: rateBare.server_cpu_us_per_req,
  devices_cpu_us_per_req: rateDevices.server_cpu_us_per_req,
  cpu_per_req_x: Number((rateDevices.server_cpu_us_per_req / rateBare.server_cpu_us_per_req).toFixed(2)),
  // autocannon's own pacing at a fixed rate sends in bursts, so these p99s say more about it than
  // about the servers; the goal's p99 is the one at saturation above.
  bare_bytes_p99_ms: rateBare.p99_ms,
  devices_p99_ms: rateDevices.p99_ms,
};
console.log(
  `at an offered ${offered} req/s (neither saturated): gateway ${atOfferedRate.devices_cpu_us_per_req} µs CPU a request, bare server (Buffer) ${atOfferedRate.bare_bytes_cpu_us_per_req} µs: ${atOfferedRate.cpu_per_req_x}×; p99 ${atOfferedRate.devices_p99_ms} and ${atOfferedRate.bare_bytes_p99_ms} ms`,
);
const devicesRequests = results('devices').reduce((a, r) => a + r.requests.total, 0);
const gcFigures = Object.fromEntries(
  [...gc]
    .filter(([, g]) => g.count > 0)
    .map(([kind, g]) => [
      kind,
      {
        count: g.count,
        ms_total: Number((g.s * 1000).toFixed(1)),
        ms_mean: Number(((g.s * 1000) / g.count).toFixed(2)),
      },
    ]),
);
console.log(
  `gateway garbage collection during its /v1/devices slices (${devicesRequests} requests): ${
    Object.entries(gcFigures)
      .map(([k, g]) => `${k} ${g.count}× (mean ${g.ms_mean} ms)`)
      .join(', ') || 'not read (no metrics listener)'
  }`,
);
const roundP99 = Object.fromEntries(
  (['bare', 'bare_bytes', 'devices'] as const).map((n) => [n, results(n).map((r) => r.latency.p99)]),
);
console.log(
  `p99 by round, each process in turn (ms): ${Object.entries(roundP99)
    .map(([n, xs]) => `${n} ${xs.join(', ')}`)
    .join('; ')}`,
);
console.log('');
console.log(
  JSON.stringify({
    bench: 'api',
    processes,
    at_offered_rate: atOfferedRate,
    round_p99_ms: roundP99,
    gateway_gc_during_devices: gcFigures,
    connections,
    seconds,
    rounds,
    bare: b,
    bare_bytes: bb,
    devices: d,
    healthz: h,
    ratio,
    round_ratios: roundRatios,
    round_ratio_median: medianOf(roundRatios),
    cpu_per_req_x: cpuRatio,
    ratio_bytes: ratioBytes,
    cpu_per_req_x_bytes: Number((d.server_cpu_us_per_req / bb.server_cpu_us_per_req).toFixed(2)),
    ...baselineFigures,
    goal_ratio_met: ratio >= 0.8,
    goal_p99_met: d.p99_ms <= 10,
  }),
);
