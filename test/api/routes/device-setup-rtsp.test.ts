import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Static } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceSchema } from '../../../src/domain/record-schemas.js';
import type { SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';
import { jpegSize } from '../../media/still/jpeg-size.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { startDigestCamera } from '../../support/rtsp-camera.js';

// A plain RTSP camera added by its URL through the started gateway: a real gst-rtsp-server with
// Digest authentication (the simulator's, H.264 main 1280x720 and sub 320x180 from ffmpeg's moving
// test picture), no ONVIF at all. Its status comes from its stream; live view, snapshots and
// software motion with its clip work as for an adopted camera, through the relay's one session.

type Device = Static<typeof DeviceSchema>;

const run = promisify(execFile);
const PASSWORD = 'gst-digest-pw';
const MAX_CLIP_S = 10;
let camera: SimulatedRtsp;
let t: TestGateway;
let id = '';
const logLines: string[] = [];

beforeAll(async () => {
  camera = await startDigestCamera(PASSWORD);
  t = await startTestGateway(
    {
      // Health checks each second: every change of status below shows within seconds.
      onvif: { health_interval_s: 1, max_backoff_s: 2 },
      // motion.mode stays auto: a camera without events of its own gets software motion.
      recording: { pre_roll_s: 1, post_roll_s: 1, max_clip_s: MAX_CLIP_S, motion: { threshold: 0.01, fps: 2 } },
    },
    { logLines },
  );
});
afterAll(async () => {
  await t?.stop();
  await camera?.stop();
});

const admin = () => t.auth('devices:read devices:write');
async function device(): Promise<Device> {
  return (await t.request(`/v1/devices/${id}`, { headers: await admin() })).json() as Device;
}
const statusOf = async () => (await device()).status;
async function patch(body: object) {
  const res = await t.request(`/v1/devices/${id}`, { method: 'PATCH', headers: await admin(), body });
  expect(res.status, res.text).toBe(200);
}
async function streamUrl(profile: 'main' | 'sub'): Promise<string> {
  const res = await t.request(`/v1/devices/${id}/stream?profile=${profile}`, { headers: await admin() });
  expect(res.status, res.text).toBe(200);
  return (res.json() as { stream_url: string }).stream_url;
}
async function probe(url: string) {
  const args = [
    '-v',
    'error',
    '-rtsp_transport',
    'tcp',
    '-show_entries',
    'stream=codec_name,width,height',
    '-of',
    'json',
  ];
  const { stdout } = await run('ffprobe', [...args, url], { timeout: 20_000 });
  return (JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; height: number }> }).streams[0];
}

describe('a plain RTSP camera behind Digest authentication', () => {
  it('is added by its URL and goes online', async () => {
    const res = await t.request('/v1/devices', {
      method: 'POST',
      headers: await admin(),
      body: {
        rtsp_url: camera.url(0, 'main'),
        sub_rtsp_url: camera.url(0, 'sub'),
        username: 'admin',
        password: PASSWORD,
        name: 'Yard',
      },
    });
    expect(res.status, res.text).toBe(201);
    const added = res.json() as Device;
    id = added.id;
    expect(added).toMatchObject({ status: 'offline', source: 'rtsp', rtsp_url: camera.url(0, 'main'), ptz: null });
    await expect.poll(statusOf, { timeout: 20_000 }).toBe('online');
  });

  it('goes unauthorized with a wrong password, and online again once PATCH gives the right one (no restart)', async () => {
    await patch({ username: 'admin', password: 'not-it' });
    await expect.poll(statusOf, { timeout: 20_000 }).toBe('unauthorized');
    await patch({ username: 'admin', password: PASSWORD });
    await expect.poll(statusOf, { timeout: 20_000 }).toBe('online');
    expect(logLines.join('\n')).not.toContain(PASSWORD);
  });

  it('plays live through the relay: main and sub, read by ffprobe', async () => {
    expect(await probe(await streamUrl('main'))).toEqual({ codec_name: 'h264', width: 1280, height: 720 });
    expect(await probe(await streamUrl('sub'))).toEqual({ codec_name: 'h264', width: 320, height: 180 });
  });

  it("serves a snapshot from the relay's keyframe (there is no camera snapshot to fall back on)", async () => {
    const res = await t.request(`/v1/devices/${id}/snapshot`, { headers: await admin() });
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(jpegSize(res.body)).toEqual({ width: 1280, height: 720 });
  });

  it('answers control 409 not_supported', async () => {
    for (const action of ['reboot', 'ptz_stop']) {
      const res = await t.request(`/v1/devices/${id}/control`, {
        method: 'POST',
        headers: await admin(),
        body: { action },
      });
      expect(res.status, res.text).toBe(409);
      expect(res.json()).toMatchObject({ error: 'not_supported' });
    }
  });

  it('records the moving picture as motion: an alert and its clip', { timeout: 90_000 }, async () => {
    const recordings = async () =>
      (
        (await t.request(`/v1/devices/${id}/recordings`, { headers: await t.auth('recordings:read') })).json() as {
          data: Array<{ id: string; event_type: string; size_bytes: number }>;
        }
      ).data;
    await expect.poll(async () => (await recordings()).length, { timeout: 75_000, interval: 500 }).toBeGreaterThan(0);
    const [clip] = await recordings();
    expect(clip!.event_type).toBe('motion');
    const file = path.join(t.dataDir, 'recordings', id, `${clip!.id}.mp4`);
    expect(statSync(file).size).toBe(clip!.size_bytes);
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_name',
      '-of',
      'csv=p=0',
      file,
    ]);
    expect(stdout.trim()).toBe('h264');
    const alerts = (
      (await t.request(`/v1/alerts?device_id=${id}`, { headers: await t.auth('alerts:read') })).json() as {
        data: Array<{ type: string; recording_id: string | null }>;
      }
    ).data;
    expect(alerts).toContainEqual(expect.objectContaining({ type: 'motion', recording_id: clip!.id }));
  });

  it('follows new URLs given by PATCH: the relay drops the old streams (the recorder reading one) and opens the new', async () => {
    await patch({ rtsp_url: camera.url(0, 'sub'), sub_rtsp_url: camera.url(0, 'main') });
    expect(await device()).toMatchObject({ rtsp_url: camera.url(0, 'sub'), sub_rtsp_url: camera.url(0, 'main') });
    await expect.poll(statusOf, { timeout: 20_000 }).toBe('online');
    expect(await probe(await streamUrl('main'))).toEqual({ codec_name: 'h264', width: 320, height: 180 });
    expect(await probe(await streamUrl('sub'))).toEqual({ codec_name: 'h264', width: 1280, height: 720 });
  });
});
