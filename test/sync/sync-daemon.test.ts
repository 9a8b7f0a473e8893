import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { connect } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { startDaemon, type Daemon } from '../support/daemon.js';
import { tempDir } from '../support/temp-dir.js';
import { startMosquitto, type Mosquitto } from '../support/mosquitto.js';

// The outbox across a crash: the daemon (a real process) runs while the broker is down, 1,000 alerts
// are written to its database meanwhile, the daemon is SIGKILLed and started again, then the broker
// comes back: all 1,000 arrive, in order, each once by message_id.

const EVENTS = 1000;
let broker: Mosquitto;
const dir = tempDir('eg-sync-daemon-');
const configFile = path.join(dir, 'config.yaml');
let daemon: Daemon | null = null;

beforeAll(async () => {
  broker = await startMosquitto({ persistence: true });
  writeFileSync(
    configFile,
    `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nmetrics:\n  listen: 127.0.0.1:0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n` +
      `onvif:\n  discovery:\n    enabled: false\nrecording:\n  segment_dir: ${dir}/segments\n` +
      `sync:\n  mqtt:\n    url: ${broker.url}\n    topic_prefix: crash\nlog:\n  level: info\n`,
  );
});
afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await broker?.close();
});

describe('outbox across a SIGKILL', () => {
  it(
    'delivers every message made during an outage after the daemon was killed and restarted',
    { timeout: 120_000 },
    async () => {
      const certFile = () => path.join(dir, 'data/tls/cert.pem');
      // The cloud side: a persistent session, so what arrives while it reconnects is kept for it.
      const got: Array<{ id: string; messageId: string }> = [];
      const cloud = connect(broker.url, {
        clientId: 'crash-cloud',
        clean: false,
        protocolVersion: 5,
        properties: { sessionExpiryInterval: 3600 },
        reconnectPeriod: 200,
      });
      cloud.on('message', (topic, payload) => {
        if (!topic.endsWith('/alerts')) return;
        const body = JSON.parse(payload.toString()) as { id: string; message_id: string };
        got.push({ id: body.id, messageId: body.message_id });
      });
      await new Promise((r) => cloud.once('connect', r));
      await cloud.subscribeAsync('crash/#', { qos: 1 });

      daemon = await startDaemon(configFile, { cwd: dir, certFile });
      await broker.stop();
      // Alerts written meanwhile (a second connection to the daemon's database; the outbox rows go
      // with them in the same transactions, as the recorder's own writes do).
      const store = Store.open(path.join(dir, 'data'));
      store.enableOutbox(100_000);
      store.upsertDevice({
        id: 'dev_c',
        name: 'C',
        type: 'camera',
        status: 'online',
        model: null,
        manufacturer: null,
        firmwareVersion: null,
        lastSeenAt: Date.now(),
      });
      store.transaction(() => {
        for (let i = 0; i < EVENTS; i++)
          store.insertAlert({
            id: `alr_k${String(i).padStart(4, '0')}`,
            deviceId: 'dev_c',
            type: 'motion',
            message: 'm',
            createdAt: Date.now(),
          });
      });
      store.close();

      daemon.child.kill('SIGKILL');
      expect((await daemon.exited).signal).toBe('SIGKILL');
      daemon = await startDaemon(configFile, { cwd: dir, certFile });
      await broker.restart();

      await expect
        .poll(() => new Set(got.map((g) => g.messageId)).size, { timeout: 90_000, interval: 250 })
        .toBe(EVENTS);
      const firstSeen = got.map((g) => g.id).filter((id, i, all) => all.indexOf(id) === i);
      expect(firstSeen).toHaveLength(EVENTS);
      expect(firstSeen).toEqual([...firstSeen].sort()); // in order
      // One message per alert: every id came with one message_id (a re-send keeps its id).
      const idsPerAlert = new Map<string, Set<string>>();
      for (const g of got) idsPerAlert.set(g.id, (idsPerAlert.get(g.id) ?? new Set()).add(g.messageId));
      expect([...idsPerAlert.values()].every((s) => s.size === 1)).toBe(true);

      // Killed while connected: the broker publishes the last will, `offline`, retained.
      const statuses: string[] = [];
      cloud.on('message', (topic, payload) => {
        if (topic.endsWith('/status')) statuses.push(payload.toString());
      });
      await expect.poll(() => daemon!.logged('cloud sync connected').length, { timeout: 10_000 }).toBeGreaterThan(0);
      daemon.child.kill('SIGKILL');
      await expect.poll(() => statuses.at(-1), { timeout: 10_000 }).toBe('offline');
      await cloud.endAsync();
    },
  );
});
