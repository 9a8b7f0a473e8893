import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../../src/onvif/simulator/fleet.js';
import mqtt from 'mqtt';
import { onlineDevicesByName, startTestGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { startMosquitto, type Mosquitto } from '../support/mosquitto.js';
import { metric, sceneFleet } from './scene.js';

// Person detection end to end through the started gateway: simulated cameras play a scene made from
// darknet's person.jpg (a woman slides in from the left and stands still) or a moving test pattern;
// the gateway's own software motion detector starts episodes, the detector checks them, and the
// alerts, recordings and thumbnails say what was found. Real ffmpeg, relay, RTSP, model and SQLite.

const run = promisify(execFile);
const PASSWORD = 'detect-pw';

interface AlertBody {
  id: string;
  device_id: string;
  type: string;
  message: string;
  recording_id: string | null;
  detections: Array<{ label: string; score: number; box: { x: number; y: number; w: number; h: number } }>;
}
interface RecordingBody {
  id: string;
  device_id: string;
  event_type: string;
  detections: AlertBody['detections'];
}

const personFleet = (count: number, firstIndex: number) =>
  sceneFleet('person', { count, firstIndex, password: PASSWORD });
const patternFleet = (count: number, firstIndex: number) =>
  sceneFleet('pattern', { count, firstIndex, password: PASSWORD });

const camera = (name: string, fleet: Fleet, i: number, extra: Record<string, unknown> = {}) => ({
  name,
  onvif_url: fleet.cameras[i]!.deviceServiceUrl,
  username: 'admin',
  password: PASSWORD,
  ...extra,
});

// Software motion on every camera; short rolls so that episodes end within the scene's loop.
const recording = { pre_roll_s: 1, post_roll_s: 2, max_clip_s: 10, motion: { mode: 'on', threshold: 0.01, fps: 2 } };

async function alertsOf(t: TestGateway, deviceId: string): Promise<AlertBody[]> {
  return (
    (await t.request(`/v1/alerts?device_id=${deviceId}`, { headers: await t.auth('alerts:read') })).json() as {
      data: AlertBody[];
    }
  ).data;
}

async function recordingsOf(t: TestGateway, deviceId: string, query = ''): Promise<RecordingBody[]> {
  return (
    (
      await t.request(`/v1/devices/${deviceId}/recordings${query}`, { headers: await t.auth('recordings:read') })
    ).json() as { data: RecordingBody[] }
  ).data;
}

/** RGB of a JPEG's pixels, decoded by ffmpeg. */
async function rgbOf(
  jpeg: Buffer,
  dir: string,
): Promise<{ width: number; height: number; at: (x: number, y: number) => [number, number, number] }> {
  const file = path.join(dir, `thumb-${Date.now()}.jpg`);
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, jpeg);
  const { stdout: size } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'stream=width,height',
    '-of',
    'csv=p=0',
    file,
  ]);
  const [width, height] = size.trim().split(',').map(Number) as [number, number];
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 64 << 20,
  });
  return {
    width,
    height,
    at: (x, y) => [...stdout.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)] as [number, number, number],
  };
}

