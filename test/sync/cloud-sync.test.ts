import { createRequire } from 'node:module';
import { connect, type MqttClient } from 'mqtt';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { makeTestPki, startMosquitto, startMqtt311Front, type Mosquitto, type TestPki } from '../support/mosquitto.js';

// The cloud link against a real Mosquitto: what arrives on each topic, commands in and results out,
// an outage with a backlog, a restart of the gateway during it, and TLS with a client certificate.

const PREFIX = 'eg-test';
let broker: Mosquitto;
let fleet: Fleet;
let t: TestGateway;
let deviceId = '';

interface Received {
  topic: string;
  body: Record<string, unknown> | string;
  retain: boolean;
}

/** A cloud-side subscriber with a persistent session (it gets what was sent while it was away). */
async function subscriber(
  url: string,
  clientId: string,
  extra: Record<string, unknown> = {},
): Promise<{ client: MqttClient; got: Received[] }> {
  const got: Received[] = [];
  const client = connect(url, {
    clientId,
    clean: false,
    protocolVersion: 5,
    properties: { sessionExpiryInterval: 3600 },
    reconnectPeriod: 200,
    ...extra,
  });
  client.on('message', (topic, payload, packet) => {
    const text = payload.toString();
    let body: Record<string, unknown> | string = text;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // plain payloads: online/offline, ON/OFF
    }
    got.push({ topic, body, retain: packet.retain });
  });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  await client.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
  return { client, got };
}

const gatewayConfig = (url: string, extra: Record<string, unknown> = {}) => ({
  sync: { mqtt: { url, topic_prefix: PREFIX, ...extra } },
});

beforeAll(async () => {
  broker = await startMosquitto({ persistence: true });
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'sync-pw',
    discovery: null,
    rtspPort: null,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    ...gatewayConfig(broker.url),
    cameras: [{ name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'sync-pw' }],
  });
  deviceId = await firstOnlineDevice(t);
});
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
  await broker?.close();
});

