import { createServer, type Server, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudSync } from '../../src/sync/cloud-sync.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

// A broker that lets the gateway in (CONNACK) and then acknowledges nothing: the messages the
// gateway sends stay in flight, as those sent just before a broker outage do.
let broker: Server;
let port = 0;
const sockets = new Set<Socket>();
let received = 0;

beforeAll(async () => {
  broker = createServer((socket) => {
    sockets.add(socket);
    let first = true;
    socket.on('data', (bytes) => {
      received += bytes.length;
      // The first packet is CONNECT; the answer is an MQTT 5 CONNACK: success, no properties.
      if (first) socket.write(Buffer.from([0x20, 0x03, 0x00, 0x00, 0x00]));
      first = false;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => broker.listen(0, '127.0.0.1', r));
  port = (broker.address() as { port: number }).port;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => broker.close(r));
});

describe('cloud sync stop', () => {
  it('ends even when the broker never acknowledges what is in flight', async () => {
    const store = Store.open(tempDir('eg-sync-stop-'));
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (l: string) => void warnings.push((JSON.parse(l) as { msg: string }).msg) },
    );
    const sync = new CloudSync({
      url: `mqtt://127.0.0.1:${port}`,
      prefix: 'edge-gateway',
      gatewayId: 'gw-stop',
      store,
      control: { run: () => Promise.reject(new Error('no camera')) },
      logger,
      version: 'test',
      endGraceMs: 300,
    });
    try {
      sync.start();
      await expect.poll(() => sync.connected).toBe(true);
      // The status message and the command subscription are out, and never acknowledged.
      await expect.poll(() => received).toBeGreaterThan(60);
      await sync.stop();
      await expect.poll(() => sockets.size).toBe(0); // the link is closed
      expect(warnings.some((w) => w.includes('were not acknowledged in time'))).toBe(true);
    } finally {
      store.close();
    }
  });
});
