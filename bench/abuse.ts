// Benchmark: does the API keep serving its users while strangers hold connections open?
// Authenticated GET /v1/devices (50 devices) by autocannon over HTTPS on loopback, first with
// nothing else going on, then while this process holds
//   - SLOWLORIS sockets on the API port: TLS done, a request's headers dribbled a line at a time;
//   - IDLE_TLS connections on the API port: TLS done, then nothing;
//   - RTSP connections to the relay from ADDRESSES loopback addresses (127.0.0.x as local
//     addresses), PER_ADDRESS each, plus one more per address that the per-address limit
//     (rtsp.max_connections_per_address = PER_ADDRESS) must refuse.
// The unloaded rounds are split: half before the load, half after it is released.
// Reports req/s and p99 both ways (goal: loaded >= 0.9 of unloaded, no error), the daemon's RSS
// and open files at the peak, how many held connections were accepted, refused or dropped, and
// the refused-connection counter and log lines (throttled) of the daemon.
// Env: BENCH_SECONDS (per round, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (autocannon,
// default 20), BENCH_SLOWLORIS (500), BENCH_IDLE_TLS (1000), BENCH_RTSP (1000), BENCH_ADDRESSES (50).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket, type TcpNetConnectOpts } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import autocannon from 'autocannon';
import {
  freePort,
  metric,
  metricsText,
  seedDevices,
  startGatewayProcess,
  summarize,
  type Measured,
} from './support/gateway-process.ts';
import { cpuSeconds, openFiles, rssMiB } from './support/proc.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SLOWLORIS = Number(process.env.BENCH_SLOWLORIS ?? 500);
const IDLE_TLS = Number(process.env.BENCH_IDLE_TLS ?? 1000);
const RTSP = Number(process.env.BENCH_RTSP ?? 1000);
const ADDRESSES = Number(process.env.BENCH_ADDRESSES ?? 50);
const PER_ADDRESS = Math.ceil(RTSP / ADDRESSES);
/** Source addresses 127.0.0.10 … : every one is loopback on Linux, none is the gateway's own. */
const address = (i: number) => `127.0.0.${10 + (i % ADDRESSES)}`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-abuse-'));
const dataDir = path.join(dir, 'data');
const configFile = path.join(dir, 'config.yaml');
const rtspPort = await freePort();
// The API's request and idle timeouts (30 s, 60 s) would end the slowloris and idle TLS connections
// while the figures are taken; at their maximums every one is held, the worst case for the gateway.
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dataDir}\napi:\n  host: 127.0.0.1\n  port: 0\n  request_timeout_s: 300\n  idle_timeout_s: 3600\nonvif:\n  discovery:\n    enabled: false\n` +
    `rtsp:\n  host: 127.0.0.1\n  port: ${rtspPort}\n  udp_port: 0\n  max_connections_per_address: ${PER_ADDRESS}\n` +
    `metrics:\n  listen: 127.0.0.1:0\nlog:\n  level: info\n`,
);
seedDevices(dataDir, 50);

const gateway = await startGatewayProcess(configFile);
const { child, apiUrl, pid } = gateway;
const logLines: string[] = [];
child.stdout.on('data', (d: Buffer) =>
  logLines.push(
    ...d
      .toString()
      .split('\n')
      .filter((l) => l.startsWith('{')),
  ),
);
const api = new URL(apiUrl);
const target = {
  url: `${apiUrl}/v1/devices?limit=50`,
  headers: { authorization: `Bearer ${gateway.token('devices:read')}` },
};

/** One autocannon run; errors and non-2xx answers are counted, not thrown (they are the result). */
async function round(duration: number): Promise<Measured> {
  const before = cpuSeconds(pid);
  const r = await autocannon({ ...target, connections, duration, pipelining: 1 });
  return { ...r, serverCpuS: cpuSeconds(pid) - before };
}
const failures = (runs: readonly Measured[]) => runs.reduce((a, r) => a + r.errors + r.timeouts + r.non2xx, 0);

const processFigures = () => ({ rss_mb: Math.round(rssMiB(pid)), open_files: openFiles(pid) });

/** Opens `count` sockets with `open(i)` (a promise of a socket once it is usable), `parallel` at a time. */
async function openMany<S>(
  count: number,
  parallel: number,
  open: (i: number) => Promise<S>,
): Promise<{ held: S[]; failed: number }> {
  const held: S[] = [];
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      try {
        held.push(await open(i));
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return { held, failed };
}

const tlsSocket = (i: number) =>
  new Promise<TLSSocket>((resolve, reject) => {
    // tls.connect takes socket.connect()'s options too (its docs), localAddress among them.
    const options: ConnectionOptions & Pick<TcpNetConnectOpts, 'localAddress'> = {
      host: api.hostname,
      port: Number(api.port),
      localAddress: address(i),
      rejectUnauthorized: false,
      servername: 'localhost',
    };
    const s = tlsConnect(options, () => resolve(s));
    s.once('error', reject);
  });

/** Counts the sockets of one kind that the server closed (or reset) after they were opened. */
const tracker = () => {
  const state = {
    closed: 0,
    watch: <S extends Socket>(s: S): S => {
      s.on('error', () => undefined);
      s.once('close', () => state.closed++);
      return s;
    },
  };
  return state;
};
const slowState = tracker();
const idleState = tracker();
const rtspState = tracker();

// Warm-up (JIT, TLS sessions, token cache), then the unloaded figures: half before the load and
// half after it is gone, so a machine that gets busier or quieter meanwhile weighs on both alike.
await round(5);
const unloaded: Measured[] = [];
for (let i = 0; i < Math.ceil(rounds / 2); i++) unloaded.push(await round(seconds));

// The load.
const setupStart = performance.now();
const slow = await openMany(SLOWLORIS, 50, async (i) => {
  const s = slowState.watch(await tlsSocket(i));
  s.write(`GET /v1/devices HTTP/1.1\r\nHost: ${api.host}\r\n`);
  return s;
});
const idle = await openMany(IDLE_TLS, 50, async (i) => idleState.watch(await tlsSocket(i)));
// Per address PER_ADDRESS + 1: the last one of each must be refused by the per-address limit.
const rtsp = await openMany(
  ADDRESSES * (PER_ADDRESS + 1),
  100,
  (i) =>
    new Promise<Socket>((resolve, reject) => {
      const s = tcpConnect({ host: '127.0.0.1', port: rtspPort, localAddress: address(i) }, () =>
        resolve(rtspState.watch(s)),
      );
      s.once('error', reject);
    }),
);
const setupS = (performance.now() - setupStart) / 1000;
// Slowloris: one more header line every 2 s per socket, never the blank line that ends them.
const drip = setInterval(() => {
  for (const s of slow.held) if (!s.destroyed) s.write(`X-Slow-${Math.floor(Math.random() * 1e6)}: a\r\n`);
}, 2000);
// Refused RTSP connections are closed by the gateway at once; give it a moment to do so.
await sleep(1000);
const rtspRefused = rtspState.closed + rtsp.failed;

let peak = processFigures();
const sampler = setInterval(() => {
  const now = processFigures();
  peak = { rss_mb: Math.max(peak.rss_mb, now.rss_mb), open_files: Math.max(peak.open_files, now.open_files) };
}, 250);
const loaded: Measured[] = [];
for (let i = 0; i < rounds; i++) loaded.push(await round(seconds));
clearInterval(sampler);
clearInterval(drip);
const stillHeld = {
  slowloris: slow.held.length - slowState.closed,
  idle_tls: idle.held.length - idleState.closed,
  rtsp: rtsp.held.length - rtspState.closed,
};

const refusedCounter =
  metric(await metricsText(gateway), 'edge_gateway_relay_connections_refused_total{reason="per_address_limit"}') ?? 0;
const refusedLogLines = logLines.filter((l) => l.includes('too many connections from one address')).length;

for (const s of [...slow.held, ...idle.held, ...rtsp.held]) s.destroy();
await sleep(1000);
for (let i = Math.ceil(rounds / 2); i < rounds; i++) unloaded.push(await round(seconds));
await gateway.stop();
rmSync(dir, { recursive: true, force: true });

const u = summarize(unloaded);
const l = summarize(loaded);
const ratio = Number((l.rps / u.rps).toFixed(3));
const errors = { unloaded: failures(unloaded), loaded: failures(loaded) };

console.log(
  `\nbench abuse: GET /v1/devices (50, bearer JWT), ${connections} connections, ${rounds} rounds × ${seconds}s each way, HTTPS on loopback, node ${process.version}, ${os.cpus().length} cores\n`,
);
console.log('| GET /v1/devices                  | req/s  | p50 ms | p99 ms | server µs CPU/req | errors |');
console.log('|----------------------------------|--------|--------|--------|-------------------|--------|');
const row = (name: string, r: ReturnType<typeof summarize>, e: number) =>
  `| ${name.padEnd(32)} | ${String(r.rps).padStart(6)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)} | ${String(r.server_cpu_us_per_req).padStart(17)} | ${String(e).padStart(6)} |`;
console.log(row('alone', u, errors.unloaded));
console.log(row('under load', l, errors.loaded));
console.log(`\nload (opened in ${setupS.toFixed(1)} s; held at the end of the loaded rounds):`);
console.log(`  slowloris on the API:  ${slow.held.length} of ${SLOWLORIS} opened, ${stillHeld.slowloris} still held`);
console.log(`  idle TLS on the API:   ${idle.held.length} of ${IDLE_TLS} opened, ${stillHeld.idle_tls} still held`);
console.log(
  `  RTSP from ${ADDRESSES} addresses: ${rtsp.held.length + rtsp.failed} tried (${PER_ADDRESS} + 1 each, limit ${PER_ADDRESS}), ${rtspRefused} refused, ${stillHeld.rtsp} still held`,
);
console.log(`  refused counter in /metrics: ${refusedCounter}; log lines about it: ${refusedLogLines}`);
console.log(`  daemon at the peak: RSS ${peak.rss_mb} MB, ${peak.open_files} open files`);
console.log(`\nratio loaded/unloaded req/s: ${ratio} (goal >= 0.9, no error)\n`);
console.log(
  JSON.stringify({
    bench: 'abuse',
    connections,
    seconds,
    rounds,
    unloaded: u,
    loaded: l,
    ratio,
    errors,
    load: {
      slowloris: SLOWLORIS,
      idle_tls: IDLE_TLS,
      rtsp: RTSP,
      addresses: ADDRESSES,
      rtsp_per_address_limit: PER_ADDRESS,
      setup_s: Number(setupS.toFixed(1)),
    },
    held_at_end: stillHeld,
    opened: { slowloris: slow.held.length, idle_tls: idle.held.length, rtsp: rtsp.held.length },
    rtsp_refused: rtspRefused,
    rtsp_refused_counter: refusedCounter,
    rtsp_refused_log_lines: refusedLogLines,
    peak,
    goal_ratio_met: ratio >= 0.9,
    goal_no_error_met: errors.unloaded + errors.loaded === 0,
  }),
);