describe('cloud sync over MQTT', () => {
  it('publishes status, devices, alerts and recordings in the API shapes, each with a message_id', async () => {
    const { client, got } = await subscriber(broker.url, 'cloud-shapes');
    try {
      const gid = t.gw.id;
      await expect
        .poll(() => got.find((m) => m.topic === `${PREFIX}/${gid}/status`)?.body, { timeout: 10_000 })
        .toBe('online');
      await expect
        .poll(() => got.some((m) => m.topic === `${PREFIX}/${gid}/devices/${deviceId}`), { timeout: 10_000 })
        .toBe(true);
      // The gateway's client writes its packets' numbers as it goes: mqtt-packet's table of 65,536
      // two-byte buffers (7 MB of heap) is never built (the gateway's client is made before any here).
      const numbers = createRequire(import.meta.url)('mqtt-packet/numbers.js') as { cache: Record<number, Buffer> };
      expect(Object.keys(numbers.cache)).toHaveLength(0);
      const deviceMsg = got.find((m) => m.topic === `${PREFIX}/${gid}/devices/${deviceId}`)!;
      const apiDevice = (
        await t.request(`/v1/devices/${deviceId}`, { headers: await t.auth('devices:read') })
      ).json() as Record<string, unknown>;
      expect(deviceMsg.body).toMatchObject({ ...apiDevice, last_seen_at: expect.any(String) });
      expect((deviceMsg.body as Record<string, unknown>).message_id).toMatch(/^msg_/);
      expect(deviceMsg.retain).toBe(true);

      const store = t.gw.store;
      store.insertAlert({
        id: 'alr_sync1',
        deviceId,
        type: 'human',
        message: 'Person detected by Porch',
        createdAt: Date.now(),
      });
      store.saveRecording({
        id: 'rec_sync1',
        deviceId,
        eventType: 'human',
        startedAt: Date.now() - 9000,
        endedAt: Date.now(),
        sizeBytes: 1234,
        fileName: `${deviceId}/rec_sync1.mp4`,
        alertId: 'alr_sync1',
      });
      await expect
        .poll(() => got.filter((m) => m.topic === `${PREFIX}/${gid}/alerts`).length, { timeout: 10_000 })
        .toBe(2); // created, then linked
      await expect
        .poll(() => got.filter((m) => m.topic === `${PREFIX}/${gid}/recordings`).length, { timeout: 10_000 })
        .toBe(1);
      const [created, linked] = got
        .filter((m) => m.topic === `${PREFIX}/${gid}/alerts`)
        .map((m) => m.body as Record<string, unknown>);
      const apiAlert = (
        await t.request('/v1/alerts/alr_sync1', { headers: await t.auth('alerts:read') })
      ).json() as Record<string, unknown>;
      expect(linked).toEqual({ ...apiAlert, message_id: expect.stringMatching(/^msg_/) });
      expect(created).toMatchObject({ id: 'alr_sync1', recording_id: null });
      expect(created!.message_id).not.toBe(linked!.message_id);
      const recording = got.find((m) => m.topic === `${PREFIX}/${gid}/recordings`)!.body;
      const apiRecording = (
        await t.request('/v1/recordings/rec_sync1', { headers: await t.auth('recordings:read') })
      ).json() as Record<string, unknown>;
      // No playback ticket leaves the box: the API's playback_url is for apps on its own origin.
      expect(recording).toEqual({
        ...apiRecording,
        playback_url: null,
        playback_expires_at: null,
        message_id: expect.stringMatching(/^msg_/),
      });
      await expect.poll(() => t.gw.store.outboxSize, { timeout: 5000 }).toBe(0); // all acknowledged, all deleted
    } finally {
      await client.endAsync();
    }
  });

  it("sends a camera's settings changed in the app as a device message (never a password), and clears a removed camera's", async () => {
    const { client, got } = await subscriber(broker.url, 'cloud-settings');
    try {
      const gid = t.gw.id;
      const headers = await t.auth('devices:read devices:write');
      const changed = await t.request(`/v1/devices/${deviceId}`, {
        method: 'PATCH',
        headers,
        body: {
          detection: 'off',
          zones: [
            {
              name: 'door',
              polygon: [
                [0, 0],
                [1, 0],
                [0, 1],
              ],
            },
          ],
        },
      });
      expect(changed.status, changed.text).toBe(200);
      const settingsOf = () =>
        got
          .filter((m) => m.topic === `${PREFIX}/${gid}/devices/${deviceId}` && typeof m.body === 'object')
          .map((m) => (m.body as { settings: Record<string, unknown> }).settings)
          .at(-1);
      await expect.poll(() => settingsOf()?.detection, { timeout: 10_000 }).toBe('off');
      expect(settingsOf()).toMatchObject({ has_password: true, source: { detection: 'app', account: 'file' } });

      const added = await t.request('/v1/devices', {
        method: 'POST',
        headers,
        body: { address: '127.0.0.1:9', username: 'admin', password: 'never-published' },
      });
      expect(added.status, added.text).toBe(201);
      const id = (added.json() as { id: string }).id;
      const topic = `${PREFIX}/${gid}/devices/${id}`;
      await expect.poll(() => got.some((m) => m.topic === topic), { timeout: 10_000 }).toBe(true);
      expect((await t.request(`/v1/devices/${id}`, { method: 'DELETE', headers })).status).toBe(204);
      await expect.poll(() => got.filter((m) => m.topic === topic).at(-1)?.body, { timeout: 10_000 }).toBe('');
      expect(JSON.stringify(got)).not.toContain('never-published');
      expect(JSON.stringify(got)).not.toContain('sync-pw');
    } finally {
      await client.endAsync();
    }
  });

  it('carries out a command once per id, and answers bad commands with an error result', async () => {
    const { client, got } = await subscriber(broker.url, 'cloud-commands');
    const gid = t.gw.id;
    const results = () =>
      got.filter((m) => m.topic.endsWith('/control/result')).map((m) => m.body as Record<string, unknown>);
    const send = (device: string, payload: string | Buffer) =>
      client.publishAsync(`${PREFIX}/${gid}/devices/${device}/control`, payload, { qos: 1 });
    try {
      await send(deviceId, JSON.stringify({ id: 'cmd-1', action: 'sync_time' }));
      await expect.poll(() => results().filter((r) => r.id === 'cmd-1').length, { timeout: 15_000 }).toBe(1);
      const first = results().find((r) => r.id === 'cmd-1')!;
      expect(first).toMatchObject({
        id: 'cmd-1',
        device_id: deviceId,
        action: 'sync_time',
        status: 'succeeded',
        error: null,
        message_id: expect.stringMatching(/^msg_/),
      });
      // The same id again: the stored result once more, not a second run (same completion time).
      await send(deviceId, JSON.stringify({ id: 'cmd-1', action: 'sync_time' }));
      await expect.poll(() => results().filter((r) => r.id === 'cmd-1').length, { timeout: 10_000 }).toBe(2);
      const again = results().filter((r) => r.id === 'cmd-1')[1]!;
      expect(again.completed_at).toBe(first.completed_at);

      await send(deviceId, '{not json');
      await send(deviceId, JSON.stringify({ id: 'cmd-2', action: 'self_destruct' }));
      await send(deviceId, Buffer.alloc(100_000, 0x20));
      await send('dev_nobody', JSON.stringify({ id: 'cmd-3', action: 'reboot' }));
      await send(deviceId, JSON.stringify({ id: 'cmd 4!', action: 'reboot' }));
      await expect.poll(() => results().length, { timeout: 10_000 }).toBe(7);
      expect(
        results()
          .slice(2)
          .map((r) => [r.id, r.status, r.error]),
      ).toEqual([
        [null, 'failed', 'invalid_json'],
        ['cmd-2', 'failed', 'unknown_action'],
        [null, 'failed', 'payload_too_large'],
        ['cmd-3', 'failed', 'unknown_device'],
        [null, 'failed', 'invalid_command'],
      ]);
      // Still serving.
      expect((await t.request('/healthz')).status).toBe(200);
    } finally {
      await client.endAsync();
    }
  });

  it(
    'loses nothing in an outage: 1,000 alerts made while the broker is down arrive in order, once each',
    { timeout: 90_000 },
    async () => {
      const { client, got } = await subscriber(broker.url, 'cloud-outage');
      const gid = t.gw.id;
      try {
        await broker.stop();
        const store = t.gw.store;
        const now = Date.now();
        for (let i = 0; i < 1000; i++)
          store.insertAlert({
            id: `alr_out${String(i).padStart(4, '0')}`,
            deviceId,
            type: 'motion',
            message: `m${i}`,
            createdAt: now + i,
          });
        expect(store.outboxSize).toBeGreaterThanOrEqual(1000);
        await broker.restart();
        const alerts = () =>
          got.filter(
            (m) =>
              m.topic === `${PREFIX}/${gid}/alerts` &&
              String((m.body as Record<string, unknown>).id).startsWith('alr_out'),
          );
        await expect
          .poll(() => new Set(alerts().map((m) => (m.body as Record<string, unknown>).message_id)).size, {
            timeout: 60_000,
            interval: 250,
          })
          .toBe(1000);
        const ids = alerts().map((m) => (m.body as Record<string, unknown>).id as string);
        const firstSeen = ids.filter((id, i) => ids.indexOf(id) === i);
        expect(firstSeen).toEqual([...firstSeen].sort()); // in order
        expect(firstSeen).toHaveLength(1000);
      } finally {
        await client.endAsync();
      }
    },
  );

  it('keeps the backlog across a gateway restart during the outage', { timeout: 90_000 }, async () => {
    const { client, got } = await subscriber(broker.url, 'cloud-restart');
    const dataDir = tempDir('eg-sync-restart-');
    let g = await startTestGateway(gatewayConfig(broker.url), { dataDir, keepDataDir: true });
    try {
      await expect.poll(() => g.gw.store.outboxSize, { timeout: 10_000 }).toBe(0);
      await broker.stop();
      g.gw.store.upsertDevice({
        id: 'dev_r',
        name: 'R',
        type: 'camera',
        status: 'online',
        model: null,
        manufacturer: null,
        firmwareVersion: null,
        lastSeenAt: Date.now(),
      });
      for (let i = 0; i < 300; i++)
        g.gw.store.insertAlert({
          id: `alr_rs${String(i).padStart(3, '0')}`,
          deviceId: 'dev_r',
          type: 'motion',
          message: 'm',
          createdAt: Date.now(),
        });
      await g.stop(); // the daemon goes away mid-outage (SIGKILL is the daemon test's; the store is synchronous, so nothing is pending)
      g = await startTestGateway(gatewayConfig(broker.url), { dataDir });
      expect(g.gw.store.outboxSize).toBe(301);
      await broker.restart();
      const gid = g.gw.id;
      const alerts = () =>
        got
          .filter((m) => m.topic === `${PREFIX}/${gid}/alerts`)
          .map((m) => (m.body as Record<string, unknown>).id as string);
      await expect.poll(() => new Set(alerts()).size, { timeout: 60_000, interval: 250 }).toBe(300);
      await expect.poll(() => g.gw.store.outboxSize, { timeout: 10_000 }).toBe(0);
    } finally {
      await g.stop();
      await client.endAsync();
    }
  });
});

