import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { tempDir } from '../../support/temp-dir.js';
import { openSse, type SseEvent, type SseStream } from '../../support/sse.js';

// GET /v1/events against the started gateway over HTTPS, with its SQLite store: changes made through
// the store (the path the recorder and the camera manager take) and the API arrive as the API's own
// JSON, filtered by scope, resumable with Last-Event-ID within the window (across a restart too),
// bounded in subscribers, backlog and token lifetime.

const ALL = 'alerts:read devices:read recordings:read';
let t: TestGateway;
const open: SseStream[] = [];

beforeAll(async () => {
  t = await startTestGateway({
    events: { heartbeat_s: 1, max_subscribers: 4, window_max_events: 100, max_queue_bytes: 16_384 },
  });
  t.gw.store.upsertDevice(device('cam-1'));
});
afterAll(async () => {
  for (const s of open) s.close();
  await t.stop();
});

const device = (id: string, status: 'online' | 'offline' = 'online') =>
  ({
    id,
    name: `Camera ${id}`,
    type: 'camera',
    status,
    model: 'M',
    manufacturer: 'V',
    firmwareVersion: '1',
    lastSeenAt: Date.now(),
  }) as const;
let alertCount = 0;
function newAlert(message = 'Motion at the door'): string {
  const id = `alr-${++alertCount}`;
  t.gw.store.insertAlert({ id, deviceId: 'cam-1', type: 'motion', message, createdAt: Date.now() });
  return id;
}

async function stream(scope: string, headers: Record<string, string> = {}, gw: TestGateway = t): Promise<SseStream> {
  const s = await openSse(gw.gw.apiUrl, readFileSync(gw.gw.certFile), {
    authorization: `Bearer ${await gw.token(scope)}`,
    ...headers,
  });
  open.push(s);
  return s;
}
const ofType = (type: string, id?: string) => (e: SseEvent) =>
  e.event === type && (id === undefined || (JSON.parse(e.data) as { id: string }).id === id);
