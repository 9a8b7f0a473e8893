import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { openSse, type SseEvent, type SseStream } from '../../support/sse.js';

// GET /v1/events end to end with a simulated camera (ONVIF + H.264 over RTSP): its adoption, an
// ONVIF motion event recorded by the recorder (alert, then clip), marking the alert read through the
// API, and the camera going away (offline, with its alert) each arrive as the API's own JSON.

let fleet: Fleet;
let t: TestGateway;
let events: SseStream;

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'ev-secret',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [
      { name: 'Front door', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'ev-secret' },
    ],
    recording: { pre_roll_s: 1, post_roll_s: 1 },
    onvif: { health_interval_s: 1 },
  });
  // From the first event on (id 0): the camera's adoption may come before the stream opens.
  events = await openSse(t.gw.apiUrl, readFileSync(t.gw.certFile), {
    authorization: `Bearer ${await t.token('alerts:read devices:read recordings:read')}`,
    'last-event-id': '0',
  });
});
afterAll(async () => {
  events?.close();
  await t?.stop();
  await fleet?.stop();
});

const data = (e: SseEvent) => JSON.parse(e.data) as Record<string, unknown>;
const isEvent =
  (type: string, fields: Record<string, unknown> = {}) =>
  (e: SseEvent) =>
    e.event === type && Object.entries(fields).every(([k, v]) => data(e)[k] === v);
async function get(path: string, scope: string): Promise<Record<string, unknown>> {
  const res = await t.request(path, { headers: await t.auth(scope) });
  expect(res.status).toBe(200);
  return res.json() as Record<string, unknown>;
}

describe('GET /v1/events with a simulated camera', () => {
  it(
    'tells of the camera coming online, its event and clip, the alert read, and the camera going offline',
    { timeout: 90_000 },
    async () => {
      const online = await events.next(isEvent('device.status', { status: 'online' }), 20_000);
      const deviceId = String(data(online).id);
      expect(data(online)).toMatchObject({ name: 'Front door', type: 'camera' });

      // The recorder's ring must hold a little footage before the event.
      await new Promise((r) => setTimeout(r, 3000));
      const camera = fleet.cameras[0]!;
      camera.trigger('motion', true);
      await new Promise((r) => setTimeout(r, 1500));
      camera.trigger('motion', false);
      const created = await events.next(isEvent('alert.created', { device_id: deviceId, type: 'motion' }), 20_000);
      const alertId = String(data(created).id);
      const clip = await events.next(isEvent('recording.created', { alert_id: alertId }), 30_000);
      expect(data(clip)).toEqual(await get(`/v1/recordings/${String(data(clip).id)}`, 'recordings:read'));
      expect(data(created)).toMatchObject({ read: false, recording_status: 'pending' });

      const read = await t.request(`/v1/alerts/${alertId}/read`, {
        method: 'POST',
        headers: await t.auth('alerts:write'),
      });
      expect(read.status).toBe(200);
      const readEvent = await events.next(isEvent('alert.read', { id: alertId }));
      expect(data(readEvent)).toEqual(read.json());
      expect(data(readEvent)).toEqual(await get(`/v1/alerts/${alertId}`, 'alerts:read'));

      await camera.stop(); // the camera's ONVIF service goes away: the health check marks it offline
      // (The device was first written offline, before its adoption: the event wanted is a later one.)
      const offline = await events.next(
        (e) => isEvent('device.status', { id: deviceId, status: 'offline' })(e) && Number(e.id) > Number(readEvent.id),
        20_000,
      );
      expect(data(offline)).toEqual(await get(`/v1/devices/${deviceId}`, 'devices:read'));
      const offlineAlert = await events.next(isEvent('alert.created', { device_id: deviceId, type: 'device_offline' }));
      expect(data(offlineAlert)).toEqual(await get(`/v1/alerts/${String(data(offlineAlert).id)}`, 'alerts:read'));

      const ids = events.events.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
    },
  );
});