describe('cloud sync with an MQTT 3.1.1 broker, and Home Assistant discovery', () => {
  it('falls back to MQTT 3.1.1 when the broker refuses 5, and publishes discovery configs and states', async () => {
    const front = await startMqtt311Front({ host: broker.host, port: broker.port });
    const { client, got } = await subscriber(broker.url, 'cloud-311');
    await client.subscribeAsync('homeassistant/#', { qos: 1 });
    const g = await startTestGateway({
      ...gatewayConfig(front.url, { home_assistant: true }),
      cameras: [
        { name: 'Yard', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'sync-pw' },
      ],
    });
    try {
      await expect
        .poll(() => got.find((m) => m.topic === `${PREFIX}/${g.gw.id}/status`)?.body, { timeout: 15_000 })
        .toBe('online');
      expect(front.refused()).toBeGreaterThanOrEqual(1); // it tried 5 first
      const camera = await firstOnlineDevice(g);
      // The camera's sensors: motion, human, vehicle and connectivity, each a retained config …
      const configs = () =>
        got
          .filter((m) => m.topic.startsWith('homeassistant/binary_sensor/') && m.topic.endsWith('/config'))
          .map((m) => m.body as Record<string, unknown>);
      const cameraConfigs = () => configs().filter((c) => String(c.state_topic).includes(`/devices/${camera}/`));
      await expect.poll(() => new Set(cameraConfigs().map((c) => c.unique_id)).size, { timeout: 10_000 }).toBe(4);
      for (const c of cameraConfigs())
        expect(c).toMatchObject({
          unique_id: expect.any(String),
          state_topic: expect.stringContaining(`${PREFIX}/${g.gw.id}/devices/${camera}/state/`),
          device: expect.objectContaining({ name: 'Yard' }),
        });
      // … and the states follow the camera: online, and a person seen.
      const state = (kind: string) =>
        got.filter((m) => m.topic === `${PREFIX}/${g.gw.id}/devices/${camera}/state/${kind}`).at(-1)?.body;
      await expect.poll(() => state('connectivity'), { timeout: 10_000 }).toBe('ON');
      fleet.cameras[0]!.trigger('human', true);
      await expect.poll(() => state('human'), { timeout: 10_000 }).toBe('ON');
      fleet.cameras[0]!.trigger('human', false);
      await expect.poll(() => state('human'), { timeout: 10_000 }).toBe('OFF');
    } finally {
      await g.stop();
      await client.endAsync();
      await front.close();
    }
  });
});

