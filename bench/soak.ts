// Benchmark: memory over time under ordinary use. The gateway as its own process with N simulated
// cameras (default 4; 1280x720, 15 frames/s, 2 Mbit/s, looped, so the source costs little), its
// recorders, the detector on every motion start, cloud sync to a Mosquitto on loopback, and a
// scripted mix of what people and cameras do, for a duration given on the command line:
//   npm run bench -- soak [DURATION]       DURATION: 30m (default), 2h, 900s, …
//  - every 5 s a motion event on the next camera (3 s long), checked by the detector;
//  - every 5 s each camera's snapshot (width=320) and recordings list, and the alerts list;
//  - every 15 s an RTSP viewer (ffmpeg, copying) for 4 s; every 20 s an LL-HLS viewer (playlist,
//    init segment and parts fetched as a player would) for 6 s, on the next camera; every 20 s a
//    WebRTC viewer (WHEP, a node-datachannel peer in this process) for 6 s, on the camera after;
//  - one GET /v1/events stream held open all along;
//  - every 10 min the MQTT broker stopped for 60 s (the outbox fills, then drains); every 10 min,
//    5 min later, the next camera rebooted (gone 3 s, then back with no subscription).
// Every 30 s, after a full garbage collection in the daemon and in each of its worker threads
// (HeapProfiler.collectGarbage through the daemon's inspector, on a loopback port, and through its
// NodeWorker domain: a detector thread's young generation otherwise moves its RSS by up to 12 MB
// from one sample to the next), it samples the daemon's RSS (/proc), process.memoryUsage() (heap
// used, external, array buffers; through the inspector), its open files and its threads.
// It reports the samples, the least-squares slope of RSS over the last two thirds of the run in MB
// per hour (goal: <= 2 once warm) and of heap and external likewise, the API errors and the
// gateway's warnings. Env: BENCH_CAMERAS (default 4), BENCH_SAMPLE_S (default 30), BENCH_NODE_ARGS
// (more flags for the daemon's node, split on spaces), BENCH_ENV (NAME=VALUE pairs for the daemon,
// split on spaces: e.g. MALLOC_ARENA_MAX=2), BENCH_FEATURES (comma list of what runs; default all:
// events,snapshots,lists,rtsp,hls,webrtc,sse,mqtt,reboot), to bisect, BENCH_PERIOD_S (default 600: how
// often the broker goes away and a camera reboots; the outage starts a fifth into each period,
// the reboot half-way). Needs ffmpeg, mosquitto and the
// simulator's packages (see ./run).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import Type from 'typebox';
import Value from 'typebox/value';
import { StreamAddressSchema } from '../dist/api/schemas.js';
import { startFleet, type Fleet } from '../dist/onvif/simulator/fleet.js';
import { cameraEntries, cameraOf } from './support/fleet.ts';
import {
  freePort,
  httpsText,
  metric,
  metricsText,
  onLogEntries,
  startGatewayProcess,
  stopChild,
  type GatewayProcess,
} from './support/gateway-process.ts';
import { DevicePage, narrow, parseAs, type Device } from './support/json.ts';
import { type MemoryMap, memoryMap, openFiles, statusKiB } from './support/proc.ts';
import { closeViewer, type GatewayCall, webrtcViewer } from './support/webrtc-viewer.ts';

