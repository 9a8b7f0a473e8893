import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../../src/store/store.js';
import { DEFAULT_SETTINGS_JSON } from '../../support/camera-settings.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

let t: TestGateway;
const base = Date.UTC(2026, 10, 1, 12, 0, 0, 120);

function seedDevices(store: Store, n: number) {
  for (let i = 0; i < n; i++) {
    store.upsertDevice({
      id: `cam-${String(i).padStart(2, '0')}`,
      name: `Camera ${i}`,
      type: 'camera',
      status: i % 3 === 0 ? 'offline' : 'online',
      model: 'DCS-6511',
      manufacturer: 'D-Link',
      firmwareVersion: '1.0.0',
      lastSeenAt: i % 3 === 0 ? null : base + i,
      createdAt: base + i * 1000,
    });
  }
}

beforeAll(async () => {
  t = await startTestGateway();
  seedDevices(t.gw.store, 7);
});
afterAll(() => t.stop());

describe('GET /v1/devices', () => {
  it('lists devices newest first in the envelope with every field', async () => {
    const res = await t.request('/v1/devices', { headers: await t.auth('devices:read') });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json() as { data: Array<Record<string, unknown>>; next_cursor: string | null };
    expect(body.next_cursor).toBeNull();
    expect(body.data.map((d) => d.id)).toEqual(['cam-06', 'cam-05', 'cam-04', 'cam-03', 'cam-02', 'cam-01', 'cam-00']);
    expect(body.data[1]).toEqual({
      id: 'cam-05',
      name: 'Camera 5',
      type: 'camera',
      status: 'online',
      model: 'DCS-6511',
      manufacturer: 'D-Link',
      firmware_version: '1.0.0',
      last_seen_at: new Date(base + 5).toISOString(),
      address: null,
      source: 'onvif',
      rtsp_url: null,
      sub_rtsp_url: null,
      settings: DEFAULT_SETTINGS_JSON,
      ptz: null,
    });
    expect(body.data[0]?.last_seen_at).toBeNull();
    expect(String(body.data[1]?.last_seen_at)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('filters by status and type', async () => {
    const headers = await t.auth('devices:read');
    const offline = (await t.request('/v1/devices?status=offline', { headers })).json() as {
      data: Array<{ id: string; status: string }>;
    };
    expect(offline.data.map((d) => d.id)).toEqual(['cam-06', 'cam-03', 'cam-00']);
    const cams = (await t.request('/v1/devices?type=camera&status=online', { headers })).json() as { data: unknown[] };
    expect(cams.data).toHaveLength(4);
  });

  it('pages with limit and cursor without gaps or repeats', async () => {
    const headers = await t.auth('devices:read');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/devices?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const body = (await t.request(url, { headers })).json() as {
        data: Array<{ id: string }>;
        next_cursor: string | null;
      };
      seen.push(...body.data.map((d) => d.id));
      cursor = body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(['cam-06', 'cam-05', 'cam-04', 'cam-03', 'cam-02', 'cam-01', 'cam-00']);
  });

  it.each([
    ['status=broken', 'status'],
    ['type=doorbell', 'type'],
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['cursor=not-a-cursor', 'cursor'],
    ['cursor=' + 'A'.repeat(300), 'cursor'],
    ['colour=red', 'colour'],
  ])('rejects %s with 400 naming %s', async (query, param) => {
    const res = await t.request(`/v1/devices?${query}`, { headers: await t.auth('devices:read') });
    expect(res.status).toBe(400);
    const body = res.json() as { error: string; error_description: string };
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toContain(param);
  });
});

describe('GET /v1/devices/{id}', () => {
  it('returns one device', async () => {
    const res = await t.request('/v1/devices/cam-02', { headers: await t.auth('devices:read') });
    expect(res.status).toBe(200);
    expect((res.json() as { id: string; name: string }).name).toBe('Camera 2');
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    const headers = await t.auth('devices:read');
    const missing = await t.request('/v1/devices/cam-99', { headers });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: 'not_found', error_description: 'device cam-99 not found' });
    const bad = await t.request('/v1/devices/' + encodeURIComponent("x' OR 1=1 --"), { headers });
    expect(bad.status).toBe(400);
    expect((bad.json() as { error_description: string }).error_description).toContain('device_id');
  });
});

describe('POST /v1/devices/{id}/control', () => {
  it('answers 409 device_unavailable for a device the gateway cannot reach', async () => {
    const res = await t.request('/v1/devices/cam-01/control', {
      method: 'POST',
      headers: await t.auth('devices:write'),
      body: { action: 'reboot' },
    });
    expect(res.status).toBe(409);
    expect((res.json() as { error: string }).error).toBe('device_unavailable');
  });

  it('names the allowed actions for an unknown one', async () => {
    const res = await t.request('/v1/devices/cam-01/control', {
      method: 'POST',
      headers: await t.auth('devices:write'),
      body: { action: 'selfdestruct' },
    });
    expect(res.status).toBe(400);
    expect((res.json() as { error_description: string }).error_description).toBe(
      'body field action must be one of reboot, sync_time, ptz_move, ptz_stop, ptz_goto_preset, ptz_set_preset, ptz_remove_preset, ptz_home, ptz_center',
    );
  });

  it.each([
    ['unknown field', JSON.stringify({ action: 'reboot', force: true }), 'application/json', 'force'],
    ['missing action', '{}', 'application/json', 'action'],
    ['action not a string', JSON.stringify({ action: ['reboot'] }), 'application/json', 'action'],
    ['not JSON', '{"action": reboot}', 'application/json', 'JSON'],
    ['a JSON array', '["reboot"]', 'application/json', 'object'],
    ['no body', '', 'application/json', 'action is required'],
    ['form encoded', 'action=reboot', 'application/x-www-form-urlencoded', 'application/json'],
    ['oversized', JSON.stringify({ action: 'reboot', pad: 'x'.repeat(70_000) }), 'application/json', 'too large'],
    // JSON.parse keeps the last of repeated names; the gateway refuses before anything runs.
    [
      'action named twice',
      '{"action":"sync_time","action":"reboot"}',
      'application/json',
      'body field action is given more than once',
    ],
    [
      'action named twice with one value',
      '{ "action" : "reboot",\n "action":"reboot"}',
      'application/json',
      'body field action is given more than once',
    ],
    [
      'a long name named twice, not echoed',
      `{"${'n'.repeat(100)}":1,"${'n'.repeat(100)}":2}`,
      'application/json',
      'a body field is given more than once',
    ],
  ])('rejects %s with 400', async (_name, body, contentType, mention) => {
    const res = await t.request('/v1/devices/cam-01/control', {
      method: 'POST',
      headers: { ...(await t.auth('devices:write')), 'content-type': contentType },
      body,
    });
    expect(res.status).toBe(400);
    const err = res.json() as { error: string; error_description: string };
    expect(err.error).toBe('invalid_request');
    expect(err.error_description).toContain(mention);
  });

  it('answers 404 for an unknown device', async () => {
    const res = await t.request('/v1/devices/nope/control', {
      method: 'POST',
      headers: await t.auth('devices:write'),
      body: { action: 'sync_time' },
    });
    expect(res.status).toBe(404);
  });

  it('needs devices:write, not devices:read', async () => {
    const res = await t.request('/v1/devices/cam-01/control', {
      method: 'POST',
      headers: await t.auth('devices:read'),
      body: { action: 'reboot' },
    });
    expect(res.status).toBe(403);
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="edge-gateway", error="insufficient_scope", scope="devices:write"',
    );
  });
});