describe('detection end to end (unconfirmed: keep)', () => {
  let people: Fleet;
  let pattern: Fleet;
  let t: TestGateway;
  let broker: Mosquitto;
  let ids: Record<string, string> = {};

  beforeAll(async () => {
    people = await personFleet(3, 40);
    pattern = await patternFleet(1, 43);
    // Home Assistant gets the picture of the last detection per camera (an MQTT image entity).
    broker = await startMosquitto();
    t = await startTestGateway({
      sync: { mqtt: { url: broker.url, home_assistant: true } },
      cameras: [
        camera('Front door', people, 0),
        // The woman moves only within the left 61 % of the picture: all of it masked.
        camera('Street', people, 1, {
          motion_mask: [
            [
              [0, 0],
              [0.7, 0],
              [0.7, 1],
              [0, 1],
            ],
          ],
        }),
        // She stands at x 0.38–0.61: outside the porch (the right quarter).
        camera('Porch', people, 2, {
          zones: {
            porch: [
              [0.75, 0],
              [1, 0],
              [1, 1],
              [0.75, 1],
            ],
          },
          required_zones: ['porch'],
        }),
        camera('Pattern', pattern, 0),
      ],
      recording,
      // A long wait: the first motion comes while the model still loads (seconds on a busy machine).
      detection: { mode: 'on', unconfirmed: 'keep', max_wait_s: 60 },
    });
    ids = await onlineDevicesByName(t, ['Front door', 'Street', 'Porch', 'Pattern']);
  }, 120_000);
  afterEach(async (ctx) => {
    // What every camera got, when a test fails: which camera made what.
    if (ctx.task.result?.state !== 'fail') return;
    for (const [name, id] of Object.entries(ids))
      console.error(
        name,
        id,
        JSON.stringify((await alertsOf(t, id)).map((a) => [a.type, a.message, a.detections, a.recording_id])),
      );
  });
  afterAll(async () => {
    await t?.stop();
    await people?.stop();
    await pattern?.stop();
    await broker?.close();
  }, 180_000);

  it('/healthz reports the detector ready once the model is loaded', { timeout: 120_000 }, async () => {
    await expect
      .poll(async () => t.request('/healthz').then((r) => (r.json() as { detector?: string }).detector), {
        timeout: 110_000,
        interval: 500,
      })
      .toBe('ready');
    expect(metric(await t.metrics(), 'edge_gateway_detector_ready')).toBe(1);
  });

  it(
    'a person walking in: a human alert with detections, a recording under human, a thumbnail with her box drawn',
    { timeout: 240_000 },
    async () => {
      const front = ids['Front door']!;
      let human: AlertBody | undefined;
      await expect
        .poll(
          async () => {
            human = (await alertsOf(t, front)).find((a) => a.type === 'human' && a.recording_id !== null);
            return human !== undefined;
          },
          { timeout: 200_000, interval: 1000 },
        )
        .toBe(true);
      expect(human!.message).toBe('Person detected at Front door');
      const [best] = human!.detections;
      expect(best).toBeDefined();
      expect(best!.label).toBe('person');
      expect(best!.score).toBeGreaterThanOrEqual(0.45);
      // Her picture (300 × 570 of 1280 × 720 at y 110, she fills part of its width) slides in from
      // beyond the left edge until x 480, and the frames checked may come while she still slides (seen:
      // x 0.29, w 0.096 once detection got faster): a standing person's box, tall and narrow, from near
      // the picture's top to near its bottom, ending left of x 780.
      const box = best!.box;
      const shown = `box ${JSON.stringify(box)}`;
      expect(box.w, shown).toBeGreaterThan(0.05);
      expect(box.w, shown).toBeLessThan(0.32);
      expect(box.h / box.w, shown).toBeGreaterThan(1.5);
      expect(box.x + box.w, shown).toBeLessThan(0.7);
      expect(box.y, shown).toBeLessThan(0.3);
      expect(box.y + box.h, shown).toBeGreaterThan(0.75);

      const rec = (
        await t.request(`/v1/recordings/${human!.recording_id}`, { headers: await t.auth('recordings:read') })
      ).json() as RecordingBody;
      expect(rec.event_type).toBe('human');
      expect(rec.detections).toEqual(human!.detections);
      expect((await recordingsOf(t, front, '?event_type=human')).map((r) => r.id)).toContain(rec.id);

      // The thumbnail is written just after the clip's row.
      const thumbnail = async () =>
        t.request(`/v1/recordings/${rec.id}/thumbnail`, { headers: await t.auth('recordings:read') });
      await expect.poll(async () => (await thumbnail()).status, { timeout: 30_000, interval: 250 }).toBe(200);
      const thumb = await thumbnail();
      const dir = tempDir('eg-thumb-');
      mkdirSync(dir, { recursive: true });
      const img = await rgbOf(thumb.body, dir);
      expect(img.width).toBe(640);
      // The box's outline, half-way down, is drawn red (inside the box); the background outside it is
      // not. Its left edge when there is room left of it, else (she is at the frame's edge) its right.
      const roomLeft = box.x * img.width >= 62;
      const x = roomLeft ? Math.round(box.x * img.width) + 1 : Math.round((box.x + box.w) * img.width) - 2;
      const y = Math.round((box.y + box.h / 2) * img.height);
      const [r, g, b] = img.at(x, y);
      expect(r).toBeGreaterThan(180);
      expect(g).toBeLessThan(110);
      expect(b).toBeLessThan(110);
      const [br, bg] = img.at(roomLeft ? x - 60 : x + 60, y);
      expect(bg).toBeGreaterThan(br); // the green-grey background

      // Home Assistant: the camera's "Last detection" image entity, and its picture (retained JPEG).
      const ha = await mqtt.connectAsync(broker.url, { clientId: 'ha-test' });
      try {
        const retained = new Map<string, Buffer>();
        ha.on('message', (topic, payload) => retained.set(topic, payload));
        await ha.subscribeAsync(['homeassistant/image/#', '+/+/devices/+/image/detection'], { qos: 1 });
        await expect
          .poll(() => [...retained.keys()].find((k) => k.endsWith(`/devices/${front}/image/detection`)), {
            timeout: 10_000,
          })
          .toBeDefined();
        const config = [...retained.entries()]
          .filter(([topic]) => topic.startsWith('homeassistant/image/'))
          .map(([, p]) => JSON.parse(p.toString()) as { image_topic: string; content_type: string })
          .find((c) => c.image_topic.endsWith(`/devices/${front}/image/detection`));
        expect(config?.content_type).toBe('image/jpeg');
        const picture = retained.get(config!.image_topic)!;
        expect(picture.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
        const shown = await rgbOf(picture, dir);
        expect(shown.width).toBe(640);
      } finally {
        await ha.endAsync();
      }
    },
  );

  it('a moving pattern with no object stays motion (keep), with no detections', { timeout: 120_000 }, async () => {
    const id = ids.Pattern!;
    await expect
      .poll(async () => (await alertsOf(t, id)).length, { timeout: 110_000, interval: 1000 })
      .toBeGreaterThanOrEqual(1);
    const alerts = await alertsOf(t, id);
    expect(alerts.every((a) => a.type === 'motion' && a.detections.length === 0)).toBe(true);
    expect(alerts[0]!.message).toBe('Motion detected by Pattern');
    expect(metric(await t.metrics(), 'edge_gateway_detection_checks_total{result="motion"}')).toBeGreaterThanOrEqual(1);
  });

  it(
    'a person outside the required zone makes no human alert; a person inside the motion mask makes nothing at all',
    { timeout: 120_000 },
    async () => {
      // The porch camera's episodes were checked (its motion alerts exist once their check is done):
      // by then the street camera, playing the same scene, has had the same chances to move.
      const porch = ids.Porch!;
      await expect
        .poll(async () => (await alertsOf(t, porch)).length, { timeout: 110_000, interval: 1000 })
        .toBeGreaterThanOrEqual(1);
      await expect
        .poll(async () => (await alertsOf(t, ids['Front door']!)).length, { timeout: 60_000, interval: 1000 })
        .toBeGreaterThanOrEqual(2);
      const porchAlerts = await alertsOf(t, porch);
      expect(porchAlerts.filter((a) => a.type === 'human')).toEqual([]);
      expect(porchAlerts.every((a) => a.detections.length === 0)).toBe(true);
      expect(await alertsOf(t, ids.Street!)).toEqual([]);
      expect(await recordingsOf(t, ids.Street!)).toEqual([]);
      const text = await t.metrics();
      expect(metric(text, 'edge_gateway_detection_checks_total{result="human"}')).toBeGreaterThanOrEqual(1);
      expect(metric(text, 'edge_gateway_detection_run_seconds_count')).toBeGreaterThanOrEqual(2);
    },
  );
});

describe('detection end to end (unconfirmed: drop)', () => {
  let pattern: Fleet;
  let t: TestGateway;
  const lines: string[] = [];

  beforeAll(async () => {
    pattern = await patternFleet(1, 44);
    t = await startTestGateway(
      {
        cameras: [camera('Pattern', pattern, 0)],
        recording,
        detection: { mode: 'on', unconfirmed: 'drop', max_wait_s: 60 },
      },
      { logLines: lines },
    );
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await pattern?.stop();
  }, 180_000);

  it('motion in which nothing is found leaves no alert, no recording, no file', { timeout: 240_000 }, async () => {
    // A clip part of the dropped episode came due and was not written.
    await expect
      .poll(() => lines.some((l) => l.includes('"msg":"clip of dropped motion not written"')), {
        timeout: 220_000,
        interval: 1000,
      })
      .toBe(true);
    expect(
      lines.some((l) => l.includes('"msg":"motion without a person or vehicle dropped (detection.unconfirmed: drop)"')),
    ).toBe(true);
    expect(metric(await t.metrics(), 'edge_gateway_detection_checks_total{result="motion"}')).toBeGreaterThanOrEqual(1);
    const { data: alerts } = (await t.request('/v1/alerts', { headers: await t.auth('alerts:read') })).json() as {
      data: AlertBody[];
    };
    expect(alerts).toEqual([]);
    const storage = path.join(t.dataDir, 'recordings');
    const files = readdirSync(storage, { recursive: true }).filter((f) => String(f).endsWith('.mp4'));
    expect(files).toEqual([]);
  });
});

describe('detection end to end: the model is missing', () => {
  let pattern: Fleet;
  let t: TestGateway;

  beforeAll(async () => {
    pattern = await patternFleet(1, 45);
    t = await startTestGateway({
      cameras: [camera('Pattern', pattern, 0)],
      recording,
      detection: { mode: 'on', model_dir: tempDir('eg-no-model-') },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await pattern?.stop();
  }, 180_000);

  it(
    '/healthz says the detector failed, and motion is recorded as motion all the same',
    { timeout: 120_000 },
    async () => {
      await expect
        .poll(async () => ((await t.request('/healthz')).json() as { detector?: string }).detector, {
          timeout: 60_000,
          interval: 250,
        })
        .toBe('failed');
      expect(metric(await t.metrics(), 'edge_gateway_detector_ready')).toBe(0);
      const headers = await t.auth('alerts:read');
      await expect
        .poll(
          async () =>
            ((await t.request('/v1/alerts', { headers })).json() as { data: AlertBody[] }).data.filter(
              (a) => a.recording_id !== null,
            ).length,
          { timeout: 100_000, interval: 1000 },
        )
        .toBeGreaterThanOrEqual(1);
      const { data } = (await t.request('/v1/alerts', { headers })).json() as { data: AlertBody[] };
      expect(data.every((a) => a.type === 'motion' && a.detections.length === 0)).toBe(true);
    },
  );
});
