import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventType } from '../../../src/domain/types.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

let t: TestGateway;
let clip: Buffer;
const day = (d: number, h: number, m = 0) => new Date(2026, 10, d, h, m).getTime(); // local time, like the API's bare dates

beforeAll(async () => {
  t = await startTestGateway();
  const store = t.gw.store;
  store.upsertDevice({
    id: 'cam-a',
    name: 'Front door',
    type: 'camera',
    status: 'online',
    model: 'X',
    manufacturer: 'Y',
    firmwareVersion: '1',
    lastSeenAt: Date.now(),
  });
  store.upsertDevice({
    id: 'cam-b',
    name: 'Garage',
    type: 'camera',
    status: 'online',
    model: 'X',
    manufacturer: 'Y',
    firmwareVersion: '1',
    lastSeenAt: Date.now(),
  });
  const storage = path.join(t.dataDir, 'recordings');
  mkdirSync(path.join(storage, 'cam-a'), { recursive: true });
  // Deterministic bytes so a range can be checked against the file.
  clip = Buffer.alloc(300_000);
  for (let i = 0; i < clip.length; i++) clip[i] = (i * 7 + (i >> 8)) & 0xff;
  const rows: Array<[string, EventType, number]> = [
    ['rec-1', 'motion', day(20, 0, 0)], // first minute of the 20th
    ['rec-2', 'human', day(20, 12)],
    ['rec-3', 'vehicle', day(20, 23, 59)],
    ['rec-4', 'motion', day(21, 0, 0)],
    ['rec-5', 'human', day(22, 8)],
  ];
  for (const [id, eventType, startedAt] of rows) {
    const fileName = `cam-a/${id}.mp4`;
    writeFileSync(path.join(storage, fileName), clip);
    const alert = store.insertAlert({
      id: `alr-${id}`,
      deviceId: 'cam-a',
      type: eventType,
      message: `${eventType} at the front door`,
      createdAt: startedAt,
    });
    store.insertRecording({
      id,
      deviceId: 'cam-a',
      eventType,
      startedAt,
      endedAt: startedAt + 12_345,
      sizeBytes: clip.length,
      fileName,
      alertId: alert.id,
    });
    store.linkAlertRecording(alert.id, id);
  }
  store.insertRecording({
    id: 'rec-gone',
    deviceId: 'cam-a',
    eventType: 'motion',
    startedAt: day(1, 1),
    endedAt: day(1, 1) + 1000,
    sizeBytes: 10,
    fileName: 'cam-a/missing.mp4',
    alertId: null,
  });
});
afterAll(() => t.stop());

type List = { data: Array<Record<string, unknown>>; next_cursor: string | null };
const ids = (body: unknown) => (body as List).data.map((r) => r.id);

