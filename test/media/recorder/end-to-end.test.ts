import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { startSimulatedRtsp, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { metric } from '../../support/metrics.js';

// Recording end to end: a simulated camera (ONVIF events + H.264 over gst-rtsp-server) adopted by
// the started gateway; its recorder copies the main stream through the relay into RAM segments;
// an event becomes an alert and a clip with pre- and post-roll, downloadable with Range.

const run = promisify(execFile);
const PRE_S = 2;
const POST_S = 2;
const MAX_CLIP_S = 10;
let fleet: Fleet;
let t: TestGateway;
let deviceId = '';
/** The camera's RTSP server after the restart test brought it back. */
let restarted: SimulatedRtsp | null = null;

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'rec-secret',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [
      { name: 'Driveway', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'rec-secret' },
    ],
    recording: { pre_roll_s: PRE_S, post_roll_s: POST_S, max_clip_s: MAX_CLIP_S },
  });
  deviceId = await firstOnlineDevice(t);
});
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
  await restarted?.stop();
});

const storageDir = () => path.join(t.dataDir, 'recordings');
const segmentDir = () => path.join(t.dataDir, 'segments', deviceId);
function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name));
  } catch {
    return [];
  }
}

interface RecordingBody {
  id: string;
  device_id: string;
  event_type: string;
  started_at: string;
  ended_at: string;
  size_bytes: number;
}

async function recordings(): Promise<RecordingBody[]> {
  const res = await t.request(`/v1/devices/${deviceId}/recordings`, { headers: await t.auth('recordings:read') });
  return (res.json() as { data: RecordingBody[] }).data;
}

