// Benchmark: Web Push (docs/notifications.md). A push service of the bench's own on loopback
// (bench/support/push-sink.ts, its own process, HTTPS, answering 201) receives what the gateway sends.
// 1. Latency, with the picture: the gateway as its own process with one simulated camera; the
//    camera reports a person (its ONVIF event) BENCH_PUSHES times (default 20), one episode each;
//    from the alert's created_at to the push's arrival, and whether it carried the picture (the
//    still machinery's, re-encoded to fit; a push with it is a few KB, without it a few hundred
//    bytes). Goal: p95 ≤ 500 ms. Alerts are minutes apart in life, longer than the still
//    machinery keeps its decoder: the bench sets snapshot.decoder_idle_s to 5 and waits alternately
//    2.5 s (the next push finds the decoder running: warm) and 7 s (stopped: cold) between events,
//    and shows both kinds apart.
// 2. Load: 100 alerts a second across 16 cameras for BENCH_LOAD_S seconds (default 20) cannot be
//    had from cameras (an episode lasts its post-roll), so the notifier part is driven directly:
//    createNotifications from the build with the real store (alerts written as the recorder writes
//    them, their pushes queued in the same transactions), the real sender and encryption, and a
//    fixed 2.5 KB picture (the still machinery is phase 1's). Measured in this process (the push
//    service is another): CPU per push (with cooldown 0 and one subscription, minus the same alerts
//    written with nobody subscribed), then with 4 subscriptions and a 5 s cooldown what is sent and
//    collapsed, the queue's size, and the memory (it must stay flat).
import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import Type from 'typebox';
import { validateConfig } from '../dist/config/load.js';
import { createNotifications } from '../dist/notify/create.js';
import { SecretBox } from '../dist/platform/secret-box.js';
import { Store } from '../dist/store/store.js';
import { cameraEntries, cameraOf, startBenchFleet } from './support/fleet.ts';
import {
  httpsText,
  metric,
  onlineDevice,
  seedDevices,
  selfSignedCert,
  startGatewayProcess,
  startPushSink,
} from './support/gateway-process.ts';
import { AlertPage, parseAs } from './support/json.ts';
import { percentile, round } from './support/stats.ts';

const pushes = Number(process.env.BENCH_PUSHES ?? 20);
const loadS = Number(process.env.BENCH_LOAD_S ?? 20);
const GOAL_P95_MS = 500;
/** snapshot.decoder_idle_s in phase 1, and the waits between events that keep or lose the decoder. */
const DECODER_IDLE_S = 5;
const WARM_GAP_MS = 2500;
const COLD_GAP_MS = (DECODER_IDLE_S + 2) * 1000;
const RATE = 100;
const CAMERAS = 16;

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-push-'));
const { certFile, keyFile } = selfSignedCert(dir);
const sink = await startPushSink(certFile, keyFile);
const sinkAgent = new Agent({ keepAlive: true, ca: readFileSync(certFile), servername: 'localhost' });
const Arrivals = Type.Array(
  Type.Object({ at: Type.Number(), path: Type.String(), bytes: Type.Number(), topic: Type.String() }),
);
/** The pushes that reached the push service since the last look. */
async function arrivals() {
  const res = await httpsText(`https://localhost:${sink.port}/stats`, { agent: sinkAgent });
  return parseAs(Arrivals, res.body, "the push sink's stats");
}
const subscriptionKeys = () => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') };
};
const notificationsYaml = (cooldownS: number) =>
  `notifications:\n  cooldown_s: ${cooldownS}\n  ttl_s: 600\n  push_hosts:\n    - localhost:${sink.port}\n  ca_file: ${certFile}\n`;

// --- 1. latency, with the picture: a camera's person event until the push arrives