describe('GET /v1/devices/{id}/recordings', () => {
  it('lists newest first with the documented fields', async () => {
    const res = await t.request('/v1/devices/cam-a/recordings', { headers: await t.auth('recordings:read') });
    expect(res.status).toBe(200);
    expect(ids(res.json())).toEqual(['rec-5', 'rec-4', 'rec-3', 'rec-2', 'rec-1', 'rec-gone']);
    expect((res.json() as List).data[0]).toEqual({
      id: 'rec-5',
      device_id: 'cam-a',
      event_type: 'human',
      started_at: new Date(day(22, 8)).toISOString(),
      ended_at: new Date(day(22, 8) + 12_345).toISOString(),
      duration_s: 12.345,
      size_bytes: 300_000,
      content_type: 'video/mp4',
      alert_id: 'alr-rec-5',
      download_url: '/v1/recordings/rec-5/download',
      detections: [],
      // The ticket and its expiry change with the request (test/api/routes/playback.test.ts).
      playback_url: expect.stringMatching(/^\/v1\/recordings\/rec-5\/play\?ticket=/),
      playback_expires_at: expect.any(String),
    });
  });

  it.each([
    ['start_date=2026-11-20&end_date=2026-11-20', ['rec-3', 'rec-2', 'rec-1']],
    ['start_date=2026-11-21', ['rec-5', 'rec-4']],
    ['end_date=2026-11-20', ['rec-3', 'rec-2', 'rec-1', 'rec-gone']],
    ['start_date=2026-11-20&end_date=2026-11-21&event_type=motion', ['rec-4', 'rec-1']],
    ['event_type=vehicle', ['rec-3']],
  ])('filters %s (dates inclusive, local days)', async (query, expected) => {
    const res = await t.request(`/v1/devices/cam-a/recordings?${query}`, { headers: await t.auth('recordings:read') });
    expect(res.status).toBe(200);
    expect(ids(res.json())).toEqual(expected);
  });

  it('takes date-times with offsets as exact inclusive bounds', async () => {
    const start = new Date(day(20, 12)).toISOString();
    const end = new Date(day(21, 0)).toISOString();
    const res = await t.request(`/v1/devices/cam-a/recordings?start_date=${start}&end_date=${end}`, {
      headers: await t.auth('recordings:read'),
    });
    expect(ids(res.json())).toEqual(['rec-4', 'rec-3', 'rec-2']);
  });

  it('pages with a cursor', async () => {
    const headers = await t.auth('recordings:read');
    const first = (await t.request('/v1/devices/cam-a/recordings?limit=4', { headers })).json() as List;
    expect(first.data).toHaveLength(4);
    const second = (
      await t.request(`/v1/devices/cam-a/recordings?limit=4&cursor=${first.next_cursor}`, { headers })
    ).json() as List;
    expect(ids(second)).toEqual(['rec-1', 'rec-gone']);
    expect(second.next_cursor).toBeNull();
  });

  it.each([
    ['start_date=2026-13-01', 'start_date'],
    ['start_date=2026-02-30', 'start_date'],
    ['end_date=yesterday', 'end_date'],
    ['end_date=2026-11-20T25:00:00Z', 'end_date'],
    ['start_date=2026-11-20T10:00:00', 'start_date'], // no offset: ambiguous
    ['start_date=2026-11-22&end_date=2026-11-21', 'start_date'],
    ['event_type=cat', 'event_type'],
    ['event_type=device_offline', 'event_type'],
    ['limit=500', 'limit'],
    ['cursor=%00%01', 'cursor'],
    ['start_date=2026-11-20&start_date=2026-11-21', 'start_date'],
  ])('rejects %s with 400 naming %s', async (query, name) => {
    const res = await t.request(`/v1/devices/cam-a/recordings?${query}`, { headers: await t.auth('recordings:read') });
    expect(res.status).toBe(400);
    expect((res.json() as { error_description: string }).error_description).toContain(name);
  });

  it('answers 404 for an unknown device', async () => {
    const res = await t.request('/v1/devices/cam-zzz/recordings', { headers: await t.auth('recordings:read') });
    expect(res.status).toBe(404);
  });

  it('returns an empty list for a known device without recordings', async () => {
    const res = await t.request('/v1/devices/cam-b/recordings', { headers: await t.auth('recordings:read') });
    expect(res.json()).toEqual({ data: [], next_cursor: null });
  });
});

describe('GET /v1/recordings/{id}', () => {
  it('returns one recording, 404 for unknown', async () => {
    const headers = await t.auth('recordings:read');
    expect(((await t.request('/v1/recordings/rec-2', { headers })).json() as { event_type: string }).event_type).toBe(
      'human',
    );
    expect((await t.request('/v1/recordings/rec-404', { headers })).status).toBe(404);
  });
});