const durationArg = process.argv[3] ?? '30m';
const unit: Record<string, number> = { s: 1, m: 60, h: 3600 };
const durationMatch = /^(\d+(?:\.\d+)?)([smh]?)$/.exec(durationArg);
if (!durationMatch) {
  console.error(`usage: npm run bench -- soak [DURATION]   (e.g. 30m, 2h, 900s; got ${durationArg})`);
  process.exit(2);
}
const durationS = Number(durationMatch[1]) * (unit[durationMatch[2] || 's'] ?? 1);
const cameras = Number(process.env.BENCH_CAMERAS ?? 4);
const sampleS = Number(process.env.BENCH_SAMPLE_S ?? 30);
/** How often the broker goes away and a camera reboots (BENCH_PERIOD_S, default 600 s). */
const periodMs = Number(process.env.BENCH_PERIOD_S ?? 600) * 1000;
const features = new Set(
  (process.env.BENCH_FEATURES ?? 'events,snapshots,lists,rtsp,hls,webrtc,sse,mqtt,reboot').split(','),
);
const extraNodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const extraEnv = Object.fromEntries(
  (process.env.BENCH_ENV ?? '')
    .split(' ')
    .filter(Boolean)
    .map((p): [string, string] => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]),
);
const logger = pino({ level: 'silent' });
const round1 = (x: number) => Math.round(x * 10) / 10;
const MiB = 2 ** 20;

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-soak-'));
const segmentDir = mkdtempSync('/dev/shm/eg-bench-soak-');
const stopAt = Date.now() + durationS * 1000;
const running = () => Date.now() < stopAt;
/** A sleep that ends with the run. */
const nap = (ms: number) => sleep(Math.min(ms, Math.max(0, stopAt - Date.now())));
const counts = {
  api: 0,
  apiErrors: 0,
  apiErrorExamples: [] as string[],
  events: 0,
  rtspViewers: 0,
  rtspFailed: 0,
  hlsViewers: 0,
  hlsFailed: 0,
  webrtcViewers: 0,
  webrtcFailed: 0,
  webrtcFailure: undefined as string | undefined,
  sseBytes: 0,
  brokerOutages: 0,
  reboots: 0,
  error: undefined as string | undefined,
};
const warnings = new Map<string, number>();
let gateway: GatewayProcess | null = null;
let broker: ChildProcess | null = null;
let fleet: Fleet | null = null;

// --- the broker ----------------------------------------------------------------------------------
const brokerPort = await freePort();
const brokerConf = path.join(dir, 'mosquitto.conf');
writeFileSync(
  brokerConf,
  `user ${os.userInfo().username}\nlistener ${brokerPort} 127.0.0.1\nallow_anonymous true\npersistence false\n`,
);
const startBroker = () => {
  broker = spawn('/usr/sbin/mosquitto', ['-c', brokerConf], { stdio: 'ignore' });
};
// A bench stopped half-way (a signal, an error) leaves no broker behind.
process.once('exit', () => broker?.kill('SIGTERM'));
const stopBroker = async () => {
  const b = broker;
  broker = null;
  if (b) await stopChild(b);
};

// --- the daemon's inspector: forced collections and process.memoryUsage() -----------------------
/** An answer of the inspector protocol (Chrome DevTools Protocol) to a call with an id. */
const InspectorAnswer = Type.Object({
  id: Type.Number(),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ message: Type.String() })),
});
const MemoryUsage = Type.Object({
  heapUsed: Type.Number(),
  external: Type.Number(),
  arrayBuffers: Type.Number(),
  /** V8's spaces, used bytes: compiled code (JIT), bytecode and other trusted objects, and the rest (old). */
  codeSpace: Type.Number(),
  trustedSpace: Type.Number(),
  oldSpace: Type.Number(),
});
/** What `memoryUsage()` reads in the daemon: process.memoryUsage() and V8's space sizes. */
const MEMORY_EXPRESSION = `(() => {
  const used = Object.fromEntries(process.getBuiltinModule('v8').getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
  return JSON.stringify({
    ...process.memoryUsage(),
    codeSpace: (used.code_space ?? 0) + (used.code_large_object_space ?? 0),
    trustedSpace: (used.trusted_space ?? 0) + (used.trusted_large_object_space ?? 0),
    oldSpace: (used.old_space ?? 0) + (used.large_object_space ?? 0),
  });
})()`;

/** NodeWorker events: a worker thread's session attached, and a message from one. */
const WorkerAttached = Type.Object({
  method: Type.Literal('NodeWorker.attachedToWorker'),
  params: Type.Object({ sessionId: Type.String() }),
});
const WorkerMessage = Type.Object({
  method: Type.Literal('NodeWorker.receivedMessageFromWorker'),
  params: Type.Object({ sessionId: Type.String(), message: Type.String() }),
});
const WorkerDetached = Type.Object({
  method: Type.Literal('NodeWorker.detachedFromWorker'),
  params: Type.Object({ sessionId: Type.String() }),
});