describe('cloud sync with a broker account', () => {
  it('logs in with a password sealed by this data_dir (edge-gateway seal), never with a wrong one', async () => {
    const secured = await startMosquitto({ users: { gw: 'mqtt-s3cret' } });
    const { client, got } = await subscriber(secured.url, 'cloud-account', { username: 'gw', password: 'mqtt-s3cret' });
    const dataDir = tempDir('eg-sync-seal-');
    const { SecretBox, sealConfigSecret } = await import('../../src/platform/secret-box.js');
    const sealed = sealConfigSecret(SecretBox.openInDir(dataDir), 'mqtt-s3cret');
    expect(sealed).toMatch(/^sealed:/);
    expect(sealed).not.toContain('mqtt-s3cret');
    const g = await startTestGateway(gatewayConfig(secured.url, { username: 'gw', password: sealed }), { dataDir });
    try {
      await expect
        .poll(() => got.find((m) => m.topic === `${PREFIX}/${g.gw.id}/status`)?.body, { timeout: 10_000 })
        .toBe('online');
    } finally {
      await g.stop();
      await client.endAsync();
    }
    // Sealed with another data_dir's key: the start stops with one config line.
    await expect(startTestGateway(gatewayConfig(secured.url, { username: 'gw', password: sealed }))).rejects.toThrow(
      /^config: sync\.mqtt\.password: .*edge-gateway seal/,
    );
    // A wrong password: the gateway runs (sync never holds it up) but is never connected.
    const wrong = await startTestGateway(gatewayConfig(secured.url, { username: 'gw', password: 'nope' }));
    try {
      await new Promise((r) => setTimeout(r, 1500));
      expect((await wrong.request('/healthz')).status).toBe(200);
      expect(await wrong.metrics()).toMatch(/^edge_gateway_sync_connected 0$/m);
    } finally {
      await wrong.stop();
      await secured.close();
    }
  });
});

