// Shared by the benchmarks: the gateway as its own process (as in production), started from the
// built CLI with a config file, plus a token from its local issuer; and what the HTTP benchmarks
// measure of it.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import autocannon from 'autocannon';
import path from 'node:path';
import { Store } from '../dist/store/store.js';

const defaultCli = path.resolve(import.meta.dirname, '../dist/cli.js');

/**
 * Starts `edge-gateway start --config FILE`; resolves once it logged that it started (with its API and
 * metrics URLs). `nodeArgs` go to node before the CLI (e.g. --cpu-prof); `cli`, another build's
 * dist/cli.js (a before/after comparison in one run); `env`, the daemon's environment.
 */
export async function startGatewayProcess(configFile, nodeArgs = [], cli = defaultCli, env = process.env) {
  const { child, line, stop } = await spawnUntilLine([...nodeArgs, cli, 'start', '--config', configFile], (l) => l.includes('"edge gateway started"'), 'gateway', env);
  const { apiUrl, metricsUrl } = JSON.parse(line);
  const token = (scope) => execFileSync(process.execPath, [cli, 'token', '--config', configFile, '--scope', scope], { encoding: 'utf8' }).trim();
  return { child, apiUrl, metricsUrl, token, stop };
}

/** Spawns node with `args`; resolves with the first line of its stdout that `isReady` accepts. */
async function spawnUntilLine(args, isReady, name, env = process.env) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  // A benchmark that fails half-way, or is stopped (Ctrl-C, kill), must not leave a server running;
  // one that stopped it drops this. 'exit' does not come on a signal: the signal ends the bench here.
  const killOnExit = () => child.kill('SIGTERM');
  const onSignal = (signal) => {
    killOnExit();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('exit', killOnExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  child.once('exit', () => {
    process.removeListener('exit', killOnExit);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  });
  const line = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const found = out.split('\n').find(isReady);
      if (found) resolve(found);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
  };
  return { child, line, stop };
}

/** A self-signed ECDSA P-256 certificate and key in `dir` (as the gateway makes its own), as files. */
export function selfSignedCert(dir) {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-days', '1', '-sha256', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ], { stdio: 'ignore' });
  return { certFile, keyFile };
}

/**
 * A bare Fastify HTTPS server (bench/support/bare-https-server.mjs) in its own process, answering
 * GET `route` with `bodyFile`'s bytes: what the gateway's answer would cost without the gateway.
 */
export async function startBareServer({ certFile, keyFile, bodyFile, route, contentType, bodyAs = 'string' }) {
  const script = path.resolve(import.meta.dirname, 'support/bare-https-server.mjs');
  const { child, line, stop } = await spawnUntilLine([script, certFile, keyFile, bodyFile, route, contentType], (l) => l.startsWith('{"url"'), 'bare server', { ...process.env, BODY_AS: bodyAs });
  return { child, url: JSON.parse(line).url, stop };
}

/**
 * The config of an API benchmark's gateway: its data in `dataDir`, the API on a free loopback port
 * with the certificate given, no discovery, the relay and metrics on free ports; `extra` YAML after.
 */
export function apiBenchConfig({ dataDir, certFile, keyFile }, extra = '') {
  return (
    `gateway:\n  data_dir: ${dataDir}\napi:\n  host: 127.0.0.1\n  port: 0\n  tls:\n    cert_file: ${certFile}\n    key_file: ${keyFile}\n` +
    `onvif:\n  discovery:\n    enabled: false\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\nmetrics:\n  listen: 127.0.0.1:0\nlog:\n  level: info\n` +
    extra
  );
}

/** `count` cameras in the store of `dataDir` (every fifth offline), as the list benchmarks read them. */
export function seedDevices(dataDir, count, StoreOfBuild = Store) {
  const store = StoreOfBuild.open(dataDir);
  for (let i = 0; i < count; i++) {
    store.upsertDevice({
      id: `cam-${i}`, name: `Camera ${i}`, type: 'camera', status: i % 5 ? 'online' : 'offline',
      model: 'IPC-HDW2431T', manufacturer: 'Dahua', firmwareVersion: '2.800.0000000.38.R', lastSeenAt: Date.now(), createdAt: Date.now() + i,
    });
  }
  store.close();
}

/**
 * CPU seconds (user + system) a process has used: per-request server cost, which is what a Pi pays
 * when the clients are elsewhere (here autocannon shares the cores with it).
 */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime in clock ticks (USER_HZ 100)
}

/** One autocannon run against `target` (url, method, headers, body), with the server's CPU seconds; any non-2xx fails it. */
export async function measure(pid, name, target, opts) {
  const cpuBefore = cpuSeconds(pid);
  const r = await autocannon({ ...target, ...opts, pipelining: 1 });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  r.serverCpuS = cpuSeconds(pid) - cpuBefore;
  return r;
}

/** Autocannon runs (each with serverCpuS added) summed up: req/s, median p50/p99, server CPU and bytes per request. */
export function summarize(runs) {
  const total = runs.reduce((a, r) => a + r.requests.total, 0);
  const secs = runs.reduce((a, r) => a + r.duration, 0);
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return {
    rps: Math.round(total / secs),
    p50_ms: median(runs.map((r) => r.latency.p50)),
    p99_ms: median(runs.map((r) => r.latency.p99)),
    server_cpu_us_per_req: Math.round((runs.reduce((a, r) => a + r.serverCpuS, 0) / total) * 1e6),
    bytes_per_req: Math.round(runs.reduce((a, r) => a + r.throughput.total, 0) / total),
  };
}

/** GET `p` on the gateway's API with a bearer token, trusting only its certificate `ca`: the parsed JSON body. */
export function getJson(apiUrl, ca, token, p) {
  return new Promise((resolve, reject) => {
    const req = request(new URL(p, apiUrl), { ca, servername: 'localhost', headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One GET of `url` trusting only the certificate in `certFile`: status, Content-Type and body as text. */
export function getTrusted(certFile, { url, headers }) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, ca: readFileSync(certFile) }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, contentType: res.headers['content-type'], body }));
    });
    req.on('error', reject).end();
  });
}

/** The median of `xs` (the mean of the middle two for an even count); `xs` is left as it was. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A port free on loopback now (another process may take it before it is used: benches only). */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

/** Calls `onEntry` with each log entry (pino JSON on stdout) the gateway writes from now on. */
export function onLogEntries(child, onEntry) {
  let partial = '';
  child.stdout.on('data', (d) => {
    const lines = (partial + d).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // not a log line
      }
      onEntry(entry);
    }
  });
}