type Waiter = { resolve: (result: unknown) => void; reject: (err: Error) => void };

class Inspector {
  readonly #ws: WebSocket;
  #id = 0;
  readonly #pending = new Map<number, Waiter>();
  /** The worker threads' sessions (NodeWorker domain), each with its own calls waiting. */
  readonly #workers = new Map<string, Map<number, Waiter>>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
  }

  static async connect(port: number): Promise<Inspector> {
    let url: string | undefined;
    for (let i = 0; i < 50 && !url; i++) {
      const list: unknown = await fetch(`http://127.0.0.1:${port}/json/list`)
        .then((r) => r.json())
        .catch(() => null);
      url =
        list === null
          ? undefined
          : narrow(
              Type.Array(Type.Object({ webSocketDebuggerUrl: Type.String() })),
              list,
              "the inspector's /json/list",
            )[0]?.webSocketDebuggerUrl;
      if (!url) await sleep(100);
    }
    if (!url) throw new Error("the daemon's inspector did not answer");
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = () => reject(new Error('cannot open the inspector'));
    });
    const me = new Inspector(ws);
    ws.onmessage = (m: MessageEvent<string>) => me.#received(JSON.parse(m.data) as unknown, me.#pending);
    // The detector's threads: their heaps are collected with the daemon's before each sample.
    await me.call('NodeWorker.enable', { waitForDebuggerOnStart: false });
    return me;
  }

  #received(data: unknown, pending: Map<number, Waiter>): void {
    if (typeof data !== 'object' || data === null) return;
    if (Value.Check(WorkerAttached, data)) this.#workers.set(data.params.sessionId, new Map());
    else if (Value.Check(WorkerDetached, data)) this.#workers.delete(data.params.sessionId);
    else if (Value.Check(WorkerMessage, data)) {
      const waiting = this.#workers.get(data.params.sessionId);
      if (waiting) this.#received(JSON.parse(data.params.message) as unknown, waiting);
    }
    // Other events (no id) are not answers.
    if (!('id' in data)) return;
    const msg = narrow(InspectorAnswer, data, 'an inspector answer');
    const waiter = pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id);
    if (msg.error) waiter.reject(new Error(msg.error.message));
    else waiter.resolve(msg.result);
  }

  call(method: string, params: object = {}): Promise<unknown> {
    const id = ++this.#id;
    this.#ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  /** A full collection in the daemon and in each of its worker threads (their young generations shrink back). */
  async collectGarbage(): Promise<void> {
    const done = [this.call('HeapProfiler.collectGarbage')];
    for (const [sessionId, waiting] of this.#workers) {
      const id = ++this.#id;
      const message = JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' });
      done.push(new Promise((resolve, reject) => waiting.set(id, { resolve, reject })));
      done.push(this.call('NodeWorker.sendMessageToWorker', { sessionId, message }));
    }
    await Promise.all(done);
  }

  async memoryUsage() {
    const r = narrow(
      Type.Object({ result: Type.Object({ value: Type.String() }) }),
      await this.call('Runtime.evaluate', { expression: MEMORY_EXPRESSION, returnByValue: true }),
      'Runtime.evaluate',
    );
    return parseAs(MemoryUsage, r.result.value, 'process.memoryUsage()');
  }

  close() {
    this.#ws.close();
  }
}

function procStatus(pid: number) {
  const threads = Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { rss: (statusKiB(pid, 'VmRSS') || 0) * 1024, threads, fds: openFiles(pid) };
}

/** A MemoryMap in MiB, for a sample's line. */
const mapText = (m: MemoryMap) =>
  Object.entries(m)
    .map(([k, kib]) => `${k} ${round1(kib / 1024)}`)
    .join(', ');

