import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { onlineCamera } from '../../support/devices.js';

let t: TestGateway;
const base = Date.UTC(2026, 10, 20, 10);

beforeAll(async () => {
  t = await startTestGateway();
  const s = t.gw.store;
  for (const id of ['cam-a', 'cam-b']) s.upsertDevice(onlineCamera(id));
  s.insertAlert({ id: 'a1', deviceId: 'cam-a', type: 'motion', message: 'Motion at cam-a', createdAt: base + 1 });
  s.insertAlert({ id: 'a2', deviceId: 'cam-b', type: 'human', message: 'Person at cam-b', createdAt: base + 2 });
  s.insertAlert({
    id: 'a3',
    deviceId: 'cam-a',
    type: 'device_offline',
    message: 'cam-a went offline',
    createdAt: base + 3,
  });
  s.insertAlert({ id: 'a4', deviceId: 'cam-a', type: 'vehicle', message: 'Vehicle at cam-a', createdAt: base + 4 });
});
afterAll(() => t.stop());

type List = { data: Array<{ id: string; read: boolean; read_at: string | null }>; next_cursor: string | null };

describe('alerts', () => {
  it('lists newest first with every field', async () => {
    const res = await t.request('/v1/alerts', { headers: await t.auth('alerts:read') });
    expect(res.status).toBe(200);
    const body = res.json() as List;
    expect(body.data.map((a) => a.id)).toEqual(['a4', 'a3', 'a2', 'a1']);
    expect(body.data[0]).toEqual({
      id: 'a4',
      device_id: 'cam-a',
      type: 'vehicle',
      message: 'Vehicle at cam-a',
      created_at: new Date(base + 4).toISOString(),
      read: false,
      read_at: null,
      recording_id: null,
      recording_status: 'pending',
      recording_status_reason: null,
      detections: [],
    });
  });

  it('filters by device, type and unread', async () => {
    const headers = await t.auth('alerts:read');
    const get = async (q: string) =>
      ((await t.request(`/v1/alerts?${q}`, { headers })).json() as List).data.map((a) => a.id);
    expect(await get('device_id=cam-a')).toEqual(['a4', 'a3', 'a1']);
    expect(await get('type=device_offline')).toEqual(['a3']);
    expect(await get('device_id=cam-a&type=motion')).toEqual(['a1']);
    expect(await get('device_id=nobody')).toEqual([]);
  });

  it('marks read idempotently, keeping the first read_at, with an empty body or {}', async () => {
    const headers = await t.auth('alerts:write');
    const first = await t.request('/v1/alerts/a2/read', { method: 'POST', headers });
    expect(first.status).toBe(200);
    const a = first.json() as { read: boolean; read_at: string };
    expect(a.read).toBe(true);
    expect(a.read_at).toMatch(/Z$/);
    const again = await t.request('/v1/alerts/a2/read', { method: 'POST', headers, body: {} });
    expect(again.status).toBe(200);
    expect((again.json() as { read_at: string }).read_at).toBe(a.read_at);
    const emptyJson = await t.request('/v1/alerts/a2/read', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '',
    });
    expect(emptyJson.status).toBe(200);

    const read = await t.request('/v1/alerts?unread=false', { headers: await t.auth('alerts:read') });
    expect((read.json() as List).data.map((x) => x.id)).toEqual(['a2']);
    const unread = await t.request('/v1/alerts?unread=true', { headers: await t.auth('alerts:read') });
    expect((unread.json() as List).data.map((x) => x.id)).toEqual(['a4', 'a3', 'a1']);
    const one = await t.request('/v1/alerts/a2', { headers: await t.auth('alerts:read') });
    expect((one.json() as { read_at: string }).read_at).toBe(a.read_at);
  });

  it.each([
    ['/v1/alerts?type=fire', 'type'],
    ['/v1/alerts?unread=yes', 'unread'],
    ['/v1/alerts?limit=-1', 'limit'],
    ['/v1/alerts?device_id=' + encodeURIComponent('a/b'), 'device_id'],
    ['/v1/alerts?cursor=bm9wZQ', 'cursor'],
  ])('rejects %s naming %s', async (url, name) => {
    const res = await t.request(url, { headers: await t.auth('alerts:read') });
    expect(res.status).toBe(400);
    expect((res.json() as { error_description: string }).error_description).toContain(name);
  });

  it('rejects bodies other than {} when marking read', async () => {
    const headers = await t.auth('alerts:write');
    const extra = await t.request('/v1/alerts/a1/read', { method: 'POST', headers, body: { read: false } });
    expect(extra.status).toBe(400);
    expect((extra.json() as { error_description: string }).error_description).toContain('read');
    const text = await t.request('/v1/alerts/a1/read', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(text.status).toBe(400);
    // nothing was changed by the rejected requests
    const a1 = await t.request('/v1/alerts/a1', { headers: await t.auth('alerts:read') });
    expect((a1.json() as { read: boolean }).read).toBe(false);
  });

  it('answers 404 for unknown alerts and needs the right scopes', async () => {
    expect((await t.request('/v1/alerts/zzz', { headers: await t.auth('alerts:read') })).status).toBe(404);
    expect(
      (await t.request('/v1/alerts/zzz/read', { method: 'POST', headers: await t.auth('alerts:write') })).status,
    ).toBe(404);
    expect(
      (await t.request('/v1/alerts/a1/read', { method: 'POST', headers: await t.auth('alerts:read') })).status,
    ).toBe(403);
    expect((await t.request('/v1/alerts', { headers: await t.auth('alerts:write') })).status).toBe(403);
  });
});
