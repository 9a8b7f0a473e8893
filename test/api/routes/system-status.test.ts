import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedCamera } from '../../../src/onvif/simulator/camera.js';
import type { Fleet } from '../../../src/onvif/simulator/fleet.js';
import { onlineDevicesByName, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { TestRtspClient } from '../../support/rtsp-client.js';
import { startCameraWithoutStream, startStreamingCamera } from '../../support/streaming-cameras.js';

// GET /v1/system on the started gateway: a simulated camera streaming H.264 (the recorder reads its
// main stream through the relay, so the relay counts what it receives), and one whose stream cannot
// be opened (its last error). Admins only; the figures sane; a viewer's token, none and a query
// parameter refused as on every route.

const ACCOUNT = { username: 'admin', password: 'cam-secret-sys' };
const ADMIN = 'devices:read devices:write';
let fleet: Fleet;
let noStream: SimulatedCamera;
let t: TestGateway;
let ids: Record<string, string> = {};

interface SystemStatus {
  version: string;
  uptime_s: number;
  host: Record<string, number | null>;
  process: { rss_bytes: number; cpu_pct: number | null };
  storage: Array<{
    name: string;
    path: string;
    total_bytes: number | null;
    free_bytes: number | null;
    used_by_gateway_bytes: number | null;
    state: string;
  }>;
  cameras: Array<{
    device_id: string;
    name: string;
    status: string;
    bitrate_kbps: number | null;
    fps: number | null;
    viewers: number;
    last_error: string | null;
    last_error_at: string | null;
  }>;
}

async function system(): Promise<SystemStatus> {
  const res = await t.request('/v1/system', { headers: await t.auth(ADMIN) });
  if (res.status !== 200) throw new Error(`GET /v1/system: ${res.status} ${res.text}`);
  return res.json() as SystemStatus;
}

const camera = async (name: string) => (await system()).cameras.find((c) => c.name === name);

beforeAll(async () => {
  fleet = await startStreamingCamera(ACCOUNT);
  noStream = await startCameraWithoutStream(ACCOUNT, 'NOSTREAM1');
  t = await startTestGateway({
    cameras: [
      { name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, ...ACCOUNT },
      { name: 'Shed', onvif_url: noStream.deviceServiceUrl, ...ACCOUNT },
    ],
  });
  ids = await onlineDevicesByName(t, ['Porch', 'Shed']);
}, 120_000);
afterAll(async () => {
  await t?.stop();
  await noStream?.stop();
  await fleet?.stop();
});

describe('GET /v1/system, as an admin', { timeout: 60_000 }, () => {
  it('tells the version, uptimes, the machine and this process with sane figures', async () => {
    const s = await system();
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(s.version).toBe(pkg.version);
    expect(s.uptime_s).toBeGreaterThanOrEqual(0);
    const { host } = s;
    expect(host.uptime_s).toBeGreaterThanOrEqual(s.uptime_s);
    expect(host.load_1m).toBeGreaterThanOrEqual(0);
    expect(host.cpu_cores).toBeGreaterThanOrEqual(1);
    expect(host.memory_total_bytes).toBeGreaterThanOrEqual(host.memory_available_bytes!);
    expect(host.memory_available_bytes).toBeGreaterThan(0);
    if (host.temperature_c !== null) expect(host.temperature_c).toBeGreaterThan(-50);
    expect(s.process.rss_bytes).toBeGreaterThan(10_000_000);
    // A share needs two looks a second apart or more.
    await expect
      .poll(async () => (await system()).host.cpu_pct, { timeout: 10_000, interval: 1200 })
      .toEqual(expect.any(Number));
    const later = await system();
    expect(later.host.cpu_pct).toBeGreaterThanOrEqual(0);
    expect(later.host.cpu_pct).toBeLessThanOrEqual(100);
    expect(later.process.cpu_pct).toBeGreaterThanOrEqual(0);
    expect(later.process.cpu_pct).toBeLessThanOrEqual(100);
  });

  it("tells data_dir's disk, with the database as the gateway's share", async () => {
    const { storage } = await system();
    // The clips are inside data_dir here, and continuous recording is off: one disk.
    expect(storage.map((d) => d.name)).toEqual(['data']);
    const data = storage[0]!;
    expect(data.path).toBe(t.dataDir);
    expect(data.free_bytes).toBeGreaterThan(0);
    expect(data.total_bytes).toBeGreaterThanOrEqual(data.free_bytes!);
    expect(data.used_by_gateway_bytes).toBeGreaterThan(0);
    expect(['ok', 'low']).toContain(data.state);
  });

  it('tells the bitrate and frame rate the relay receives from a streaming camera, and its viewers', async () => {
    await expect
      .poll(async () => camera('Porch'), { timeout: 30_000, interval: 500 })
      .toMatchObject({ device_id: ids.Porch, status: 'online', bitrate_kbps: expect.any(Number) });
    await expect.poll(async () => (await camera('Porch'))?.bitrate_kbps, { timeout: 15_000 }).toBeGreaterThan(0);
    await expect.poll(async () => (await camera('Porch'))?.fps, { timeout: 15_000 }).toBeGreaterThan(0);
    // The recorder reads the stream too, but it is nobody watching.
    expect((await camera('Porch'))?.viewers).toBe(0);

    const address = await t.request(`/v1/devices/${ids.Porch}/stream?profile=main`, {
      headers: await t.auth('devices:read'),
    });
    const { stream_url } = address.json() as { stream_url: string };
    const viewer = await TestRtspClient.open(Number(new URL(stream_url).port));
    try {
      await viewer.play(stream_url);
      await expect.poll(async () => (await camera('Porch'))?.viewers, { timeout: 10_000 }).toBe(1);
    } finally {
      viewer.close();
    }
    await expect.poll(async () => (await camera('Porch'))?.viewers, { timeout: 10_000 }).toBe(0);
  });

  it('tells why a camera’s stream failed, and when', async () => {
    await expect
      .poll(async () => camera('Shed'), { timeout: 30_000, interval: 500 })
      .toMatchObject({
        device_id: ids.Shed,
        bitrate_kbps: null,
        fps: null,
        last_error: expect.stringMatching(/^main stream: /),
        last_error_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    const shed = await camera('Shed');
    expect(Date.parse(shed!.last_error_at!)).toBeLessThanOrEqual(Date.now());
  });
});

describe('GET /v1/system, refused', () => {
  it("is 403 for a viewer's token, with the usual error body", async () => {
    const res = await t.request('/v1/system', { headers: await t.auth('devices:read alerts:read recordings:read') });
    expect(res.status).toBe(403);
    expect(res.json()).toMatchObject({ error: 'insufficient_scope', error_description: expect.any(String) });
    expect(String(res.headers['www-authenticate'])).toContain('scope="devices:write"');
  });

  it('is 401 without a token', async () => {
    const res = await t.request('/v1/system');
    expect(res.status).toBe(401);
    expect((res.json() as { error: string }).error).toBe('unauthorized');
  });

  it('is 400 for a query parameter, as every route refuses those it does not know', async () => {
    const res = await t.request('/v1/system?verbose=1', { headers: await t.auth(ADMIN) });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('verbose'),
    });
  });

  it('is in the OpenAPI document with its scope', async () => {
    const doc = (await t.request('/v1/openapi.json')).json() as {
      paths: Record<string, Record<string, { operationId: string; security: unknown }>>;
    };
    expect(doc.paths['/v1/system']?.get).toMatchObject({
      operationId: 'getSystemStatus',
      security: [{ bearer: ['devices:write'] }],
    });
  });
});
