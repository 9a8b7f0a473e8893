import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';

// Software motion detection end to end: motion.mode "on" makes the recorder watch the camera's
// sub stream (ffmpeg → small grey frames → frame difference). The simulated camera's test picture
// moves all the time, so motion starts and never stops: the episode is cut into max_clip_s parts.

const run = promisify(execFile);
const MAX_CLIP_S = 10;
let fleet: Fleet;
let t: TestGateway;
let deviceId = '';

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'motion-pw',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [
      { name: 'Garden', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'motion-pw' },
    ],
    recording: {
      pre_roll_s: 1,
      post_roll_s: 1,
      max_clip_s: MAX_CLIP_S,
      motion: { mode: 'on', threshold: 0.01, fps: 2 },
    },
  });
  deviceId = await firstOnlineDevice(t);
});
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
});

describe('software motion detection', () => {
  it('records a moving picture as motion, in parts of max_clip_s, with one alert', { timeout: 60_000 }, async () => {
    const list = async () =>
      (
        (
          await t.request(`/v1/devices/${deviceId}/recordings`, { headers: await t.auth('recordings:read') })
        ).json() as { data: Array<{ id: string; event_type: string }> }
      ).data;
    await expect.poll(async () => (await list()).length, { timeout: 40_000, interval: 500 }).toBeGreaterThanOrEqual(1);
    const [first] = await list();
    expect(first!.event_type).toBe('motion');

    const alerts = (
      (await t.request('/v1/alerts', { headers: await t.auth('alerts:read') })).json() as {
        data: Array<{ type: string; recording_id: string | null }>;
      }
    ).data;
    expect(alerts.filter((a) => a.type === 'motion')).toEqual([expect.objectContaining({ recording_id: first!.id })]);

    // A full part: max_clip_s long (within a keyframe interval), and it decodes.
    const file = path.join(t.dataDir, 'recordings', deviceId, `${first!.id}.mp4`);
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'format=duration',
      '-of',
      'csv=p=0',
      file,
    ]);
    expect(Number(stdout)).toBeGreaterThan(MAX_CLIP_S - 0.5);
    expect(Number(stdout)).toBeLessThan(MAX_CLIP_S + 1.5);
  });
});