/** Least-squares slope of y over t (s) per hour, and its standard error. */
function leastSquares(points: readonly { t: number; y: number }[]) {
  if (points.length < 3) return null;
  const mt = points.reduce((a, p) => a + p.t, 0) / points.length;
  const my = points.reduce((a, p) => a + p.y, 0) / points.length;
  const stt = points.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  if (stt === 0) return null;
  const b = points.reduce((a, p) => a + (p.t - mt) * (p.y - my), 0) / stt;
  const residuals = points.reduce((a, p) => a + (p.y - my - b * (p.t - mt)) ** 2, 0);
  return { slope: b * 3600, stdErr: Math.sqrt(residuals / (points.length - 2) / stt) * 3600 };
}

/**
 * Theil–Sen slope of y over t (s) per hour: the median of the slopes between every two samples,
 * which one burst (a peak the allocator keeps for a while) does not move as it moves least squares.
 */
function theilSenPerHour(points: readonly { t: number; y: number }[]) {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++)
    for (let j = i + 1; j < points.length; j++) {
      const dt = points[j]!.t - points[i]!.t;
      if (dt > 0) slopes.push((points[j]!.y - points[i]!.y) / dt);
    }
  slopes.sort((a, b) => a - b);
  return slopes.length ? slopes[Math.floor(slopes.length / 2)]! * 3600 : null;
}

interface Sample {
  t: number;
  rss: number;
  heapUsed: number;
  codeSpace: number;
  trustedSpace: number;
  oldSpace: number;
  external: number;
  arrayBuffers: number;
  fds: number;
  threads: number;
  frameBytes: number;
  checks: number;
  /** The detector threads' heaps (used), which heapUsed does not count. */
  workerHeap: number;
  /** Where the RSS is (/proc/PID/smaps), KiB. */
  map: MemoryMap;
}

