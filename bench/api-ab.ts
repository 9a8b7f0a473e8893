// Benchmark: this build's GET /v1/devices against another build's (BENCH_BASELINE, its dist/cli.js,
// e.g. of a worktree at the commit before a change) and against bench/api's yardstick, the bare
// Fastify server answering the same bytes (as a string), with new processes in every round.
// Why: one process of the very same build can cost ~5–15 µs a request more or less than another for
// as long as it runs (where its memory landed, what it shares a core with), and two processes of
// each, as bench/api pools them, still decided before/after runs either way on this machine
// (docs/notes/performance-history.md, eighth round). Here each round starts one gateway of each
// build and one bare server (in turns; which first rotates), warms them up, measures each twice for
// BENCH_SECONDS at 50 connections (A B C C B A), and stops them: each process's luck is drawn anew
// every round, and the medians of the paired ratios say which build is cheaper and how this one
// stands to the yardstick (the goal: ≥ 0.8 of its req/s, with a p99 ≤ 10 ms; each slice's p99 is
// printed, the bare server's too, since at 50 connections on 2 shared cores the machine sets much
// of it).
// Env: BENCH_BASELINE (required), BENCH_ROUNDS (default 20), BENCH_SECONDS (default 2), BENCH_WARMUP
// (each server's warm-up a round, s; default 3),
// BENCH_CONNECTIONS (default 50), BENCH_PIN=1 (the servers on the last core, this process and so
// autocannon on the others, with taskset: as on a gateway whose clients are on the LAN, the client's
// work does not share the server's core, and what is left of the p99 is the server's and the
// machine's). Both gateways run with 50 devices, the detector off (it is not on the API's path) and
// the same certificate.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
  type BareServer,
  type GatewayProcess,
  type Target,
} from './support/gateway-process.ts';
import { median } from './support/stats.ts';

const baselineCli = process.env.BENCH_BASELINE;
if (!baselineCli) {
  console.error('BENCH_BASELINE=path/to/other/dist/cli.js npm run bench -- api-ab');
  process.exit(2);
}
const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
// After 1 s the first measured slice of each server still had a p99 2–4× its second one (pinned,
// 34–61 against 7–19 ms): V8 was still compiling the hot path, on the server's own core.
const warmupSeconds = Number(process.env.BENCH_WARMUP ?? 3);
type Build = 'baseline' | 'this';
type Name = Build | 'bare';
const builds: Record<Build, string> = { baseline: path.resolve(baselineCli), this: defaultCli };
const cores = os.cpus().length;
const pinned = process.env.BENCH_PIN === '1';
if (pinned && cores < 2) throw new Error('BENCH_PIN=1 needs two cores or more');
/** Every thread of process `pid` onto the CPUs `list` (taskset's syntax, e.g. "0-2"). */
const pin = (pid: number, list: string) =>
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', list, String(pid)], { stdio: 'ignore' });
if (pinned) pin(process.pid, cores === 2 ? '0' : `0-${cores - 2}`);

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-api-ab-'));
const { certFile, keyFile } = selfSignedCert(dir);
const configs: Record<Build, string> = { baseline: path.join(dir, 'baseline.yaml'), this: path.join(dir, 'this.yaml') };
for (const name of ['baseline', 'this'] as const) {
  const dataDir = path.join(dir, name);
  writeFileSync(configs[name], apiBenchConfig({ dataDir, certFile, keyFile }, 'detection:\n  mode: off\n'));
  seedDevices(dataDir, 50, await storeOfBuild(builds[name]));
}

const route = '/v1/devices';
const bodyFile = path.join(dir, 'devices.json');
let contentType: string | null = null;
const names: Name[] = ['baseline', 'this', 'bare'];
interface Figures {
  rps: number;
  cpuUs: number;
  p99: number[];
}
const perRound: Record<Name, Figures>[] = [];
/** One value for each server, from `of` its name. */
const byName = <T>(of: (n: Name) => T): Record<Name, T> => ({
  baseline: of('baseline'),
  this: of('this'),
  bare: of('bare'),
});
const gatewayTarget = (g: GatewayProcess): Target => ({
  url: `${g.apiUrl}${route}?limit=50`,
  headers: { authorization: `Bearer ${g.token('devices:read')}` },
});
for (let i = 0; i < rounds; i++) {
  const order = names.map((_, k) => names[(k + i) % names.length]!);
  const gateways: Partial<Record<Build, GatewayProcess>> = {};
  for (const name of order)
    if (name !== 'bare') gateways[name] = await startGatewayProcess(configs[name], [], builds[name]);
  const { baseline, this: current } = gateways;
  if (!baseline || !current) throw new Error('a gateway did not start');
  const thisTarget = gatewayTarget(current);
  if (contentType === null) {
    // The bare server answers exactly what this build answered (the yardstick gets the same request,
    // bearer header included, and ignores it).
    const res = await getTrusted(certFile, thisTarget);
    if (res.status !== 200) throw new Error(`GET ${route}: ${res.status} ${res.body}`);
    contentType = res.contentType;
    writeFileSync(bodyFile, res.body);
  }
  const bare = await startBareServer({ certFile, keyFile, bodyFile, route, contentType });
  const runners: Record<Name, { server: GatewayProcess | BareServer; target: Target }> = {
    baseline: { server: baseline, target: gatewayTarget(baseline) },
    this: { server: current, target: thisTarget },
    bare: { server: bare, target: { url: `${bare.url}${route}?limit=50`, headers: thisTarget.headers } },
  };
  if (pinned) for (const { server } of Object.values(runners)) pin(server.pid, String(cores - 1));
  for (const name of order)
    await measure(runners[name].server.pid, name, runners[name].target, { connections, duration: warmupSeconds });
  const sums = byName(() => ({ requests: 0, cpuS: 0, durationS: 0, p99: [] as number[] }));
  for (const name of [...order, ...[...order].reverse()]) {
    const r = await measure(runners[name].server.pid, name, runners[name].target, { connections, duration: seconds });
    sums[name].requests += r.requests.total;
    sums[name].cpuS += r.serverCpuS;
    sums[name].durationS += r.duration;
    sums[name].p99.push(r.latency.p99);
  }
  for (const name of order) await runners[name].server.stop();
  const figures = (s: (typeof sums)[Name]): Figures => ({
    rps: s.requests / s.durationS,
    cpuUs: (s.cpuS / s.requests) * 1e6,
    p99: s.p99,
  });
  perRound.push({ this: figures(sums.this), baseline: figures(sums.baseline), bare: figures(sums.bare) });
  console.error(`round ${i + 1} of ${rounds} measured`); // a round takes ~30 s
}
rmSync(dir, { recursive: true, force: true });

