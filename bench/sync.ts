// Benchmark: the outbox drain after a cloud outage. The gateway runs (its own process) while the
// broker is down; 100,000 alerts are written to its database meanwhile (the outbox rows with
// them, in the same transactions, as the recorder would); then Mosquitto starts on loopback and a
// cloud-side subscriber counts what arrives. Figures: events/s of the drain, the daemon's RSS
// during the outage and the drain (it must not grow with the backlog), and lost/duplicate messages.
// Env: BENCH_EVENTS (default 100000).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'mqtt';
import Type from 'typebox';
import { Store } from '../dist/store/store.js';
import { freePort, startGatewayProcess, stopChild } from './support/gateway-process.ts';
import { parseAs } from './support/json.ts';
import { rssMiB } from './support/proc.ts';

const events = Number(process.env.BENCH_EVENTS ?? 100_000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-sync-'));

// The broker: Mosquitto from Debian, loopback only, no queue limit for the subscriber.
const brokerPort = await freePort();
const brokerConf = path.join(dir, 'mosquitto.conf');
// Persistence: the cloud subscriber's session (made before the outage) survives the broker's
// restart, so what the gateway sends the moment the broker is back is queued for it.
writeFileSync(
  brokerConf,
  `user ${os.userInfo().username}\nlistener ${brokerPort} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\nmax_inflight_messages 0\n` +
    `persistence true\npersistence_location ${dir}/\nautosave_interval 3600\n`,
);
let broker: ChildProcess | null = null;
const startBroker = async () => {
  const started = spawn('/usr/sbin/mosquitto', ['-c', brokerConf], { stdio: 'ignore' });
  broker = started;
  process.once('exit', () => started.kill('SIGKILL'));
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(true)); // taken: the broker listens
      s.listen(brokerPort, '127.0.0.1', () => s.close(() => resolve(false)));
    });
    if (up) return;
    await sleep(50);
  }
  throw new Error('mosquitto did not start');
};
// A clean stop saves the sessions.
const stopBroker = async () => broker && (await stopChild(broker));

// The cloud side subscribes first, with a persistent session, then the outage begins.
await startBroker();
const seen = new Set<string>();
let received = 0;
let outOfOrder = 0;
let lastIndex = -1;
/** An alert as sync publishes it: the API's shape and the row's stable message_id. */
const Published = Type.Object({ message_id: Type.String(), id: Type.String() });
const sub = connect(`mqtt://127.0.0.1:${brokerPort}`, {
  clientId: 'bench-cloud',
  protocolVersion: 5,
  clean: false,
  properties: { sessionExpiryInterval: 3600 },
  reconnectPeriod: 100,
});
await new Promise((r) => sub.once('connect', r));
sub.on('message', (topic, payload) => {
  if (!topic.endsWith('/alerts')) return;
  const body = parseAs(Published, payload.toString(), 'a published alert');
  received++;
  seen.add(body.message_id);
  const index = Number(body.id.slice(5));
  if (index < lastIndex) outOfOrder++;
  lastIndex = Math.max(lastIndex, index);
});
await sub.subscribeAsync('bench/#', { qos: 1 });
await stopBroker();

const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n` +
    `onvif:\n  discovery:\n    enabled: false\nrecording:\n  segment_dir: ${dir}/segments\n` +
    `sync:\n  mqtt:\n    url: mqtt://127.0.0.1:${brokerPort}\n    topic_prefix: bench\n  outbox:\n    max_rows: ${events * 2}\nlog:\n  level: info\n`,
);

// The gateway, with the broker down: it keeps retrying in the background.
const gateway = await startGatewayProcess(configFile);
await sleep(1000);
const rssIdle = rssMiB(gateway.pid);