describe('GET /v1/recordings/{id}/download', () => {
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  it('streams the whole file with the download headers', async () => {
    const res = await t.request('/v1/recordings/rec-2/download', { headers: await t.auth('recordings:write') });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(res.headers['content-length']).toBe(String(clip.length));
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers.etag).toMatch(/^"rec-2-/);
    expect(new Date(String(res.headers['last-modified'])).getTime()).toBeGreaterThan(0);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="cam-a-.*\.mp4"$/);
    expect(sha(res.body)).toBe(sha(clip));
  });

  it('serves byte ranges with 206 and Content-Range', async () => {
    const headers = await t.auth('recordings:write');
    const cases: Array<[string, number, number]> = [
      ['bytes=0-99', 0, 99],
      ['bytes=1000-', 1000, clip.length - 1],
      ['bytes=-500', clip.length - 500, clip.length - 1],
      ['bytes=299990-400000', 299_990, clip.length - 1],
      ['bytes=0-99999999999999999999999', 0, clip.length - 1],
      ['bytes=-99999999999999999999', 0, clip.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await t.request('/v1/recordings/rec-2/download', { headers: { ...headers, range } });
      expect(res.status, range).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${clip.length}`);
      expect(res.headers['content-length']).toBe(String(end - start + 1));
      expect(res.body.equals(clip.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers 416 for a range past the end and ignores ranges it does not serve', async () => {
    const headers = await t.auth('recordings:write');
    for (const range of ['bytes=400000-', 'bytes=99999999999999999999-']) {
      const past = await t.request('/v1/recordings/rec-2/download', { headers: { ...headers, range } });
      expect(past.status, range).toBe(416);
      expect(past.headers['content-range']).toBe(`bytes */${clip.length}`);
      expect((past.json() as { error: string }).error).toBe('range_not_satisfiable');
    }
    for (const range of ['items=0-10', 'bytes=0-1,5-9', 'bytes=abc', 'bytes=9-3']) {
      const res = await t.request('/v1/recordings/rec-2/download', { headers: { ...headers, range } });
      expect(res.status, range).toBe(200);
      expect(res.body.length).toBe(clip.length);
    }
  });

  it('honours If-None-Match and If-Range', async () => {
    const headers = await t.auth('recordings:write');
    const etag = String((await t.request('/v1/recordings/rec-2/download', { method: 'HEAD', headers })).headers.etag);
    expect(
      (await t.request('/v1/recordings/rec-2/download', { headers: { ...headers, 'if-none-match': etag } })).status,
    ).toBe(304);
    const stale = await t.request('/v1/recordings/rec-2/download', {
      headers: { ...headers, range: 'bytes=0-9', 'if-range': '"old"' },
    });
    expect(stale.status).toBe(200);
    const fresh = await t.request('/v1/recordings/rec-2/download', {
      headers: { ...headers, range: 'bytes=0-9', 'if-range': etag },
    });
    expect(fresh.status).toBe(206);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await t.request('/v1/recordings/rec-2/download', {
      method: 'HEAD',
      headers: await t.auth('recordings:write'),
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(clip.length));
    expect(res.body.length).toBe(0);
  });

  it('needs recordings:write; 404 for unknown ids and missing files', async () => {
    expect(
      (await t.request('/v1/recordings/rec-2/download', { headers: await t.auth('recordings:read') })).status,
    ).toBe(403);
    const headers = await t.auth('recordings:write');
    expect((await t.request('/v1/recordings/rec-404/download', { headers })).status).toBe(404);
    expect((await t.request('/v1/recordings/rec-gone/download', { headers })).status).toBe(404);
  });
});

describe('GET /v1/recordings/{id}/thumbnail', () => {
  it('serves the JPEG beside the clip with recordings:read; 404 when there is none', async () => {
    const headers = await t.auth('recordings:read');
    expect((await t.request('/v1/recordings/rec-1/thumbnail', { headers })).status).toBe(404);
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9]);
    writeFileSync(path.join(t.dataDir, 'recordings', 'cam-a', 'rec-1.jpg'), jpeg);
    const res = await t.request('/v1/recordings/rec-1/thumbnail', { headers });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.body).toEqual(jpeg);
    expect((await t.request('/v1/recordings/rec-404/thumbnail', { headers })).status).toBe(404);
    expect((await t.request('/v1/recordings/rec-1/thumbnail', { headers: await t.auth('alerts:read') })).status).toBe(
      403,
    );
  });
});
