import { spawnSync } from 'node:child_process';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCamera } from '../../../src/onvif/simulator/camera.js';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { jpegSize } from '../../media/still/jpeg-size.js';

// GET /v1/devices/{id}/snapshot on the started gateway: a simulated camera with live H.264 (main
// 1280x720, sub 320x180) through the relay, one whose stream cannot be had (its ONVIF snapshot URI
// with Digest auth answers instead), an offline one; real HTTPS, real ffmpeg, the metrics listener.

const USER = 'admin';
const PASSWORD = 'cam-secret-snap';
let fleet: Fleet;
let noStream: SimulatedCamera;
let t: TestGateway;
const ids = { live: '', noStream: '' };

beforeAll(async () => {
  const logger = pino({ level: process.env.SIM_LOG ?? 'silent' });
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: USER,
    password: PASSWORD,
    discovery: null,
    rtspPort: 0,
    logger,
  });
  // RTSP at a closed port: the relay cannot open it; the camera's own snapshot is the fallback.
  noStream = new SimulatedCamera({
    username: USER,
    password: PASSWORD,
    identity: { model: 'NOSTREAM', serial: 'NOSTREAM1' },
    rtspMain: 'rtsp://127.0.0.1:1/main',
    rtspSub: 'rtsp://127.0.0.1:1/sub',
  });
  await noStream.start();
  t = await startTestGateway({
    cameras: [
      { name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: USER, password: PASSWORD },
      { name: 'Shed', onvif_url: noStream.deviceServiceUrl, username: USER, password: PASSWORD },
    ],
    // The flood below opens 200 connections from this one address.
    api: { max_connections_per_address: 512 },
    // A picture kept 30 s (1 s by default): on a loaded machine the flood outlasts a second, and the
    // counts of decodes below must not depend on how fast it is (the cache's life: snapshots.test.ts).
    snapshot: { max_concurrent_decodes: 2, max_queued_decodes: 8, cache_ms: 30_000 },
  });
  const headers = await t.auth('devices:read');
  for (let i = 0; i < 200 && (!ids.live || !ids.noStream); i++) {
    const { data } = (await t.request('/v1/devices', { headers })).json() as {
      data: Array<{ id: string; name: string; status: string }>;
    };
    ids.live = data.find((d) => d.name === 'Porch' && d.status === 'online')?.id ?? '';
    ids.noStream = data.find((d) => d.name === 'Shed' && d.status === 'online')?.id ?? '';
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!ids.live || !ids.noStream) throw new Error('the simulated cameras were not adopted');
  t.gw.store.upsertDevice({
    id: 'cam-off',
    name: 'Gate',
    type: 'camera',
    status: 'offline',
    model: null,
    manufacturer: null,
    firmwareVersion: null,
    lastSeenAt: null,
  });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await noStream?.stop();
  await fleet?.stop();
});

async function snapshot(id: string, query = '', headers: Record<string, string> = {}) {
  return t.request(`/v1/devices/${id}/snapshot${query}`, {
    headers: { ...(await t.auth('devices:read')), ...headers },
  });
}