const samples: Sample[] = [];
let inspector: Inspector | null = null;
try {
  startBroker();
  const cams = (fleet = await startFleet({
    count: cameras,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'soak',
    discovery: null,
    rtspPort: 0,
    mainBitrateKbps: 2000,
    looped: { width: 1280, height: 720, fps: 15, gopS: 1, seconds: 10 },
    logger,
  }));
  const configFile = path.join(dir, 'config.yaml');
  mkdirSync(path.join(dir, 'storage'));
  writeFileSync(
    configFile,
    `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n  public_host: 127.0.0.1\n` +
      `metrics:\n  listen: 127.0.0.1:0\nonvif:\n  discovery:\n    enabled: false\ncameras:\n${cameraEntries(cams, 'soak', (i) => `Soak ${i}`)}` +
      `recording:\n  storage_dir: ${dir}/storage\n  segment_dir: ${segmentDir}\n  pre_roll_s: 3\n  post_roll_s: 3\n  motion:\n    mode: 'off'\n` +
      `detection:\n  mode: 'on'\n` +
      `webrtc:\n  bind_address: 127.0.0.1\n` +
      (features.has('mqtt') ? `sync:\n  mqtt:\n    url: mqtt://127.0.0.1:${brokerPort}\n` : '') +
      `log:\n  level: info\n`,
  );
  const inspectPort = await freePort();
  const gw = (gateway = await startGatewayProcess(
    configFile,
    [`--inspect=127.0.0.1:${inspectPort}`, ...extraNodeArgs],
    undefined,
    { ...process.env, ...extraEnv },
  ));
  // The gateway's warnings and errors (pino JSON on stdout), by message.
  onLogEntries(gw.child, (entry) => {
    if (typeof entry.level !== 'number' || entry.level < 40) return;
    const text = `${String(entry.msg)}${entry.err ? `: ${JSON.stringify(entry.err).slice(0, 120)}` : ''}`;
    warnings.set(text, (warnings.get(text) ?? 0) + 1);
  });
  const token = gw.token('devices:read alerts:read recordings:read');
  const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
  const agent = new Agent({ keepAlive: true, maxSockets: 8, ca });
  const fail = (what: string) => {
    counts.apiErrors++;
    if (counts.apiErrorExamples.length < 5) counts.apiErrorExamples.push(what);
  };
  /** One API call; resolves with status and body; counts errors (5xx, transport). */
  const call = (p: string) =>
    new Promise<{ status: number; body: Buffer }>((resolve) => {
      counts.api++;
      const req = request(
        new URL(p, gw.apiUrl),
        { agent, ca, servername: 'localhost', headers: { authorization: `Bearer ${token}` } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 500) fail(`${p.split('?')[0]}: ${status}`);
            resolve({ status, body: Buffer.concat(chunks) });
          });
          res.on('error', (e) => {
            fail(`${p}: ${e.message}`);
            resolve({ status: 0, body: Buffer.alloc(0) });
          });
        },
      );
      req.on('error', (e) => {
        fail(`${p.split('?')[0]}: ${e.message}`);
        resolve({ status: 0, body: Buffer.alloc(0) });
      });
      req.end();
    });
  /** One API call whose answer is read as it comes (the event stream); null on a transport error. */
  const stream = (p: string) =>
    new Promise<IncomingMessage | null>((resolve) => {
      counts.api++;
      const req = request(
        new URL(p, gw.apiUrl),
        { agent, ca, servername: 'localhost', headers: { authorization: `Bearer ${token}` } },
        resolve,
      );
      req.on('error', (e) => {
        fail(`${p.split('?')[0]}: ${e.message}`);
        resolve(null);
      });
      req.end();
    });
  /** The stream address of a device's answer (null when it did not give one). */
  const streamAddress = (r: { status: number; body: Buffer }) =>
    r.status === 200 ? parseAs(StreamAddressSchema, r.body.toString(), 'a stream address').stream_url : null;

  // All cameras online.
  let devices: Device[] = [];
  for (const deadline = Date.now() + 90_000; Date.now() < deadline && devices.length < cameras; await sleep(500)) {
    const r = await call('/v1/devices?limit=200&status=online');
    if (r.status === 200) devices = parseAs(DevicePage, r.body.toString(), 'GET /v1/devices').data;
  }
  if (devices.length < cameras) throw new Error(`only ${devices.length} of ${cameras} cameras online`);
  const ids = devices.map((d) => d.id).sort();
  const idAt = (i: number) => ids[i % ids.length]!;
  // Camera i of the fleet reports the model SIM-(i+1).
  const cameraOfDevice = (id: string) => cameraOf(cams, Number(devices.find((d) => d.id === id)?.model?.slice(4)) - 1);
  const insp = (inspector = await Inspector.connect(inspectPort));
  const t0 = Date.now();

  // --- what people and cameras do ---
  const every = (ms: number, fn: (i: number) => Promise<void>, offsetMs = 0) =>
    (async () => {
      await nap(offsetMs);
      for (let i = 0; running(); i++) {
        const at = Date.now();
        await fn(i).catch((e: unknown) => fail(`script: ${e instanceof Error ? e.message : String(e)}`));
        await nap(Math.max(0, ms - (Date.now() - at)));
      }
    })();
  const loops: Promise<void>[] = [];
  if (features.has('events'))
    loops.push(
      every(5000, async (i) => {
        const cam = cameraOfDevice(idAt(i));
        cam.trigger('motion', true);
        counts.events++;
        await sleep(3000);
        cam.trigger('motion', false);
      }),
    );
  if (features.has('snapshots'))
    loops.push(
      every(5000, async () => void (await Promise.all(ids.map((id) => call(`/v1/devices/${id}/snapshot?width=320`))))),
    );
  if (features.has('lists'))
    loops.push(
      every(5000, async () => {
        await Promise.all(ids.map((id) => call(`/v1/devices/${id}/recordings?limit=20`)));
        await call('/v1/alerts?limit=50');
      }),
    );
  if (features.has('rtsp'))
    loops.push(
      every(15_000, async (i) => {
        const url = streamAddress(await call(`/v1/devices/${idAt(i)}/stream?protocol=rtsp`));
        if (url === null) return;
        counts.rtspViewers++;
        const ok = await new Promise<boolean>((resolve) => {
          const v = spawn(
            'ffmpeg',
            ['-v', 'error', '-rtsp_transport', 'tcp', '-i', url, '-t', '4', '-c', 'copy', '-f', 'null', '-'],
            { stdio: 'ignore' },
          );
          const timer = setTimeout(() => v.kill('SIGKILL'), 15_000);
          v.once('exit', (code) => {
            clearTimeout(timer);
            resolve(code === 0);
          });
        });
        if (!ok) counts.rtspFailed++;
      }),
    );
  if (features.has('hls'))
    loops.push(
      every(
        20_000,
        async (i) => {
          const playlistUrl = streamAddress(await call(`/v1/devices/${idAt(i + 1)}/stream?protocol=hls`));
          if (playlistUrl === null) return;
          counts.hlsViewers++;
          const fetched = new Set<string>();
          const pathOf = (uri: string) => {
            const url = new URL(uri, playlistUrl);
            return url.pathname + url.search;
          };
          let good = false;
          for (const until = Date.now() + 6000; Date.now() < until; await sleep(500)) {
            const pl = await call(pathOf(playlistUrl));
            if (pl.status !== 200) break;
            const text = pl.body.toString();
            const uris = [...text.matchAll(/(?:URI="([^"]+)")|^([^#\s][^\s]*)$/gm)].map((m) => m[1] ?? m[2] ?? '');
            for (const uri of uris.slice(-4)) {
              if (fetched.has(uri)) continue;
              fetched.add(uri);
              const part = await call(pathOf(uri));
              if (part.status === 200) good = true;
            }
          }
          if (!good) counts.hlsFailed++;
        },
        7000,
      ),
    );
  const gatewayCall: GatewayCall = (url, options = {}, body) =>
    httpsText(new URL(url, gw.apiUrl), { ...options, ca, servername: 'localhost' }, body);
  if (features.has('webrtc'))
    loops.push(
      every(
        20_000,
        async (i) => {
          const whepUrl = streamAddress(await call(`/v1/devices/${idAt(i + 2)}/stream?protocol=webrtc`));
          if (whepUrl === null) return;
          counts.webrtcViewers++;
          // A viewer that could not start is counted with the failed ones, the first reason kept (the
          // gateway's own 5xx answers count as API errors too).
          const viewer = await webrtcViewer(whepUrl, gatewayCall, () => undefined).catch((e: unknown) => {
            const message = e instanceof Error ? e.message : String(e);
            counts.webrtcFailure ??= message;
            if (/^WHEP POST 5/.test(message)) fail(`WHEP POST: ${message.slice(10, 13)}`);
            return null;
          });
          if (viewer === null) return void counts.webrtcFailed++;
          await sleep(6000);
          if (viewer.packets === 0) counts.webrtcFailed++;
          await closeViewer(viewer, gatewayCall);
        },
        14_000,
      ),
    );
  if (features.has('sse'))
    loops.push(
      (async () => {
        while (running()) {
          const res = await stream('/v1/events');
          if (!res) {
            await sleep(1000);
            continue;
          }
          await new Promise<void>((resolve) => {
            res.on('data', (c: Buffer) => (counts.sseBytes += c.length));
            res.on('end', resolve);
            res.on('error', () => resolve());
            const timer = setInterval(() => {
              if (!running()) {
                res.destroy();
                clearInterval(timer);
                resolve();
              }
            }, 1000);
          });
        }
      })(),
    );
  if (features.has('mqtt'))
    loops.push(
      every(
        periodMs,
        async () => {
          if (Date.now() + 60_000 > stopAt) return;
          await stopBroker();
          counts.brokerOutages++;
          await nap(60_000);
          startBroker();
        },
        periodMs / 5,
      ),
    );
  if (features.has('reboot'))
    loops.push(
      every(
        periodMs,
        async (i) => {
          cameraOfDevice(idAt(i)).reboot();
          counts.reboots++;
        },
        periodMs / 2,
      ),
    );

  // --- sampling ---
  // What the detector's checks hold (decoded frames are the largest buffers the daemon keeps): a
  // queue of checks waiting for a slow detector shows as array buffers, not as a leak.
  const detectionFigures = async () => {
    try {
      const text = await metricsText(gw);
      return {
        frameBytes: metric(text, 'edge_gateway_detection_frame_bytes') ?? 0,
        checks: metric(text, 'edge_gateway_detection_in_flight') ?? 0,
        workerHeap: metric(text, 'edge_gateway_detection_worker_heap_bytes{kind="physical"}') ?? 0,
      };
    } catch {
      return { frameBytes: 0, checks: 0, workerHeap: 0 };
    }
  };
  const sample = async () => {
    await insp.collectGarbage();
    const mem = await insp.memoryUsage();
    const st = procStatus(gw.pid);
    const held = await detectionFigures();
    const s: Sample = {
      t: Math.round((Date.now() - t0) / 1000),
      rss: st.rss,
      heapUsed: mem.heapUsed,
      codeSpace: mem.codeSpace,
      trustedSpace: mem.trustedSpace,
      oldSpace: mem.oldSpace,
      external: mem.external,
      arrayBuffers: mem.arrayBuffers,
      fds: st.fds,
      threads: st.threads,
      ...held,
      map: memoryMap(gw.pid),
    };
    samples.push(s);
    console.error(
      `soak ${s.t}s: rss ${round1(s.rss / MiB)} MiB, heap ${round1(s.heapUsed / MiB)} (code ${round1(s.codeSpace / MiB)}, trusted ${round1(s.trustedSpace / MiB)}, old ${round1(s.oldSpace / MiB)}), external ${round1(s.external / MiB)}, arrayBuffers ${round1(s.arrayBuffers / MiB)} (detection frames ${round1(s.frameBytes / MiB)}, ${s.checks} checks), detector heaps ${round1(s.workerHeap / MiB)}, fds ${s.fds}, threads ${s.threads}; ${mapText(s.map)}`,
    );
  };
  await sample();
  while (running()) {
    await sleep(Math.min(sampleS * 1000, Math.max(0, stopAt - Date.now())));
    await sample();
  }
  await Promise.all(loops);
} catch (err) {
  counts.error = err instanceof Error ? err.message : String(err);
} finally {
  inspector?.close();
  await gateway?.stop();
  await fleet?.stop();
  await stopBroker();
  rmSync(dir, { recursive: true, force: true });
  rmSync(segmentDir, { recursive: true, force: true });
}