const ratios = perRound.map((r) => r.this.rps / r.baseline.rps);
const diffs = perRound.map((r) => r.this.cpuUs - r.baseline.cpuUs);
const toBare = (build: Build) => perRound.map((r) => r[build].rps / r.bare.rps);

console.log(
  `\nbench api-ab: GET /v1/devices, ${connections} connections, ${rounds} rounds with new processes, each server 2 × ${seconds} s a round, node ${process.version}, ${cores} cores${pinned ? `, the servers pinned to core ${cores - 1} and autocannon to the others` : ''}\n`,
);
console.log(
  '| round | bare req/s | baseline req/s | this req/s | this/baseline | this/bare | baseline/bare | bare µs CPU/req | baseline µs | this µs | this − baseline µs | p99 ms: bare; baseline; this |',
);
console.log(
  '|-------|------------|----------------|------------|---------------|-----------|---------------|-----------------|-------------|---------|--------------------|------------------------------|',
);
const f = (x: number, d: number, w: number) => x.toFixed(d).padStart(w);
const thisToBare = toBare('this');
const baselineToBare = toBare('baseline');
perRound.forEach((r, i) =>
  console.log(
    `| ${String(i + 1).padStart(5)} | ${f(r.bare.rps, 0, 10)} | ${f(r.baseline.rps, 0, 14)} | ${f(r.this.rps, 0, 10)} | ${f(ratios[i]!, 3, 13)} | ${f(thisToBare[i]!, 3, 9)} | ${f(baselineToBare[i]!, 3, 13)} | ${f(r.bare.cpuUs, 1, 15)} | ${f(r.baseline.cpuUs, 1, 11)} | ${f(r.this.cpuUs, 1, 7)} | ${f(diffs[i]!, 1, 18)} | ${`${r.bare.p99.join(', ')}; ${r.baseline.p99.join(', ')}; ${r.this.p99.join(', ')}`.padEnd(28)} |`,
  ),
);
const p99s = (n: Name) => perRound.flatMap((r) => r[n].p99);
const result = {
  bench: 'api-ab',
  rounds,
  seconds,
  connections,
  warmup_seconds: warmupSeconds,
  pinned,
  baseline: baselineCli,
  rps_ratio_median: Number(median(ratios).toFixed(3)),
  cpu_us_diff_median: Number(median(diffs).toFixed(1)),
  rounds_this_faster: ratios.filter((r) => r > 1).length,
  rounds_this_cheaper: diffs.filter((d) => d < 0).length,
  baseline_cpu_us_median: Number(median(perRound.map((r) => r.baseline.cpuUs)).toFixed(1)),
  this_cpu_us_median: Number(median(perRound.map((r) => r.this.cpuUs)).toFixed(1)),
  bare_cpu_us_median: Number(median(perRound.map((r) => r.bare.cpuUs)).toFixed(1)),
  ratio_to_bare_median: Number(median(thisToBare).toFixed(3)),
  baseline_ratio_to_bare_median: Number(median(baselineToBare).toFixed(3)),
  rounds_at_goal: thisToBare.filter((x) => x >= 0.8).length,
  // Every slice's p99 (two a round for each server): the goal's other half is this build's p99 ≤ 10 ms.
  p99_ms_median: byName((n) => median(p99s(n))),
  slices_p99_at_goal: byName((n) => p99s(n).filter((ms) => ms <= 10).length),
  slices: rounds * 2,
};
console.log(
  `\nthis build against the bare server: req/s ratio ${result.ratio_to_bare_median} (median of rounds; goal ≥ 0.8, reached in ${result.rounds_at_goal} of ${rounds}); the baseline ${result.baseline_ratio_to_bare_median}`,
);
console.log(
  `p99 (median of ${rounds * 2} slices each): this build ${result.p99_ms_median.this} ms (≤ 10 ms in ${result.slices_p99_at_goal.this}), the bare server ${result.p99_ms_median.bare} ms (≤ 10 ms in ${result.slices_p99_at_goal.bare}), the baseline ${result.p99_ms_median.baseline} ms`,
);
console.log(
  `this build against the baseline: req/s ratio ${result.rps_ratio_median} (median of rounds), CPU a request ${result.cpu_us_diff_median >= 0 ? '+' : ''}${result.cpu_us_diff_median} µs (median); faster in ${result.rounds_this_faster} of ${rounds} rounds, cheaper in ${result.rounds_this_cheaper}\n`,
);
console.log(JSON.stringify(result));