// The outage: alerts written to the gateway's database by this process (a second SQLite
// connection; the rows are what the recorder's own writes would leave).
const store = Store.open(path.join(dir, 'data'));
store.enableOutbox(events * 2);
store.upsertDevice({
  id: 'dev_bench',
  name: 'Bench',
  type: 'camera',
  status: 'online',
  model: null,
  manufacturer: null,
  firmwareVersion: null,
  lastSeenAt: Date.now(),
});
const t0 = performance.now();
for (let i = 0; i < events; i += 1000) {
  store.transaction(() => {
    for (let j = i; j < Math.min(events, i + 1000); j++) {
      store.insertAlert({
        id: `alr_b${String(j).padStart(7, '0')}`,
        deviceId: 'dev_bench',
        type: 'motion',
        message: 'Motion detected by Bench',
        createdAt: Date.now(),
      });
    }
  });
}
const writeS = (performance.now() - t0) / 1000;
const backlog = store.outboxSize;
store.close();
await sleep(2000);
const rssOutage = rssMiB(gateway.pid);

// The broker comes back; the subscriber's session was kept.
await startBroker();
const drainStart = performance.now();
let rssDrainMax = 0;
let firstAt: number | null = null;
while (seen.size < events) {
  await sleep(100);
  if (seen.size > 0 && firstAt === null) firstAt = performance.now() - 50; // within the last poll
  if (process.env.BENCH_PROGRESS) console.error(Math.round(performance.now() - drainStart), seen.size);
  rssDrainMax = Math.max(rssDrainMax, rssMiB(gateway.pid));
  if (performance.now() - drainStart > 300_000) break;
}
const endAt = performance.now();
const drainS = (endAt - drainStart) / 1000;
// Throughput from the first message to the last; the wait before the first is the gateway's
// reconnect backoff (with jitter, up to 30 s), reported on its own.
const reconnectS = ((firstAt ?? endAt) - drainStart) / 1000;
const rate = Math.round(seen.size / Math.max(0.001, (endAt - (firstAt ?? drainStart)) / 1000));
// Everything acknowledged is deleted from the outbox (read the file again); and does the RSS stay
// up after the drain (retained memory) or was it the garbage of the drain?
await sleep(5000);
const rssAfter = rssMiB(gateway.pid);
const after = Store.open(path.join(dir, 'data'));
after.enableOutbox(events * 2);
const left = after.outboxSize;
after.close();

await sub.endAsync();
await gateway.stop();
await stopBroker();
rmSync(dir, { recursive: true, force: true });
const lost = events - seen.size;
console.log(
  `\nbench sync: ${events} alerts made during a broker outage, then drained to Mosquitto on loopback (node ${process.version}, ${os.cpus().length} cores)\n`,
);
console.log('| phase | figure |');
console.log('|-------|--------|');
console.log(`| writing the alerts (outbox rows in the same transactions) | ${Math.round(events / writeS)} alerts/s |`);
console.log(`| outbox rows waiting | ${backlog} |`);
console.log(
  `| daemon RSS idle / during the outage / max while draining / 5 s after | ${rssIdle.toFixed(0)} / ${rssOutage.toFixed(0)} / ${rssDrainMax.toFixed(0)} / ${rssAfter.toFixed(0)} MiB |`,
);
console.log(`| broker start to first message (the gateway's reconnect backoff) | ${reconnectS.toFixed(1)} s |`);
console.log(`| drain, first to last message | ${(drainS - reconnectS).toFixed(1)} s, ${rate} events/s |`);
console.log(
  `| received / unique / lost / out of order / left in outbox | ${received} / ${seen.size} / ${lost} / ${outOfOrder} / ${left} |`,
);
console.log(
  `\ngoals: >= 5000 events/s: ${rate >= 5000}; RSS flat (drain max within 30 MiB of idle): ${rssDrainMax - rssIdle <= 30}; 0 lost: ${lost === 0}\n`,
);
console.log(
  JSON.stringify({
    bench: 'sync',
    events,
    write_per_s: Math.round(events / writeS),
    reconnect_s: Math.round(reconnectS * 10) / 10,
    drain_s: Math.round((drainS - reconnectS) * 10) / 10,
    events_per_s: rate,
    rss_idle_mib: Math.round(rssIdle),
    rss_outage_mib: Math.round(rssOutage),
    rss_drain_max_mib: Math.round(rssDrainMax),
    rss_after_drain_mib: Math.round(rssAfter),
    received,
    unique: seen.size,
    lost,
    out_of_order: outOfOrder,
    left_in_outbox: left,
  }),
);
process.exit(0);
