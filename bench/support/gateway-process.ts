// Shared by the benchmarks: the gateway as its own process (as in production), started from the
// built CLI with a config file, plus a token from its local issuer; and what the HTTP benchmarks
// measure of it.
import { execFileSync, spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import autocannon, { type Options, type Result } from 'autocannon';
import Type, { type Static, type TSchema } from 'typebox';
import { StreamAddressSchema } from '../../dist/api/schemas.js';
import { Store } from '../../dist/store/store.js';
import { DevicePage, narrow, parseAs, type Device } from './json.ts';
import { cpuSeconds } from './proc.ts';
import { upperMedian } from './stats.ts';

/** A node process of ours whose stdout is read and whose stderr is the bench's. */
export type NodeChild = ChildProcessByStdio<null, Readable, null>;

export const defaultCli = path.resolve(import.meta.dirname, '../../dist/cli.js');

export interface GatewayProcess {
  child: NodeChild;
  pid: number;
  apiUrl: string;
  /** Null without a metrics listener (metrics.listen). */
  metricsUrl: string | null;
  /** An access token from the gateway's local issuer with these scopes (space-separated). */
  token: (scope: string) => string;
  stop: () => Promise<void>;
}

const StartedLine = Type.Object({ apiUrl: Type.String(), metricsUrl: Type.Union([Type.String(), Type.Null()]) });

/**
 * Starts `edge-gateway start --config FILE`; resolves once it logged that it started (with its API and
 * metrics URLs). `nodeArgs` go to node before the CLI (e.g. --cpu-prof); `cli`, another build's
 * dist/cli.js (a before/after comparison in one run); `env`, the daemon's environment.
 */
export async function startGatewayProcess(
  configFile: string,
  nodeArgs: readonly string[] = [],
  cli = defaultCli,
  env: NodeJS.ProcessEnv = process.env,
): Promise<GatewayProcess> {
  const { child, pid, line, stop } = await spawnUntilLine(
    [...nodeArgs, cli, 'start', '--config', configFile],
    (l) => l.includes('"edge gateway started"'),
    'gateway',
    {
      ...env,
      NODE_OPTIONS: [DAEMON_NODE_OPTIONS, env.NODE_OPTIONS].filter(Boolean).join(' '),
      MALLOC_MMAP_THRESHOLD_: env.MALLOC_MMAP_THRESHOLD_ ?? DAEMON_MMAP_THRESHOLD,
    },
  );
  const { apiUrl, metricsUrl } = parseAs(StartedLine, line, "the gateway's start line");
  const token = (scope: string) =>
    execFileSync(process.execPath, [cli, 'token', '--config', configFile, '--scope', scope], {
      encoding: 'utf8',
    }).trim();
  return { child, pid, apiUrl, metricsUrl, token, stop };
}

/**
 * The V8 flags the systemd unit and `./run start` give the daemon (NODE_OPTIONS there), and below
 * their allocator setting: the benches measure the daemon as it runs.
 */
export const DAEMON_NODE_OPTIONS = '--max-semi-space-size=8';
/** glibc's MALLOC_MMAP_THRESHOLD_ as the unit and `./run start` set it (a bench's env may override it). */
export const DAEMON_MMAP_THRESHOLD = '131072';

/** Spawns node with `args`; resolves with the first line of its stdout that `isReady` accepts. */
async function spawnUntilLine(
  args: readonly string[],
  isReady: (line: string) => boolean,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  endsWithBench(child);
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const found = out.split('\n').find(isReady);
      if (found) resolve(found);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
  const stop = () => stopChild(child);
  const { pid } = child;
  if (pid === undefined) throw new Error(`${name} has no pid`);
  return { child, pid, line, stop };
}

/**
 * A benchmark that fails half-way, or is stopped (Ctrl-C, kill), must not leave a server running:
 * `child` gets SIGTERM when this process exits or is stopped by SIGINT or SIGTERM (which then ends
 * it: 'exit' does not come on a signal), until `child` has exited.
 */
export function endsWithBench(child: ChildProcess): void {
  const killOnExit = () => child.kill('SIGTERM');
  const onSignal = (signal: NodeJS.Signals) => {
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
}

/** Resolves once `child` has exited. */
export const exited = (child: ChildProcess): Promise<void> =>
  new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));

