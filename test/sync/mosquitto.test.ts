import { connect as mqttConnect, connectAsync, type IConnackPacket, type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki, startMosquitto, type Mosquitto, type TestPki } from '../support/mosquitto.js';

// The test broker helper against the real mqtt client: what the sync tests build on.

const clients: MqttClient[] = [];

async function connect(url: string, opts: IClientOptions = {}): Promise<MqttClient> {
  // No automatic reconnects: a refused or dropped connection must show in the test, not be retried.
  const client = await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
  clients.push(client);
  return client;
}

/**
 * A client connecting now, with its CONNACK to come: handlers attached in the same tick see every
 * message, including a persistent session's queue that the broker sends right after CONNACK.
 */
function connectWithListeners(
  url: string,
  opts: IClientOptions,
): { client: MqttClient; connack: Promise<IConnackPacket> } {
  const client = mqttConnect(url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
  clients.push(client);
  const connack = new Promise<IConnackPacket>((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  return { client, connack };
}

/** Resolves with the first `n` messages the client receives. */
function collect(client: MqttClient, n: number): Promise<Array<{ topic: string; payload: string; qos: number }>> {
  return new Promise((resolve) => {
    const got: Array<{ topic: string; payload: string; qos: number }> = [];
    const onMessage = (topic: string, payload: Buffer, packet: { qos: number }) => {
      got.push({ topic, payload: payload.toString('utf8'), qos: packet.qos });
      if (got.length === n) {
        client.off('message', onMessage);
        resolve(got);
      }
    };
    client.on('message', onMessage);
  });
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
});

describe('test Mosquitto broker', () => {
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await startMosquitto();
  });
  afterAll(async () => {
    await broker?.close();
  });

  it('listens on a loopback port of its own, not the system broker', () => {
    expect(broker.url).toBe(`mqtt://127.0.0.1:${broker.port}`);
    expect(broker.port).not.toBe(1883);
    expect(broker.running).toBe(true);
  });

  it('carries QoS 1 publish/subscribe', async () => {
    const sub = await connect(broker.url, { protocolVersion: 5 });
    await sub.subscribeAsync('t/+/x', { qos: 1 });
    const arriving = collect(sub, 3);
    const pub = await connect(broker.url, { protocolVersion: 4 });
    for (const i of [1, 2, 3]) await pub.publishAsync(`t/${i}/x`, `m${i}`, { qos: 1 });
    const got = await arriving;
    expect(got).toEqual([1, 2, 3].map((i) => ({ topic: `t/${i}/x`, payload: `m${i}`, qos: 1 })));
  });

  it('two brokers at once have their own ports', async () => {
    const other = await startMosquitto();
    try {
      expect(other.port).not.toBe(broker.port);
      const c = await connect(other.url);
      expect(c.connected).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe('test Mosquitto broker with TLS and client certificates', () => {
  let pki: TestPki;
  let stranger: TestPki;
  let broker: Mosquitto;
  beforeAll(async () => {
    [pki, stranger] = await Promise.all([makeTestPki({ clientName: 'gw_test' }), makeTestPki()]);
    broker = await startMosquitto({
      tls: { ca: pki.caCert, cert: pki.serverCert, key: pki.serverKey, requireClientCert: true },
    });
  });
  afterAll(async () => {
    await broker?.close();
    pki?.remove();
    stranger?.remove();
  });

  it('accepts a client with a certificate from the test CA and carries messages', async () => {
    expect(broker.url).toBe(`mqtts://127.0.0.1:${broker.port}`);
    const client = await connect(broker.url, { ca: pki.ca, cert: pki.cert, key: pki.key, protocolVersion: 5 });
    await client.subscribeAsync('secure/topic', { qos: 1 });
    const arriving = collect(client, 1);
    await client.publishAsync('secure/topic', 'hello', { qos: 1 });
    expect((await arriving)[0]?.payload).toBe('hello');
  });

  it('refuses a client without a certificate', async () => {
    await expect(connect(broker.url, { ca: pki.ca, protocolVersion: 5 })).rejects.toThrow(/certificate required/i);
  });

  it('refuses a client whose certificate another CA signed', async () => {
    await expect(
      connect(broker.url, { ca: pki.ca, cert: stranger.cert, key: stranger.key, protocolVersion: 5 }),
    ).rejects.toThrow(/unknown ca/i);
  });

  it('is refused by a client that does not trust the server certificate', async () => {
    await expect(
      connect(broker.url, { ca: stranger.ca, cert: pki.cert, key: pki.key, protocolVersion: 5 }),
    ).rejects.toThrow(/self-signed certificate in certificate chain/i);
  });

  it('without requireClientCert, takes TLS clients that have no certificate', async () => {
    const open = await startMosquitto({
      tls: { ca: pki.caCert, cert: pki.serverCert, key: pki.serverKey, requireClientCert: false },
    });
    try {
      const client = await connect(open.url, { ca: pki.ca, protocolVersion: 5 });
      expect(client.connected).toBe(true);
    } finally {
      await open.close();
    }
  });
});

describe('test Mosquitto broker restarts', () => {
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await startMosquitto({ persistence: true });
  });
  afterAll(async () => {
    await broker?.close();
  });

  // A subscriber with a persistent session goes away; messages for it are queued; the broker restarts.
  for (const protocolVersion of [5, 4] as const) {
    it(`keeps a persistent session's queued QoS 1 messages across a restart (MQTT ${protocolVersion === 5 ? '5' : '3.1.1'})`, async () => {
      const clientId = `cloud-${protocolVersion}`;
      const session: IClientOptions = {
        clientId,
        clean: false,
        protocolVersion,
        // MQTT 5 ends a session when its connection closes unless it asks for an expiry.
        ...(protocolVersion === 5 ? { properties: { sessionExpiryInterval: 3600 } } : {}),
      };
      const first = await connect(broker.url, session);
      await first.subscribeAsync(`q/${clientId}`, { qos: 1 });
      await first.endAsync();

      const pub = await connect(broker.url);
      for (let i = 0; i < 5; i++) await pub.publishAsync(`q/${clientId}`, `m${i}`, { qos: 1 });
      await pub.endAsync();

      const port = broker.port;
      await broker.restart();
      expect(broker.port).toBe(port);

      const again = connectWithListeners(broker.url, session);
      const arriving = collect(again.client, 5);
      expect((await again.connack).sessionPresent).toBe(true);
      const got = await arriving;
      expect(got.map((m) => m.payload)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
      expect(got.every((m) => m.qos === 1)).toBe(true);
    });
  }

  it("queues more than Mosquitto's default 1000 messages for an absent subscriber, in order, across a restart", async () => {
    const session: IClientOptions = {
      clientId: 'many',
      clean: false,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 3600 },
    };
    const first = await connect(broker.url, session);
    await first.subscribeAsync('many/t', { qos: 1 });
    await first.endAsync();
    const pub = await connect(broker.url);
    const n = 1500;
    await Promise.all(Array.from({ length: n }, (_, i) => pub.publishAsync('many/t', String(i), { qos: 1 })));
    await pub.endAsync();
    await broker.restart();
    const again = connectWithListeners(broker.url, session);
    const got = await collect(again.client, n);
    expect(got.map((m) => Number(m.payload))).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('stops and is unreachable, then restarts on the same port', async () => {
    await broker.stop();
    expect(broker.running).toBe(false);
    await expect(connect(broker.url)).rejects.toThrow(/ECONNREFUSED/);
    await broker.restart();
    expect(broker.running).toBe(true);
    const c = await connect(broker.url);
    expect(c.connected).toBe(true);
  });

  it('without persistence a restart forgets sessions', async () => {
    const volatile = await startMosquitto();
    try {
      const session: IClientOptions = {
        clientId: 'forgetful',
        clean: false,
        protocolVersion: 5,
        properties: { sessionExpiryInterval: 3600 },
      };
      const first = await connect(volatile.url, session);
      await first.subscribeAsync('v/t', { qos: 1 });
      await first.endAsync();
      await volatile.restart();
      const again = connectWithListeners(volatile.url, session);
      // CONNACK's session-present flag: the broker has nothing for this client id.
      expect((await again.connack).sessionPresent).toBe(false);
      const pub = await connect(volatile.url);
      const nothing = new Promise<string>((resolve) => {
        again.client.once('message', () => resolve('message'));
        setTimeout(() => resolve('none'), 300);
      });
      await pub.publishAsync('v/t', 'x', { qos: 1 });
      expect(await nothing).toBe('none');
    } finally {
      await volatile.close();
    }
  });
});