// A looped clip rather than live encoders: the camera's own CPU does not crowd the gateway's.
const fleet = await startBenchFleet({ looped: true });
const camera = cameraOf(fleet, 0);
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n` +
    `onvif:\n  discovery:\n    enabled: false\nmetrics:\n  listen: 127.0.0.1:0\nrecording:\n  segment_dir: ${dir}/segments\n  pre_roll_s: 1\n  post_roll_s: 1\n` +
    `cameras:\n${cameraEntries(fleet, 'bench', () => 'Front door')}` +
    notificationsYaml(0) +
    `snapshot:\n  decoder_idle_s: ${DECODER_IDLE_S}\n` +
    `log:\n  level: info\n`,
);
const gateway = await startGatewayProcess(configFile);
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
const token = gateway.token('alerts:read devices:read');
const device = await onlineDevice(gateway, ca, token, 600);
const api = new Agent({ keepAlive: true, ca, servername: 'localhost' });
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const subscribed = await httpsText(
  new URL('/v1/push/subscriptions', gateway.apiUrl),
  { method: 'POST', agent: api, headers },
  JSON.stringify({ endpoint: `https://localhost:${sink.port}/phone`, keys: subscriptionKeys() }),
);
if (subscribed.status !== 201) throw new Error(`POST /v1/push/subscriptions: ${subscribed.status} ${subscribed.body}`);
// The relay's keyframes and the recorder's ring are there before the first event.
await sleep(3000);
await arrivals();
const latencies: number[] = [];
/** Whether each push came after the picture's decoder had stopped (the first, and those after a long wait). */
const coldOnes: boolean[] = [];
let withPicture = 0;
for (let i = 0; i < pushes; i++) {
  camera.trigger('human', true);
  let arrived: Awaited<ReturnType<typeof arrivals>> = [];
  const until = Date.now() + 10_000;
  while (arrived.length === 0 && Date.now() < until) {
    await sleep(20);
    arrived = await arrivals();
  }
  camera.trigger('human', false);
  const push = arrived[0];
  if (!push) throw new Error(`push ${i + 1} did not arrive within 10 s`);
  const newest = await httpsText(new URL(`/v1/alerts?device_id=${device.id}&limit=1`, gateway.apiUrl), {
    agent: api,
    headers,
  });
  const alert = parseAs(AlertPage, newest.body, 'GET /v1/alerts').data[0];
  if (!alert) throw new Error('no alert');
  latencies.push(push.at - Date.parse(alert.created_at));
  coldOnes.push(i % 2 === 0);
  if (push.bytes > 1500) withPicture++;
  // The episode ends after its post-roll; the next event opens a new one, with the decoder still
  // running (after an odd push) or stopped (after an even one: the next is cold).
  await sleep(i % 2 === 0 ? WARM_GAP_MS : COLD_GAP_MS);
}
await gateway.stop();
await fleet.stop();

// --- 2. load: the notifier part driven directly, 100 alerts a second across 16 cameras

const PICTURE = Buffer.concat([Buffer.from([0xff, 0xd8]), randomBytes(2496), Buffer.from([0xff, 0xd9])]);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const rssMiB = () => process.memoryUsage().rss / 1024 / 1024;

interface Run {
  cpuMs: number;
  alerts: number;
  sent: number;
  collapsed: number;
  dropped: number;
  failed: number;
  queueMax: number;
  rss: number[];
  arrived: number;
}

