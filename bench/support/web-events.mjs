// The event stream under load: SUBSCRIBERS clients hold GET /v1/events open over HTTPS while the
// gateway (its own process, bench/support/web-events-gateway.mjs) makes ALERTS alerts through its
// store, one every INTERVAL ms. Measured: delivery latency (alert created_at in the gateway → event
// parsed by the client, same machine clock), events lost (each client must get every alert once),
// the gateway's RSS, and its own counters. Env: BENCH_EVENT_SUBSCRIBERS (100), BENCH_EVENT_ALERTS
// (1000), BENCH_EVENT_INTERVAL_MS (5).
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, Agent } from 'node:https';
import os from 'node:os';
import path from 'node:path';

const SUBSCRIBERS = Number(process.env.BENCH_EVENT_SUBSCRIBERS ?? 100);
const ALERTS = Number(process.env.BENCH_EVENT_ALERTS ?? 1000);
const INTERVAL_MS = Number(process.env.BENCH_EVENT_INTERVAL_MS ?? 5);

const rssMb = (pid) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
};
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const metric = (text, name) => Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1] ?? 0);

/** One subscriber: parses the stream, records each alert's delivery latency and id. */
function subscribe(apiUrl, ca, token, agent, onAlert) {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/v1/events', apiUrl), { ca, servername: 'localhost', agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /v1/events: ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const now = Date.now();
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (!block.includes('event: alert.created')) continue;
          const alert = JSON.parse(block.slice(block.indexOf('data: ') + 6));
          onAlert(alert.id, now - Date.parse(alert.created_at));
        }
      });
      resolve({ close: () => req.destroy() });
    });
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
  const child = fork(path.resolve(import.meta.dirname, 'web-events-gateway.mjs'), [configFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  process.once('exit', () => child.kill('SIGTERM'));
  const message = (type) => new Promise((resolve) => child.on('message', function on(m) { if (m.type === type) { child.off('message', on); resolve(m); } }));
  const { apiUrl, metricsUrl, certFile } = await message('started');
  child.send({ type: 'token', scope: 'alerts:read' });
  const { token } = await message('token');
  const ca = readFileSync(certFile);

  const latencies = [];
  const received = Array.from({ length: SUBSCRIBERS }, () => new Set());
  let duplicates = 0;
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const subscribers = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    subscribers.push(
      await subscribe(apiUrl, ca, token, agent, (id, ms) => {
        if (received[i].has(id)) duplicates++;
        received[i].add(id);
        latencies.push(ms);
      }),
    );
  }
  const rssBefore = rssMb(child.pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(child.pid))), 100);
  const started = Date.now();
  child.send({ type: 'alerts', count: ALERTS, intervalMs: INTERVAL_MS });
  await message('alerts-done');
  // Every subscriber's last alert, or 30 s.
  const deadline = Date.now() + 30_000;
  while (received.some((r) => r.size < ALERTS) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const metrics = await (await fetch(`${metricsUrl}`)).text();
  for (const s of subscribers) s.close();
  child.send({ type: 'stop' });
  await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
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
    events_sent_total: metric(metrics, 'edge_gateway_event_stream_events_sent_total'),
    slow_consumer_disconnects: metric(metrics, 'edge_gateway_event_stream_disconnects_total{reason="slow_consumer"}'),
  };
  const rows = [
    ['subscribers × alerts', `${SUBSCRIBERS} × ${ALERTS} (one every ${INTERVAL_MS} ms)`],
    ['delivered / expected', `${delivered} / ${json.expected} (lost ${json.lost}, duplicates ${duplicates})`],
    ['delivery latency p50 / p99 / max', `${json.latency_p50_ms} / ${json.latency_p99_ms} / ${json.latency_max_ms} ms`],
    ['gateway RSS subscribed idle / peak', `${rssBefore} / ${rssPeak} MB`],
    ['events sent (gateway counter)', String(json.events_sent_total)],
    ['slow-consumer disconnects', String(json.slow_consumer_disconnects)],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  const table = ['GET /v1/events under load', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)].join('\n');
  return { table, json };
}