/** Sends SIGTERM to `child`; resolves once it has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await exited(child);
}

/** A self-signed ECDSA P-256 certificate and key in `dir` (as the gateway makes its own), as files. */
export function selfSignedCert(dir: string): { certFile: string; keyFile: string } {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-sha256',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}

export interface BareServer {
  child: NodeChild;
  pid: number;
  url: string;
  stop: () => Promise<void>;
}

export interface BareServerOptions {
  certFile: string;
  keyFile: string;
  bodyFile: string;
  route: string;
  contentType: string;
  /** 'bytes': the body sent as a Buffer, as the gateway sends it; else as a string. */
  bodyAs?: 'string' | 'bytes';
}

/**
 * A bare Fastify HTTPS server (bench/support/bare-https-server.ts) in its own process, answering
 * GET `route` with `bodyFile`'s bytes: what the gateway's answer would cost without the gateway.
 */
export async function startBareServer({
  certFile,
  keyFile,
  bodyFile,
  route,
  contentType,
  bodyAs = 'string',
}: BareServerOptions): Promise<BareServer> {
  const script = path.resolve(import.meta.dirname, 'bare-https-server.ts');
  const { child, pid, line, stop } = await spawnUntilLine(
    [script, certFile, keyFile, bodyFile, route, contentType],
    (l) => l.startsWith('{"url"'),
    'bare server',
    { ...process.env, BODY_AS: bodyAs },
  );
  return { child, pid, url: parseAs(Type.Object({ url: Type.String() }), line, "the bare server's line").url, stop };
}

/** bench/support/push-sink.ts in its own process: a push service on 127.0.0.1 that answers 201 to every push. */
export async function startPushSink(
  certFile: string,
  keyFile: string,
): Promise<{ child: NodeChild; pid: number; port: number; stop: () => Promise<void> }> {
  const script = path.resolve(import.meta.dirname, 'push-sink.ts');
  const { child, pid, line, stop } = await spawnUntilLine(
    [script, certFile, keyFile],
    (l) => l.startsWith('{"port"'),
    'push sink',
  );
  return { child, pid, port: parseAs(Type.Object({ port: Type.Number() }), line, "the push sink's line").port, stop };
}

/**
 * The config of an API benchmark's gateway: its data in `dataDir`, the API on a free loopback port
 * with the certificate given, no discovery, the relay and metrics on free ports; `extra` YAML after.
 */
export function apiBenchConfig(
  { dataDir, certFile, keyFile }: { dataDir: string; certFile: string; keyFile: string },
  extra = '',
): string {
  return (
    `gateway:\n  data_dir: ${dataDir}\napi:\n  host: 127.0.0.1\n  port: 0\n  tls:\n    cert_file: ${certFile}\n    key_file: ${keyFile}\n` +
    `onvif:\n  discovery:\n    enabled: false\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\nmetrics:\n  listen: 127.0.0.1:0\nlog:\n  level: info\n` +
    extra
  );
}

/** What seedDevices needs of a build's Store class: this build's, or another's (storeOfBuild). */
export type StoreClass = Pick<typeof Store, 'open'>;

/** The Store class of another build, from beside its dist/cli.js: its schema may be older than this one's. */
export async function storeOfBuild(cli: string): Promise<StoreClass> {
  const module: unknown = await import(
    pathToFileURL(path.join(path.dirname(path.resolve(cli)), 'store/store.js')).href
  );
  if (
    typeof module !== 'object' ||
    module === null ||
    !('Store' in module) ||
    typeof module.Store !== 'function' ||
    !('open' in module.Store)
  ) {
    throw new Error(`${cli}: no Store class beside it`);
  }
  // Another build of the same class: its open() gives a store that has upsertDevice and close.
  return module.Store as StoreClass;
}

/** `count` cameras in the store of `dataDir` (every fifth offline), as the list benchmarks read them. */
export function seedDevices(dataDir: string, count: number, StoreOfBuild: StoreClass = Store): void {
  const store = StoreOfBuild.open(dataDir);
  for (let i = 0; i < count; i++) {
    store.upsertDevice({
      id: `cam-${i}`,
      name: `Camera ${i}`,
      type: 'camera',
      status: i % 5 ? 'online' : 'offline',
      model: 'IPC-HDW2431T',
      manufacturer: 'Dahua',
      firmwareVersion: '2.800.0000000.38.R',
      lastSeenAt: Date.now(),
      createdAt: Date.now() + i,
    });
  }
  store.close();
}

/** What an autocannon run is pointed at. */
export type Target = Pick<Options, 'url' | 'method' | 'headers' | 'body'>;
/** An autocannon run with the server's CPU seconds during it. */
export type Measured = Result & { serverCpuS: number };

/**
 * One autocannon run against `target` (url, method, headers, body), with the server's CPU seconds; any non-2xx fails
 * it.
 */
export async function measure(
  pid: number,
  name: string,
  target: Target,
  opts: Pick<Options, 'connections' | 'duration' | 'overallRate'>,
): Promise<Measured> {
  const cpuBefore = cpuSeconds(pid);
  const r = await autocannon({ ...target, ...opts, pipelining: 1 });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { ...r, serverCpuS: cpuSeconds(pid) - cpuBefore };
}

export interface Summary {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  server_cpu_us_per_req: number;
  bytes_per_req: number;
}

/** Autocannon runs (each with serverCpuS added) summed up: req/s, median p50/p99, server CPU and bytes per request. */
export function summarize(runs: readonly Measured[]): Summary {
  const total = runs.reduce((a, r) => a + r.requests.total, 0);
  const secs = runs.reduce((a, r) => a + r.duration, 0);
  return {
    rps: Math.round(total / secs),
    p50_ms: upperMedian(runs.map((r) => r.latency.p50)),
    p99_ms: upperMedian(runs.map((r) => r.latency.p99)),
    server_cpu_us_per_req: Math.round((runs.reduce((a, r) => a + r.serverCpuS, 0) / total) * 1e6),
    bytes_per_req: Math.round(runs.reduce((a, r) => a + r.throughput.total, 0) / total),
  };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTPS request with `options` (and `body`, if any): the answer with its body as text. */
export function httpsText(url: string | URL, options: RequestOptions = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject).end(body);
  });
}