// --- report ---
const warm = samples.filter((s) => s.t >= (samples.at(-1)?.t ?? 0) / 3);
/** The slope over the warm samples (MB per hour, one decimal) of what `mb` reads of each, in MB. */
const slopeOf = (mb: (s: Sample) => number) => {
  const fit = leastSquares(warm.map((s) => ({ t: s.t, y: mb(s) })));
  return fit ? round1(fit.slope) : null;
};
const slope = (
  key: 'heapUsed' | 'codeSpace' | 'trustedSpace' | 'oldSpace' | 'workerHeap' | 'external' | 'arrayBuffers',
) => slopeOf((s) => s[key] / 1e6);
const mapKinds = ['file', 'brk', 'arenas', 'reserved', 'code', 'anon', 'stacks'] as const;
/** Each MemoryMap kind's slope: which part of the RSS grows. */
const mapSlopes = Object.fromEntries(mapKinds.map((k) => [k, slopeOf((s) => (s.map[k] * 1024) / 1e6)]));
const rssPoints = warm.map((s) => ({ t: s.t, y: s.rss / 1e6 }));
const rssFit = leastSquares(rssPoints);
const rssTheilSen = theilSenPerHour(rssPoints);
const slopes = {
  rss: rssFit ? round1(rssFit.slope) : null,
  heapUsed: slope('heapUsed'),
  codeSpace: slope('codeSpace'),
  trustedSpace: slope('trustedSpace'),
  oldSpace: slope('oldSpace'),
  workerHeap: slope('workerHeap'),
  external: slope('external'),
  arrayBuffers: slope('arrayBuffers'),
};
// Viewers and clips come and go, so a sample's open files depend on the moment: the fewest of the
// last third against the fewest of the third before it.
const earlier = warm.slice(0, Math.floor(warm.length / 2));
const later = warm.slice(Math.floor(warm.length / 2));
const fdsFlat =
  earlier.length > 0 &&
  later.length > 0 &&
  Math.min(...later.map((s) => s.fds)) <= Math.min(...earlier.map((s) => s.fds)) + 2;
