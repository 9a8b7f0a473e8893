import { connect, type MqttClient } from 'mqtt';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudSync } from '../../src/sync/cloud-sync.js';
import { Store } from '../../src/store/store.js';
import { onlineCamera } from '../support/devices.js';
import { startLinkCutter, type LinkCutter } from '../support/link-cutter.js';
import { startMosquitto, type Mosquitto } from '../support/mosquitto.js';
import { tempDir } from '../support/temp-dir.js';

// What the gateway had sent when its link to the broker died, unacknowledged: a real Mosquitto
// behind a link that first loses every byte (the messages go out and nothing comes back) and is
// then reset. Those messages are still in the outbox; they must go out again on the next
// connection, and must not hold the window of unacknowledged messages for good.

const PREFIX = 'eg-inflight';
let broker: Mosquitto;
let link: LinkCutter;
let watcher: MqttClient;
const alertIds: string[] = [];

beforeAll(async () => {
  broker = await startMosquitto();
  link = await startLinkCutter(broker.port);
  watcher = await connectWatcher();
});
afterAll(async () => {
  await watcher?.endAsync();
  await link?.close();
  await broker?.close();
});

async function connectWatcher(): Promise<MqttClient> {
  const client = connect(broker.url, { clientId: 'inflight-watcher', protocolVersion: 5, reconnectPeriod: 200 });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  client.on('message', (topic, payload) => {
    if (topic.endsWith('/alerts')) alertIds.push(String((JSON.parse(payload.toString()) as { id: unknown }).id));
  });
  await client.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
  return client;
}

describe('cloud sync, messages in flight when the link dies', () => {
  it('sends them again on the next connection, through a window smaller than them, and loses none', async () => {
    const store = Store.open(tempDir('eg-sync-inflight-'));
    store.upsertDevice({ ...onlineCamera('cam1'), createdAt: 1000 });
    const sync = new CloudSync({
      url: `mqtt://127.0.0.1:${link.port}`,
      prefix: PREFIX,
      gatewayId: 'gw-inflight',
      store,
      control: { run: () => Promise.reject(new Error('no camera')) },
      logger: pino({ level: 'silent' }),
      version: 'test',
      window: 8,
      endGraceMs: 300,
    });
    store.enableOutbox(10_000, () => sync.kick());
    const insert = (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        const id = `alr_inflight${String(i).padStart(3, '0')}`;
        store.insertAlert({ id, deviceId: 'cam1', type: 'motion', message: `m${i}`, createdAt: 2000 + i });
      }
    };
    try {
      sync.start();
      await expect.poll(() => sync.connected).toBe(true);
      await expect.poll(() => store.outboxSize).toBe(0); // the device's record is out and acknowledged
      // Three times: a window's worth goes out and is lost on the way, then the link is reset.
      for (const round of [0, 1, 2]) {
        await expect.poll(() => store.outboxSize).toBe(0);
        link.loseEverything();
        const published = sync.stats.published;
        insert(12 * round, 12);
        await expect.poll(() => sync.stats.published - published).toBe(8);
        link.cut();
        await expect.poll(() => new Set(alertIds).size, { timeout: 20_000 }).toBe(12 * (round + 1));
      }
      // The last round's acknowledgements reach the gateway after the watcher has the messages.
      await expect.poll(() => store.outboxSize).toBe(0);
    } finally {
      await sync.stop();
      store.close();
    }
  });
});