describe('GET /v1/devices/{id}/stream', () => {
  it('answers 409 for a device with no camera stream, 404 for unknown devices, 400 for bad profiles', async () => {
    const headers = await t.auth('devices:read');
    expect((await t.request('/v1/devices/cam-01/stream', { headers })).status).toBe(409);
    expect((await t.request('/v1/devices/cam-01/stream?profile=sub', { headers })).status).toBe(409);
    expect((await t.request('/v1/devices/nope/stream', { headers })).status).toBe(404);
    const bad = await t.request('/v1/devices/cam-01/stream?profile=4k', { headers });
    expect(bad.status).toBe(400);
    expect((bad.json() as { error_description: string }).error_description).toBe(
      'query parameter profile must be one of main, sub',
    );
  });

  it('takes protocol=rtsp|webrtc|hls (409 without a stream, as for rtsp) and refuses others with 400', async () => {
    const headers = await t.auth('devices:read');
    for (const protocol of ['rtsp', 'webrtc', 'hls'])
      expect((await t.request(`/v1/devices/cam-01/stream?protocol=${protocol}&profile=sub`, { headers })).status).toBe(
        409,
      );
    const bad = await t.request('/v1/devices/cam-01/stream?protocol=rtmp', { headers });
    expect(bad.status).toBe(400);
    expect((bad.json() as { error_description: string }).error_description).toBe(
      'query parameter protocol must be one of rtsp, webrtc, hls',
    );
  });
});