/**
 * GET `p` on the gateway's API with a bearer token, trusting only its certificate `ca` (or, with
 * `agent`, what the agent trusts): the JSON body as `schema` has it. Any status but 200 fails it.
 */
export async function getJson<T extends TSchema>(
  schema: T,
  apiUrl: string,
  ca: Buffer,
  token: string,
  p: string,
  agent?: RequestOptions['agent'],
): Promise<Static<T>> {
  const res = await httpsText(new URL(p, apiUrl), {
    ca,
    agent,
    servername: 'localhost',
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${res.body.slice(0, 200)}`);
  return parseAs(schema, res.body, `GET ${p}`);
}

/**
 * The first device the gateway lists online, asked every 100 ms up to `attempts` times: the camera of a one-camera
 * bench, once adopted.
 */
export async function onlineDevice(
  gateway: GatewayProcess,
  ca: Buffer,
  token: string,
  attempts: number,
): Promise<Device> {
  for (let i = 0; i < attempts; i++) {
    const device = (await getJson(DevicePage, gateway.apiUrl, ca, token, '/v1/devices')).data.find(
      (d) => d.status === 'online',
    );
    if (device) return device;
    await sleep(100);
  }
  throw new Error('camera not adopted');
}

/** A fresh stream address of a device (GET /v1/devices/{id}/stream), over `protocol` or the default one. */
export async function streamAddress(
  gateway: GatewayProcess,
  ca: Buffer,
  token: string,
  deviceId: string,
  protocol?: string,
): Promise<string> {
  const query = protocol === undefined ? '' : `?protocol=${protocol}`;
  return (await getJson(StreamAddressSchema, gateway.apiUrl, ca, token, `/v1/devices/${deviceId}/stream${query}`))
    .stream_url;
}

/** One GET of `url` trusting only the certificate in `certFile`: status, Content-Type and body as text. */
export async function getTrusted(
  certFile: string,
  { url, headers }: Target,
): Promise<{ status: number; contentType: string; body: string }> {
  const res = await httpsText(url, { headers, ca: readFileSync(certFile) });
  return { status: res.status, contentType: res.headers['content-type'] ?? '', body: res.body };
}

/** The text of the gateway's /metrics; an error when it has no metrics listener. */
export async function metricsText(gateway: Pick<GatewayProcess, 'metricsUrl'>): Promise<string> {
  if (gateway.metricsUrl === null) throw new Error('the gateway has no metrics listener (metrics.listen)');
  return (await fetch(gateway.metricsUrl)).text();
}

/** The value of one series (`name` or `name{labels}`, as written) in /metrics text; undefined when absent. */
export function metric(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A port free on loopback now (another process may take it before it is used: benches only). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** A log entry of the gateway (pino JSON): its fields (level, msg, …) to narrow where read. */
export type LogEntry = Record<string, unknown>;
const LogEntry = Type.Record(Type.String(), Type.Unknown());

/** Calls `onEntry` with each log entry (pino JSON on stdout) the gateway writes from now on. */
export function onLogEntries(child: NodeChild, onEntry: (entry: LogEntry) => void): void {
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // not a log line
      }
      onEntry(narrow(LogEntry, entry, 'a log entry'));
    }
  });
}
