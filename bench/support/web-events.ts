// The event stream under load: SUBSCRIBERS clients hold GET /v1/events open over HTTPS while the
// gateway (its own process, bench/support/web-events-gateway.ts) makes ALERTS alerts through its
// store, one every INTERVAL ms. Measured: delivery latency (alert created_at in the gateway → event
// parsed by the client, same machine clock), events lost (each client must get every alert once),
// the gateway's RSS, and its own counters. Env: BENCH_EVENT_SUBSCRIBERS (100), BENCH_EVENT_ALERTS
// (1000), BENCH_EVENT_INTERVAL_MS (5).
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, Agent } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Type, { type Static, type TSchema } from 'typebox';
import { AlertSchema } from '../../dist/api/schemas.js';
import { endsWithBench, exited, metric, metricsText } from './gateway-process.ts';
import { narrow, parseAs } from './json.ts';
import { rssMiB } from './proc.ts';
import { percentile } from './stats.ts';

const SUBSCRIBERS = Number(process.env.BENCH_EVENT_SUBSCRIBERS ?? 100);
const ALERTS = Number(process.env.BENCH_EVENT_ALERTS ?? 1000);
const INTERVAL_MS = Number(process.env.BENCH_EVENT_INTERVAL_MS ?? 5);

const rssMb = (pid: number) => Math.round(rssMiB(pid));

/** What bench/support/web-events-gateway.ts tells this process. */
const Started = Type.Object({
  type: Type.Literal('started'),
  apiUrl: Type.String(),
  metricsUrl: Type.Union([Type.String(), Type.Null()]),
  certFile: Type.String(),
});
const TokenMessage = Type.Object({ type: Type.Literal('token'), token: Type.String() });
const AlertsDone = Type.Object({ type: Type.Literal('alerts-done') });

/** One subscriber: parses the stream, records each alert's delivery latency and id. */
function subscribe(
  apiUrl: string,
  ca: Buffer,
  token: string,
  agent: Agent,
  onAlert: (id: string, ms: number) => void,
): Promise<{ close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL('/v1/events', apiUrl),
      { ca, servername: 'localhost', agent, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`GET /v1/events: ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = Date.now();
          buffer += chunk;
          let cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            if (!block.includes('event: alert.created')) continue;
            const alert = parseAs(AlertSchema, block.slice(block.indexOf('data: ') + 6), 'an alert.created event');
            onAlert(alert.id, now - Date.parse(alert.created_at));
          }
        });
        resolve({ close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export async function measureEvents() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-events-'));
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    `gateway:\n  data_dir: ${path.join(dir, 'data')}\napi:\n  host: 127.0.0.1\n  port: 0\n  max_connections_per_address: ${SUBSCRIBERS + 16}\n` +
      `onvif:\n  discovery:\n    enabled: false\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\nmetrics:\n  listen: 127.0.0.1:0\n` +
      // No object detector: its model (~140 MB) would hide what the streams cost.
      `detection:\n  mode: "off"\nevents:\n  max_subscribers: ${SUBSCRIBERS}\nlog:\n  level: warn\n`,
  );
  const child = fork(path.resolve(import.meta.dirname, 'web-events-gateway.ts'), [configFile], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  endsWithBench(child);
  const pid = child.pid;
  if (pid === undefined) throw new Error('the gateway process has no pid');
  /** The next message of this type from the gateway process. */
  const message = <T extends TSchema>(type: string, schema: T) =>
    new Promise<Static<T>>((resolve) => {
      const on = (m: unknown) => {
        if (typeof m !== 'object' || m === null || !('type' in m) || m.type !== type) return;
        child.off('message', on);
        resolve(narrow(schema, m, `the gateway's ${type} message`));
      };
      child.on('message', on);
    });
  const { apiUrl, metricsUrl, certFile } = await message('started', Started);
  child.send({ type: 'token', scope: 'alerts:read' });
  const { token } = await message('token', TokenMessage);
  const ca = readFileSync(certFile);

  const latencies: number[] = [];
  const received = Array.from({ length: SUBSCRIBERS }, () => new Set<string>());
  let duplicates = 0;
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const subscribers = [];
  for (const seen of received) {
    subscribers.push(
      await subscribe(apiUrl, ca, token, agent, (id, ms) => {
        if (seen.has(id)) duplicates++;
        seen.add(id);
        latencies.push(ms);
      }),
    );
  }
  const rssBefore = rssMb(pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(pid))), 100);
  const started = Date.now();
  child.send({ type: 'alerts', count: ALERTS, intervalMs: INTERVAL_MS });
  await message('alerts-done', AlertsDone);
  // Every subscriber's last alert, or 30 s.
  const deadline = Date.now() + 30_000;
  while (received.some((r) => r.size < ALERTS) && Date.now() < deadline) await sleep(50);
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const metrics = await metricsText({ metricsUrl });
  for (const s of subscribers) s.close();
  child.send({ type: 'stop' });
  await exited(child);
  rmSync(dir, { recursive: true, force: true });

  const sorted = latencies.sort((a, b) => a - b);
  const delivered = received.reduce((a, r) => a + r.size, 0);
  const json = {
    subscribers: SUBSCRIBERS,
    alerts: ALERTS,
    alert_interval_ms: INTERVAL_MS,
    expected: SUBSCRIBERS * ALERTS,
    delivered,
    lost: SUBSCRIBERS * ALERTS - delivered,
    duplicates,
    latency_p50_ms: percentile(sorted, 50),
    latency_p99_ms: percentile(sorted, 99),
    latency_max_ms: sorted.at(-1),
    seconds: Math.round(seconds * 10) / 10,
    gateway_rss_mb_idle_subscribed: rssBefore,
    gateway_rss_mb_peak: rssPeak,
    events_sent_total: metric(metrics, 'edge_gateway_event_stream_events_sent_total') ?? 0,
    slow_consumer_disconnects:
      metric(metrics, 'edge_gateway_event_stream_disconnects_total{reason="slow_consumer"}') ?? 0,
  };
  const rows = [
    ['subscribers × alerts', `${SUBSCRIBERS} × ${ALERTS} (one every ${INTERVAL_MS} ms)`],
    ['delivered / expected', `${delivered} / ${json.expected} (lost ${json.lost}, duplicates ${duplicates})`],
    ['delivery latency p50 / p99 / max', `${json.latency_p50_ms} / ${json.latency_p99_ms} / ${json.latency_max_ms} ms`],
    ['gateway RSS subscribed idle / peak', `${rssBefore} / ${rssPeak} MB`],
    ['events sent (gateway counter)', String(json.events_sent_total)],
    ['slow-consumer disconnects', String(json.slow_consumer_disconnects)],
  ] as const;
  const width = Math.max(...rows.map((r) => r[0].length));
  const table = ['GET /v1/events under load', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
  return { table, json };
}