describe('recording', () => {
  it('keeps the last seconds in RAM and writes nothing to storage without events', async () => {
    await expect.poll(() => filesUnder(segmentDir()).length, { timeout: 15_000 }).toBeGreaterThan(2);
    await new Promise((r) => setTimeout(r, 3000));
    expect(filesUnder(storageDir())).toEqual([]);
    // The ring stays bounded: pre-roll plus a margin, not everything since the start.
    expect(filesUnder(segmentDir()).length).toBeLessThan(40);
  });

  it('turns an event into one alert and one clip with pre- and post-roll, downloadable with Range', async () => {
    const camera = fleet.cameras[0]!;
    // The ring must hold the pre-roll before the event starts.
    await expect.poll(() => filesUnder(segmentDir()).length, { timeout: 15_000 }).toBeGreaterThan(PRE_S + 1);
    const triggeredAt = Date.now();
    camera.trigger('motion', true);
    await new Promise((r) => setTimeout(r, 1000));
    camera.trigger('human', true); // the episode becomes a "human" one
    await new Promise((r) => setTimeout(r, 1500));
    camera.trigger('motion', false);
    camera.trigger('human', false);
    const stoppedAt = Date.now();

    await expect.poll(async () => (await recordings()).length, { timeout: 20_000 }).toBe(1);
    const [rec] = await recordings();
    expect(rec).toMatchObject({ device_id: deviceId, event_type: 'human' });
    // The clip opens on a keyframe at or before start − pre-roll (the camera's GOP is 1 s; the
    // event reaches the gateway a little after the trigger, which only moves the start later).
    expect(Date.parse(rec!.started_at)).toBeLessThanOrEqual(triggeredAt - PRE_S * 1000 + 1000);
    expect(Date.parse(rec!.started_at)).toBeGreaterThan(triggeredAt - PRE_S * 1000 - 2000);

    // What ffprobe reads: H.264 and a duration of pre + event + post within one keyframe interval.
    const file = filesUnder(storageDir()).find((f) => f.endsWith('.mp4'))!;
    expect(statSync(file).size).toBe(rec!.size_bytes);
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'format=duration:stream=codec_name,width',
      '-of',
      'json',
      file,
    ]);
    const probed = JSON.parse(stdout) as {
      format: { duration: string };
      streams: Array<{ codec_name: string; width: number }>;
    };
    expect(probed.streams[0]).toMatchObject({ codec_name: 'h264', width: 1280 });
    const expected = (stoppedAt - triggeredAt) / 1000 + PRE_S + POST_S;
    // Longer by up to one GOP (1 s: the keyframe before the pre-roll) and the events' delivery.
    expect(Number(probed.format.duration)).toBeGreaterThan(expected - 0.5);
    expect(Number(probed.format.duration)).toBeLessThan(expected + 1.5);
    // Decodes from its first frame on (it starts on a keyframe).
    const decoded = await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
    expect(decoded.stderr).toBe('');
    // The thumbnail follows the row (a listed clip does not wait for it).
    await expect
      .poll(() => filesUnder(storageDir()).filter((f) => f.endsWith('.jpg')).length, { timeout: 10_000 })
      .toBe(1);
    const thumbnail = await t.request(`/v1/recordings/${rec!.id}/thumbnail`, {
      headers: await t.auth('recordings:read'),
    });
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers['content-type']).toBe('image/jpeg');
    expect(thumbnail.body.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff])); // a JPEG

    // The alert: one, of the most specific type, linked to the clip.
    const alerts = (await t.request('/v1/alerts', { headers: await t.auth('alerts:read') })).json() as {
      data: Array<{ type: string; recording_id: string | null; device_id: string }>;
    };
    const mine = alerts.data.filter((a) => a.device_id === deviceId && a.type !== 'device_offline');
    expect(mine).toEqual([expect.objectContaining({ type: 'human', recording_id: rec!.id })]);

    // Download with Range: exactly those bytes of the file.
    const bytes = readFileSync(file);
    const ranged = await t.request(`/v1/recordings/${rec!.id}/download`, {
      headers: { ...(await t.auth('recordings:write')), range: 'bytes=100-1099' },
    });
    expect(ranged.status).toBe(206);
    expect(Buffer.compare(ranged.body, bytes.subarray(100, 1100))).toBe(0);
  });

  it(
    'holds in RAM only the part being recorded of an episode kept open by one event after another, and says how much',
    { timeout: 90_000 },
    async () => {
      const camera = fleet.cameras[0]!;
      const segments = () => filesUnder(segmentDir()).filter((f) => /^r\d+-\d+\.mp4$/.test(path.basename(f)));
      const before = (await recordings()).length;
      // 36 s of a start and a stop every 1.5 s, each start within the last stop's post-roll: one
      // episode, whose 10 s parts are written as it goes. The camera's GOP is 1 s, a segment each.
      let most = 0;
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      for (const started = Date.now(); Date.now() - started < 36_000;) {
        camera.trigger('motion', true);
        await sleep(750);
        camera.trigger('motion', false);
        await sleep(750);
        most = Math.max(most, segments().length);
      }
      // Its first three parts were listed while it was still open...
      expect((await recordings()).length).toBeGreaterThanOrEqual(before + 3);
      // ...and the RAM held at most the part being recorded, the pre-roll and the margin (about 24
      // segments), not the 36 s since the episode began.
      expect(most).toBeLessThan(PRE_S + 10 + MAX_CLIP_S + 2);
      // /metrics tells the bytes held, as the files add up (both move as the camera sends).
      const onDisk = () => segments().reduce((sum, f) => sum + statSync(f).size, 0);
      await expect
        .poll(async () => Math.abs(metric(await t.metrics(), 'edge_gateway_recorder_ram_bytes') / onDisk() - 1), {
          timeout: 10_000,
        })
        .toBeLessThan(0.15);
      // The episode ends a post-roll after the last stop, with its last part.
      await expect
        .poll(async () => (await recordings()).length, { timeout: 20_000 })
        .toBeGreaterThanOrEqual(before + 4);
    },
  );

  it('records again after the camera stream goes away and comes back', async () => {
    const newest = () => filesUnder(segmentDir()).sort().at(-1);
    await expect.poll(newest, { timeout: 10_000 }).toBeDefined();
    const port = fleet.rtsp!.port;
    await fleet.rtsp!.stop(); // the camera's RTSP server and encoder go away
    const lastBefore = newest();
    restarted = await startSimulatedRtsp({
      cameras: 1,
      host: '127.0.0.1',
      port,
      username: 'admin',
      password: 'rec-secret',
      logger: pino({ level: 'silent' }),
    });
    // A new ffmpeg run (its own file prefix) produces segments again; bench/recording times it.
    await expect.poll(newest, { timeout: 30_000, interval: 250 }).not.toBe(lastBefore);
    const runs = new Set(filesUnder(segmentDir()).map((f) => path.basename(f).split('-')[0]));
    expect(runs.size).toBeGreaterThanOrEqual(1);
    // And an event is recorded from the new stream.
    const before = (await recordings()).length;
    fleet.cameras[0]!.trigger('vehicle', true);
    await new Promise((r) => setTimeout(r, 1000));
    fleet.cameras[0]!.trigger('vehicle', false);
    await expect.poll(async () => (await recordings()).length, { timeout: 20_000 }).toBe(before + 1);
    expect((await recordings())[0]).toMatchObject({ event_type: 'vehicle' });
  });
});