/** A series' value from the metrics listener (0 when absent). */
async function metric(series: string): Promise<number> {
  const text = await t.metrics();
  return Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/** ffmpeg decodes the JPEG without a word. */
function decodes(jpeg: Buffer): boolean {
  const run = spawnSync('ffmpeg', ['-v', 'error', '-f', 'mjpeg', '-i', 'pipe:0', '-f', 'null', '-'], { input: jpeg });
  return run.status === 0 && run.stderr.toString() === '';
}

describe('GET /v1/devices/{id}/snapshot', () => {
  it("answers the relay's keyframe as a JPEG at the main stream's size, with ETag and no-cache", async () => {
    const res = await snapshot(ids.live);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(jpegSize(res.body)).toEqual({ width: 1280, height: 720 });
    expect(decodes(res.body)).toBe(true);
    expect(await metric('edge_gateway_snapshot_decodes_total{input="keyframe"}')).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it.each([
    [320, { width: 320, height: 180 }],
    [640, { width: 640, height: 360 }],
    [64, { width: 64, height: 36 }],
  ])(
    'honours width=%i (height keeping the aspect ratio)',
    async (width, size) => {
      const res = await snapshot(ids.live, `?width=${width}`);
      expect(res.status, res.text).toBe(200);
      expect(jpegSize(res.body)).toEqual(size);
      expect(decodes(res.body)).toBe(true);
    },
    30_000,
  );

  it('If-None-Match with the ETag: 304 without a body; another tag: the picture', async () => {
    const first = await snapshot(ids.live, '?width=200');
    const etag = String(first.headers.etag);
    const again = await snapshot(ids.live, '?width=200', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    const other = await snapshot(ids.live, '?width=200', { 'if-none-match': '"something-else"' });
    expect(other.status).toBe(200);
    expect(other.headers.etag).toBe(etag);
  }, 30_000);

  it('N requests at once for one device and width: one decode, all answered with the same picture', async () => {
    const before = await metric('edge_gateway_snapshot_decodes_total{input="keyframe"}');
    const coalesced = await metric('edge_gateway_snapshot_coalesced_total');
    const headers = await t.auth('devices:read');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.request(`/v1/devices/${ids.live}/snapshot?width=480`, { headers })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
    expect(await metric('edge_gateway_snapshot_decodes_total{input="keyframe"}')).toBe(before + 1);
    expect(await metric('edge_gateway_snapshot_coalesced_total')).toBeGreaterThan(coalesced);
  }, 30_000);

  it('a flood of 200 requests over 10 widths stays bounded, every one answered, and the API keeps answering', async () => {
    const before = await metric('edge_gateway_snapshot_decodes_total{input="keyframe"}');
    const headers = await t.auth('devices:read');
    const flood = Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        t.request(`/v1/devices/${ids.live}/snapshot?width=${700 + (i % 10) * 8}`, { headers }),
      ),
    );
    const others = await Promise.all([t.request('/healthz'), t.request('/v1/devices', { headers })]);
    expect(others.map((r) => r.status)).toEqual([200, 200]);
    const answers = await flood;
    for (const a of answers) {
      expect([200, 503]).toContain(a.status);
      if (a.status === 503) expect(a.json()).toMatchObject({ error: 'temporarily_unavailable' });
      else expect(jpegSize(a.body)?.width).toBeGreaterThanOrEqual(700);
    }
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    // One decode per width at most (2 running and 8 waiting: all 10 fit).
    expect(await metric('edge_gateway_snapshot_decodes_total{input="keyframe"}')).toBeLessThanOrEqual(before + 10);
    expect(await metric('edge_gateway_snapshot_in_flight{stage="pictures"}')).toBe(0);
  }, 60_000);

  it('the keyframes went to long-lived decoders, at most snapshot.max_decoders of them running', async () => {
    expect(await metric('edge_gateway_snapshot_decoder_starts_total')).toBeGreaterThanOrEqual(1);
    expect(await metric('edge_gateway_snapshot_decoder_pictures_total')).toBeGreaterThanOrEqual(1);
    expect(await metric('edge_gateway_snapshot_decoders')).toBeLessThanOrEqual(4);
  });

  it('a camera whose stream cannot be had: its own snapshot URI (Digest), as it is or scaled', async () => {
    const calls = noStream.calls.get('snapshot.jpg') ?? 0;
    const res = await snapshot(ids.noStream);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(await noStream.snapshot.jpeg());
    expect(noStream.calls.get('snapshot.jpg')).toBeGreaterThanOrEqual(calls + 2); // the 401 challenge, then the answer
    const scaled = await snapshot(ids.noStream, '?width=200');
    expect(scaled.status).toBe(200);
    expect(jpegSize(scaled.body)).toEqual({ width: 200, height: 112 });
    expect(await metric('edge_gateway_snapshot_camera_fetches_total')).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it('an offline device: 409 device_unavailable', async () => {
    const res = await snapshot('cam-off');
    expect(res.status).toBe(409);
    expect(res.json()).toMatchObject({ error: 'device_unavailable' });
  });

  it('an unknown device: 404 not_found', async () => {
    const res = await snapshot('nope');
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
  });

  it('a token without devices:read: 403; none: 401', async () => {
    const res = await t.request(`/v1/devices/${ids.live}/snapshot`, { headers: await t.auth('alerts:read') });
    expect(res.status).toBe(403);
    expect(res.json()).toMatchObject({ error: 'insufficient_scope' });
    expect((await t.request(`/v1/devices/${ids.live}/snapshot`)).status).toBe(401);
  });

  it.each(['?width=63', '?width=3841', '?width=abc', '?width=320.5', '?height=100', '?width='])(
    'a bad query %s: 400 invalid_request, nothing decoded',
    async (query) => {
      const before = await metric('edge_gateway_snapshot_decodes_total{input="keyframe"}');
      const res = await snapshot(ids.live, query);
      expect(res.status, res.text).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      expect(await metric('edge_gateway_snapshot_decodes_total{input="keyframe"}')).toBe(before);
    },
  );
});