describe('a full outbox', () => {
  it('gives up the least important messages, logs it and counts it in /metrics', async () => {
    const logLines: string[] = [];
    // No broker at all: everything stays in the outbox.
    const g = await startTestGateway(
      { sync: { mqtt: { url: 'mqtt://127.0.0.1:9', topic_prefix: PREFIX }, outbox: { max_rows: 100 } } },
      { logLines },
    );
    try {
      g.gw.store.upsertDevice({
        id: 'dev_full',
        name: 'F',
        type: 'camera',
        status: 'online',
        model: null,
        manufacturer: null,
        firmwareVersion: null,
        lastSeenAt: Date.now(),
      });
      for (let i = 0; i < 150; i++)
        g.gw.store.insertAlert({
          id: `alr_f${i}`,
          deviceId: 'dev_full',
          type: 'motion',
          message: 'm',
          createdAt: Date.now(),
        });
      expect(g.gw.store.outboxSize).toBeLessThanOrEqual(100);
      await expect.poll(() => logLines.some((l) => l.includes('cloud outbox full')), { timeout: 5000 }).toBe(true);
      const metrics = await g.metrics();
      expect(metrics).toMatch(/^edge_gateway_sync_outbox_evicted_total\{[^}]*kind="device"[^}]*\} 1$/m);
      expect(metrics).toMatch(/^edge_gateway_sync_outbox_evicted_total\{[^}]*kind="alert"[^}]*\} [1-9]\d*$/m);
      expect(metrics).toMatch(/^edge_gateway_sync_outbox_messages (\d+)$/m);
    } finally {
      await g.stop();
    }
  });
});

describe('cloud sync over TLS with a client certificate', () => {
  let pki: TestPki;
  let tlsBroker: Mosquitto;
  beforeAll(async () => {
    pki = await makeTestPki();
    tlsBroker = await startMosquitto({
      tls: { ca: pki.caCert, cert: pki.serverCert, key: pki.serverKey, requireClientCert: true },
    });
  });
  afterAll(async () => {
    await tlsBroker?.close();
    pki?.remove();
  });

  it('connects with the configured CA, certificate and key, and publishes', async () => {
    const { client, got } = await subscriber(tlsBroker.url, 'cloud-tls', { ca: pki.ca, cert: pki.cert, key: pki.key });
    const g = await startTestGateway(
      gatewayConfig(tlsBroker.url, { ca_file: pki.caCert, cert_file: pki.clientCert, key_file: pki.clientKey }),
    );
    try {
      await expect
        .poll(() => got.find((m) => m.topic === `${PREFIX}/${g.gw.id}/status`)?.body, { timeout: 10_000 })
        .toBe('online');
    } finally {
      await g.stop();
    }
    // A clean stop says offline (retained), as the last will would after a crash.
    await expect
      .poll(() => got.filter((m) => m.topic === `${PREFIX}/${g.gw.id}/status`).at(-1)?.body, { timeout: 10_000 })
      .toBe('offline');
    await client.endAsync();
  });

  it('refuses to start with a certificate file that does not exist (one config line)', async () => {
    await expect(startTestGateway(gatewayConfig(tlsBroker.url, { ca_file: '/nonexistent/ca.pem' }))).rejects.toThrow(
      /^config: sync\.mqtt\.ca_file: cannot read \/nonexistent\/ca\.pem/,
    );
  });
});