console.log(
  `\nbench soak: ${cameras} simulated cameras, ${durationS} s, features ${[...features].join(',')}, node ${process.version}, ${os.cpus().length} cores\n`,
);
console.log(
  '| t (s) | RSS MiB | heap used MiB | external MiB | array buffers MiB | detection frames MiB (checks) | fds | threads |',
);
console.log(
  '|------:|--------:|--------------:|-------------:|------------------:|------------------------------:|----:|--------:|',
);
for (const s of samples)
  console.log(
    `| ${s.t} | ${round1(s.rss / MiB)} | ${round1(s.heapUsed / MiB)} | ${round1(s.external / MiB)} | ${round1(s.arrayBuffers / MiB)} | ${round1(s.frameBytes / MiB)} (${s.checks}) | ${s.fds} | ${s.threads} |`,
  );
console.log(
  `\nslope over the last two thirds (after a full GC each sample), MB per hour: RSS ${slopes.rss}, heap ${slopes.heapUsed} (code ${slopes.codeSpace}, trusted ${slopes.trustedSpace}, old ${slopes.oldSpace}), detector heaps ${slopes.workerHeap}, external ${slopes.external}, array buffers ${slopes.arrayBuffers}`,
);
console.log(
  `RSS: least squares ${slopes.rss} ± ${rssFit ? round1(rssFit.stdErr) : '-'} (standard error) MB/h, Theil–Sen ${rssTheilSen === null ? '-' : round1(rssTheilSen)} MB/h`,
);
console.log(`where the RSS grows (smaps), MB per hour: ${JSON.stringify(mapSlopes)}`);
console.log(`where it is at the end: ${samples.length ? mapText(samples.at(-1)!.map) : 'no samples'}`);
console.log(`activity: ${JSON.stringify({ ...counts, apiErrorExamples: undefined })}`);
if (counts.apiErrorExamples.length) console.log(`API errors, first: ${counts.apiErrorExamples.join('; ')}`);
if (warnings.size)
  console.log(
    `gateway warnings: ${[...warnings]
      .slice(0, 10)
      .map(([w, n]) => `${n}x ${w}`)
      .join('; ')}`,
  );
if (counts.error) console.log(`error: ${counts.error}`);
const goals = {
  rss_flat_le_2mb_per_h: slopes.rss !== null && slopes.rss <= 2,
  fds_flat: fdsFlat,
  no_api_errors: counts.apiErrors === 0,
};
console.log(
  `\ngoals: RSS <= 2 MB/h once warm: ${goals.rss_flat_le_2mb_per_h}; fds flat: ${goals.fds_flat}; no API errors: ${goals.no_api_errors}\n`,
);
console.log(
  JSON.stringify({
    bench: 'soak',
    cameras,
    duration_s: durationS,
    sample_s: sampleS,
    features: [...features],
    env: extraEnv,
    node_args: extraNodeArgs,
    slopes_mb_per_h: slopes,
    rss_slope_std_err_mb_per_h: rssFit ? round1(rssFit.stdErr) : null,
    rss_theil_sen_mb_per_h: rssTheilSen === null ? null : round1(rssTheilSen),
    map_slopes_mb_per_h: mapSlopes,
    first: samples[0] ?? null,
    last: samples.at(-1) ?? null,
    counts: { ...counts, apiErrorExamples: undefined },
    goals,
  }),
);
process.exit(0);