const json = (e: SseEvent): unknown => JSON.parse(e.data);
async function get(path: string, scope: string): Promise<unknown> {
  const res = await t.request(path, { headers: await t.auth(scope) });
  expect(res.status).toBe(200);
  return res.json();
}
/** A metric's value from /metrics (0 when absent). */
async function metric(name: string): Promise<number> {
  const line = (await t.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}
async function noSubscribers(): Promise<void> {
  for (const s of open.splice(0)) s.close();
  await expect.poll(() => metric('edge_gateway_event_stream_subscribers')).toBe(0);
}

describe('GET /v1/events', () => {
  it('sends each change as the API answers its record, with increasing ids, to the scopes that may see it', async () => {
    const all = await stream(ALL);
    const alertsOnly = await stream('alerts:read');
    const devicesOnly = await stream('devices:read recordings:write');
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(all.headers['cache-control']).toBe('no-store');

    const alertId = newAlert();
    const read = await t.request(`/v1/alerts/${alertId}/read`, {
      method: 'POST',
      headers: await t.auth('alerts:write'),
    });
    expect(read.status).toBe(200);
    t.gw.store.insertRecording({
      id: 'rec-1',
      deviceId: 'cam-1',
      eventType: 'motion',
      startedAt: Date.now() - 5000,
      endedAt: Date.now(),
      sizeBytes: 10,
      fileName: 'cam-1/rec-1.mp4',
      alertId,
    });
    t.gw.store.setDeviceStatus('cam-1', 'offline', Date.now(), {
      id: 'alr-offline',
      deviceId: 'cam-1',
      type: 'device_offline',
      message: 'Camera cam-1 went offline',
      createdAt: Date.now(),
    });

    const created = await all.next(ofType('alert.created', alertId));
    const readEvent = await all.next(ofType('alert.read', alertId));
    const recording = await all.next(ofType('recording.created', 'rec-1'));
    await all.next(ofType('alert.created', 'alr-offline'));
    const offline = await all.next(ofType('device.status', 'cam-1'));
    // The records as GET answers them (the alert read, the device offline: as they are now).
    expect(json(readEvent)).toEqual(await get(`/v1/alerts/${alertId}`, 'alerts:read'));
    expect(json(created)).toEqual({
      ...((await get(`/v1/alerts/${alertId}`, 'alerts:read')) as object),
      read: false,
      read_at: null,
    });
    expect(json(readEvent)).toMatchObject({ read: true });
    expect(json(recording)).toEqual(await get('/v1/recordings/rec-1', 'recordings:read'));
    expect(json(offline)).toEqual(await get('/v1/devices/cam-1', 'devices:read'));
    expect(json(offline)).toMatchObject({ status: 'offline' });
    const ids = all.events.map((e) => Number(e.id));
    expect(ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1]!))).toBe(true);
    // The offline alert is written with the status change, in its transaction, just before it.
    expect(all.events.map((e) => e.event)).toEqual([
      'alert.created',
      'alert.read',
      'recording.created',
      'alert.created',
      'device.status',
    ]);

    // Scopes: alerts:read sees the alerts only; devices:read the device only (recordings:write is no read scope).
    await alertsOnly.next(ofType('alert.created', 'alr-offline'));
    expect(alertsOnly.events.map((e) => e.event)).toEqual(['alert.created', 'alert.read', 'alert.created']);
    await devicesOnly.next(ofType('device.status'));
    t.gw.store.setDeviceStatus('cam-1', 'online', Date.now());
    await devicesOnly.next((e) => e.event === 'device.status' && (json(e) as { status: string }).status === 'online');
    expect(devicesOnly.events.map((e) => e.event)).toEqual(['device.status', 'device.status']);
    expect(devicesOnly.events[0]?.id).toBe(offline.id);
    expect(await metric('edge_gateway_event_stream_events_sent_total')).toBeGreaterThanOrEqual(10);
    await noSubscribers();
  });

  it('sends alert.updated, the alert as GET answers it, when detection refines it and its clip is linked', async () => {
    const alerts = await stream('alerts:read');
    const recordings = await stream('recordings:read');
    const alertId = newAlert();
    t.gw.store.setAlertType(alertId, 'human', 'Person at the door', Date.now(), [
      { label: 'person', score: 0.9, box: { x: 0.1, y: 0.1, w: 0.4, h: 0.8 } },
    ]);
    const refined = await alerts.next(ofType('alert.updated', alertId));
    expect(json(refined)).toEqual(await get(`/v1/alerts/${alertId}`, 'alerts:read'));
    expect(json(refined)).toMatchObject({ type: 'human', message: 'Person at the door', recording_id: null });

    t.gw.store.saveRecording({
      id: 'rec-up',
      deviceId: 'cam-1',
      eventType: 'human',
      startedAt: Date.now() - 3000,
      endedAt: Date.now(),
      sizeBytes: 10,
      fileName: 'cam-1/rec-up.mp4',
      alertId,
    });
    const linked = await alerts.next(
      (e) =>
        e.event === 'alert.updated' && e.id !== refined.id && (JSON.parse(e.data) as { id: string }).id === alertId,
    );
    expect(json(linked)).toEqual(await get(`/v1/alerts/${alertId}`, 'alerts:read'));
    expect(json(linked)).toMatchObject({ recording_id: 'rec-up', recording_status: 'recorded' });
    // After its recording.created, for a client that has both scopes; not at all without alerts:read.
    expect(Number(linked.id)).toBeGreaterThan(Number(refined.id));
    await recordings.next(ofType('recording.created', 'rec-up'));
    expect(recordings.events.some((e) => e.event === 'alert.updated')).toBe(false);
    await noSubscribers();
  });

  it('refuses a token with none of the read scopes (403), and no token (401)', async () => {
    const s = await stream('alerts:write devices:write');
    expect(s.status).toBe(403);
    expect(s.headers['www-authenticate']).toContain('insufficient_scope');
    expect(JSON.parse(await s.body())).toEqual({
      error: 'insufficient_scope',
      error_description: expect.stringContaining('alerts:read'),
    });
    const none = await openSse(t.gw.apiUrl, readFileSync(t.gw.certFile), {});
    expect(none.status).toBe(401);
    // The token goes in the Authorization header only, never in the URL.
    const inUrl = await openSse(
      t.gw.apiUrl,
      readFileSync(t.gw.certFile),
      {},
      `/v1/events?access_token=${await t.token(ALL)}`,
    );
    expect(inUrl.status).toBe(400);
  });

  it('sends a heartbeat comment while nothing happens', async () => {
    const s = await stream('alerts:read');
    await expect.poll(() => s.comments.includes('heartbeat'), { timeout: 5000 }).toBe(true);
    expect(s.events).toEqual([]);
    await noSubscribers();
  });

  it('resumes after Last-Event-ID with every event since, then goes on live', async () => {
    const first = await stream(ALL);
    const a = newAlert();
    const seen = await first.next(ofType('alert.created', a));
    first.close();
    const missed = [newAlert(), newAlert()];
    const resumed = await stream(ALL, { 'last-event-id': seen.id ?? '' });
    const live = newAlert();
    await resumed.next(ofType('alert.created', live));
    expect(resumed.events.map((e) => (json(e) as { id: string }).id)).toEqual([...missed, live]);
    expect(resumed.events[0]?.id).toBe(String(Number(seen.id) + 1));
    await noSubscribers();
  });

  it('starts with a reset when Last-Event-ID is older than the window, or was never issued here', async () => {
    const s = await stream('alerts:read');
    const old = await s.next(ofType('alert.created', newAlert()));
    s.close();
    for (let i = 0; i < 120; i++) newAlert(); // window_max_events: 100
    const latest = t.gw.store.eventWindow().latest;

    const expired = await stream('alerts:read', { 'last-event-id': old.id ?? '' });
    const reset = await expired.next(ofType('reset'));
    expect(reset.id).toBe(String(latest));
    expect(json(reset)).toEqual({ reason: 'expired', last_event_id: latest });
    for (const [value, reason] of [
      [String(latest + 1000), 'unknown'],
      ['123456789012345678901234567890', 'unknown'],
    ] as const) {
      const unknown = await stream('alerts:read', { 'last-event-id': value });
      expect(json(await unknown.next(ofType('reset')))).toEqual({ reason, last_event_id: latest });
    }
    // After the reset, the stream goes on live from the newest event.
    const next = newAlert();
    const after = await expired.next(ofType('alert.created', next));
    expect(after.id).toBe(String(latest + 1));
    expect(expired.events.map((e) => e.event)).toEqual(['reset', 'alert.created']);
    await noSubscribers();
  });

  it('answers 400 for a Last-Event-ID that is no id, and reads an empty one as none', async () => {
    for (const value of ['abc', '-1', '12a', '1.5', '0x10']) {
      const s = await stream(ALL, { 'last-event-id': value });
      expect(s.status, value).toBe(400);
      expect(JSON.parse(await s.body())).toEqual({
        error: 'invalid_request',
        error_description: expect.stringContaining('Last-Event-ID'),
      });
    }
    const empty = await stream('alerts:read', { 'last-event-id': '' });
    expect(empty.status).toBe(200);
    const a = newAlert();
    await empty.next(ofType('alert.created', a));
    expect(empty.events.map((e) => e.event)).toEqual(['alert.created']);
    await noSubscribers();
  });

  it('serves at most max_subscribers streams: one more gets 503 with Retry-After, counted', async () => {
    const streams = await Promise.all([1, 2, 3, 4].map(() => stream('alerts:read')));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200]);
    expect(await metric('edge_gateway_event_stream_subscribers')).toBe(4);
    const refusedBefore = await metric('edge_gateway_event_stream_refused_total');
    const over = await stream('alerts:read');
    expect(over.status).toBe(503);
    expect(over.headers['retry-after']).toBe('5');
    expect(JSON.parse(await over.body())).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringContaining('event streams'),
    });
    expect(await metric('edge_gateway_event_stream_refused_total')).toBe(refusedBefore + 1);
    // Other requests are still answered meanwhile.
    expect((await t.request('/v1/alerts?limit=1', { headers: await t.auth('alerts:read') })).status).toBe(200);
    streams[0]?.close();
    await expect.poll(() => metric('edge_gateway_event_stream_subscribers')).toBe(3);
    expect((await stream('alerts:read')).status).toBe(200);
    await noSubscribers();
  });

  it('ends the stream when its token expires, saying so', async () => {
    const token = await t.gw.localIssuer!.issue({ subject: 'tester', scope: 'alerts:read', ttlS: 2 });
    const s = await openSse(t.gw.apiUrl, readFileSync(t.gw.certFile), { authorization: `Bearer ${token}` });
    open.push(s);
    expect(s.status).toBe(200);
    const end = await s.next(ofType('end'), 10_000);
    expect(json(end)).toEqual({ reason: 'token_expired' });
    expect(await s.ended).toBe('end');
    expect(await metric('edge_gateway_event_stream_disconnects_total{reason="token_expired"}')).toBe(1);
    await noSubscribers();
  });

  it('tells live streams to start again (reset) when a burst larger than the window was pruned before it was sent', async () => {
    const s = await stream('alerts:read');
    const before = t.gw.store.eventWindow().latest;
    t.gw.store.transaction(() => {
      for (let i = 0; i < 150; i++) newAlert(); // window_max_events: 100
    });
    const reset = await s.next(ofType('reset'));
    expect(json(reset)).toEqual({ reason: 'expired', last_event_id: before + 150 });
    const next = newAlert();
    await s.next(ofType('alert.created', next));
    expect(s.events.map((e) => e.event)).toEqual(['reset', 'alert.created']);
    await noSubscribers();
  });

  it(
    'cuts off a client that does not read, past max_queue_bytes, while one that reads gets every event',
    { timeout: 120_000 },
    async () => {
      // A window large enough that the reader who keeps up never needs a reset.
      const g = await startTestGateway({ events: { max_queue_bytes: 65_536, window_max_events: 1_000_000 } });
      try {
        g.gw.store.upsertDevice(device('cam-1'));
        const slow = await stream('alerts:read', {}, g);
        const fast = await stream('alerts:read', {}, g);
        slow.pause();
        const cutOff = async () => {
          const line = (await g.metrics())
            .split('\n')
            .find((l) => l.startsWith('edge_gateway_event_stream_disconnects_total{reason="slow_consumer"} '));
          return line ? Number(line.split(' ')[1]) : 0;
        };
        // Large events, one at a time: ~20 MB, more than the sockets' buffers between the slow client
        // and the gateway hold (net.ipv4.tcp_rmem and tcp_wmem at most 6 and 4 MB here).
        const message = 'x'.repeat(20_000);
        const n = 1000;
        for (let i = 1; i <= n; i++) {
          g.gw.store.insertAlert({
            id: `flood-${i}`,
            deviceId: 'cam-1',
            type: 'motion',
            message,
            createdAt: Date.now(),
          });
          await new Promise((r) => setImmediate(r));
        }
        await expect.poll(cutOff, { timeout: 15_000 }).toBe(1);
        // Reading again, the slow client finds its stream cut short, without the events past its backlog.
        slow.response.socket.resume();
        expect(await slow.ended).toBe('aborted');
        expect(slow.events.length).toBeLessThan(n);
        await fast.next(ofType('alert.created', `flood-${n}`), 60_000);
        expect(fast.events.map((e) => (json(e) as { id: string }).id)).toEqual(
          Array.from({ length: n }, (_, i) => `flood-${i + 1}`),
        );
      } finally {
        await g.stop();
      }
    },
  );
});