async function drive(name: string, subscriptions: number, cooldownS: number): Promise<Run> {
  const data = path.join(dir, name);
  seedDevices(data, CAMERAS);
  const store = Store.open(data);
  const registry = new Registry();
  const undo: Array<() => unknown> = [];
  const config = validateConfig({
    gateway: { data_dir: data },
    notifications: {
      cooldown_s: cooldownS,
      ttl_s: 600,
      push_hosts: [`localhost:${sink.port}`],
      ca_file: certFile,
    },
  });
  createNotifications(
    config,
    {
      store,
      secretBox: SecretBox.openInDir(data),
      localIssuer: null,
      pictures: { still: async () => ({ jpeg: PICTURE, etag: 'bench' }), shrink: async (jpeg) => jpeg },
      registry,
      logger: pino({ level: 'silent' }),
    },
    (u) => undo.push(u),
  );
  for (let s = 0; s < subscriptions; s++)
    store.savePushSubscription(
      {
        owner: `user${s}`,
        grantId: null,
        endpoint: `https://localhost:${sink.port}/${name}/${s}`,
        ...subscriptionKeys(),
        devices: null,
        types: ['human', 'vehicle'],
        quietHours: null,
      },
      { perOwner: 20, total: 500 },
    );
  await arrivals();
  const alerts = RATE * loadS;
  const rss: number[] = [];
  let queueMax = 0;
  const cpu0 = cpuMs();
  const t0 = performance.now();
  for (let k = 0; k < alerts; k++) {
    const wait = t0 + (k * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    store.insertAlert({
      id: `alr_${name}${k}`,
      deviceId: `cam-${k % CAMERAS}`,
      type: 'human',
      message: `Person detected at Camera ${k % CAMERAS}`,
      createdAt: Date.now(),
    });
    queueMax = Math.max(queueMax, store.pushQueueSize);
    if (k % RATE === 0) rss.push(rssMiB());
  }
  // What waits for its cooldown goes when it ends.
  for (let i = 0; i < (cooldownS + 3) * 10 && store.pushQueueSize > 0; i++) await sleep(100);
  await sleep(200);
  const spent = cpuMs() - cpu0;
  rss.push(rssMiB());
  const text = await registry.metrics();
  const sum = (prefix: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(prefix))
      .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
  const run: Run = {
    cpuMs: spent,
    alerts,
    sent: metric(text, 'edge_gateway_push_sent_total') ?? 0,
    collapsed: metric(text, 'edge_gateway_push_collapsed_total') ?? 0,
    dropped: sum('edge_gateway_push_dropped_total{'),
    failed: sum('edge_gateway_push_failed_total{'),
    queueMax,
    rss,
    arrived: (await arrivals()).length,
  };
  for (const u of undo.reverse()) await u();
  store.close();
  return run;
}

const base = await drive('base', 0, 0);
const each = await drive('each', 1, 0);
const load = await drive('load', 4, 5);
await sink.stop();
rmSync(dir, { recursive: true, force: true });

const p50 = round(percentile(latencies, 50));
const p95 = round(percentile(latencies, 95));
// A cold push starts the still machinery's decoder for the push's size and quality (it stops after
// snapshot.decoder_idle_s without a picture): the figure of a gateway whose alerts are rare.
const cold = latencies.filter((_, i) => coldOnes[i]);
const warm = latencies.filter((_, i) => !coldOnes[i]);
const coldP95 = round(percentile(cold, 95));
const warmP95 = round(percentile(warm, 95));
const cpuPerPushMs = round((each.cpuMs - base.cpuMs) / Math.max(1, each.sent), 2);
const rssGrowth = round(Math.max(...load.rss.slice(Math.floor(load.rss.length / 2))) - load.rss[1]!, 1);
const goals = {
  latency_p95_le_500_ms: p95 <= GOAL_P95_MS,
  latency_cold_p95_le_500_ms: coldP95 <= GOAL_P95_MS,
  latency_warm_p95_le_500_ms: warmP95 <= GOAL_P95_MS,
  every_push_with_picture: withPicture === pushes,
  memory_flat_within_30_mib: rssGrowth <= 30,
  burst_collapsed: load.collapsed > 0 && load.sent < load.alerts * 4,
  nothing_dropped_or_failed: load.dropped + load.failed + each.dropped + each.failed === 0,
};
console.log(`\nbench push: node ${process.version}, ${os.cpus().length} cores\n`);
console.log('| measure | figure |');
console.log('|---------|--------|');
console.log(`| person event → push received, with its picture (${pushes} pushes) | p50 ${p50} ms, p95 ${p95} ms |`);
console.log(`| pushes that carried the picture | ${withPicture} of ${pushes} |`);
console.log(
  `| cold (the picture's decoder stopped: ${cold.length}) / warm (${warm.length}), p50 and p95 | ${round(percentile(cold, 50))}, ${coldP95} ms / ${round(percentile(warm, 50))}, ${warmP95} ms |`,
);
console.log(`| each, ms | ${latencies.join(', ')} |`);
console.log(
  `| CPU per push (encryption, TLS, store), cooldown 0, 1 subscription | ${cpuPerPushMs} ms (${each.sent} pushes, ${round(each.cpuMs)} ms; the same alerts alone ${round(base.cpuMs)} ms) |`,
);
console.log(
  `| ${RATE} alerts/s × ${loadS} s on ${CAMERAS} cameras, 4 subscriptions, cooldown 5 s | ${load.alerts} alerts: ${load.sent} pushes sent (${load.arrived} arrived), ${load.collapsed} collapsed, ${load.dropped} dropped, ${load.failed} failed |`,
);
console.log(`| queue at most | ${load.queueMax} rows (≤ subscriptions × cameras = ${4 * CAMERAS}) |`);
console.log(
  `| RSS during the load, first s / max of the second half / end | ${round(load.rss[1]!)} / ${round(Math.max(...load.rss.slice(Math.floor(load.rss.length / 2))))} / ${round(load.rss.at(-1)!)} MiB |`,
);
console.log(
  `\ngoals: ${Object.entries(goals)
    .map(([k, v]) => `${k}: ${v}`)
    .join('; ')}\n`,
);
console.log(
  JSON.stringify({
    bench: 'push',
    pushes,
    latency_p50_ms: p50,
    latency_p95_ms: p95,
    latency_cold_p50_ms: round(percentile(cold, 50)),
    latency_cold_p95_ms: coldP95,
    latency_warm_p50_ms: round(percentile(warm, 50)),
    latency_warm_p95_ms: warmP95,
    with_picture: withPicture,
    cpu_per_push_ms: cpuPerPushMs,
    load_alerts: load.alerts,
    load_sent: load.sent,
    load_arrived: load.arrived,
    load_collapsed: load.collapsed,
    load_dropped: load.dropped,
    load_failed: load.failed,
    load_queue_max: load.queueMax,
    load_rss_growth_mib: rssGrowth,
    goals,
  }),
);
process.exit(0);