describe('GET /v1/events across a restart', () => {
  it('ends open streams when the gateway stops, and resumes after Last-Event-ID with what happened before', async () => {
    const dataDir = tempDir();
    let g = await startTestGateway({}, { dataDir, keepDataDir: true });
    try {
      g.gw.store.upsertDevice(device('cam-r'));
      const s = await stream(ALL, {}, g);
      g.gw.store.insertAlert({
        id: 'before-1',
        deviceId: 'cam-r',
        type: 'human',
        message: 'Person',
        createdAt: Date.now(),
      });
      const seen = await s.next(ofType('alert.created', 'before-1'));
      // Unseen by this client: it lost its connection first.
      s.close();
      g.gw.store.insertAlert({
        id: 'before-2',
        deviceId: 'cam-r',
        type: 'vehicle',
        message: 'Car',
        createdAt: Date.now(),
      });
      const other = await stream(ALL, {}, g);
      await g.stop();
      expect(json(await other.next(ofType('end')))).toEqual({ reason: 'gateway_stopping' });
      expect(await other.ended).toBe('end');

      g = await startTestGateway({}, { dataDir, keepDataDir: true });
      const resumed = await stream(ALL, { 'last-event-id': seen.id ?? '' }, g);
      await resumed.next(ofType('alert.created', 'before-2'));
      g.gw.store.insertAlert({
        id: 'after',
        deviceId: 'cam-r',
        type: 'motion',
        message: 'Motion',
        createdAt: Date.now(),
      });
      await resumed.next(ofType('alert.created', 'after'));
      expect(resumed.events.map((e) => [Number(e.id) - Number(seen.id), (json(e) as { id: string }).id])).toEqual([
        [1, 'before-2'],
        [2, 'after'],
      ]);
    } finally {
      await g.stop();
    }
  });
});
