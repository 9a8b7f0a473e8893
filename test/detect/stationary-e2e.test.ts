import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../../src/onvif/simulator/fleet.js';
import { onlineDevicesByName, startTestGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { CAR_PX, metric, sceneFleet } from './scene.js';

// Stationary objects and loitering through the started gateway: simulated cameras loop a parked car
// (darknet's dog.jpg pickup truck, which the model calls a car) with motion beside it, the same car
// moved by a quarter of the frame, and a woman (darknet's person.jpg) who walks in and stays in a
// loitering zone; then the gateway restarts on the same database. Real ffmpeg, relay, software
// motion, model, SQLite; the alerts as the API lists them.

const PASSWORD = 'stationary-pw';

interface Detection {
  label: string;
  score: number;
  box: { x: number; y: number; w: number; h: number };
  stationary?: true;
}
interface AlertBody {
  id: string;
  type: string;
  message: string;
  created_at: string;
  recording_id: string | null;
  detections: Detection[];
}

const camera = (name: string, fleet: Fleet, extra: Record<string, unknown> = {}) => ({
  name,
  onvif_url: fleet.cameras[0]!.deviceServiceUrl,
  username: 'admin',
  password: PASSWORD,
  ...extra,
});

// Software motion on every camera, sensitive enough for the small square beside the car (0.35 % of
// the picture); short rolls so that an episode ends within ten seconds.
const recording = { pre_roll_s: 1, post_roll_s: 2, max_clip_s: 10, motion: { mode: 'on', threshold: 0.002, fps: 2 } };
// A long wait: the first motion comes while the model still loads (seconds on a busy machine).
const detection = { mode: 'on', unconfirmed: 'keep', max_wait_s: 60 };
/** Where the woman stands once in (her feet at about x 0.49, y 0.94), required and with loitering_s 8. */
const DOOR = [
  [0.3, 0.6],
  [0.7, 0.6],
  [0.7, 1],
  [0.3, 1],
];

const vehicles = (a: AlertBody) => a.detections.filter((d) => d.label !== 'person');
/** Near the car's left edge at A or B (0–1 of the frame). */
const nearX = (d: Detection, px: number) => Math.abs(d.box.x - px / 1280) < 0.06;

/** A camera's alerts, oldest first. */
async function alertsOf(t: TestGateway, deviceId: string): Promise<AlertBody[]> {
  const { data } = (
    await t.request(`/v1/alerts?device_id=${deviceId}&limit=100`, { headers: await t.auth('alerts:read') })
  ).json() as { data: AlertBody[] };
  return data.sort((a, b) => a.created_at.localeCompare(b.created_at));
}

describe('stationary objects and loitering end to end', () => {
  const dataDir = tempDir('eg-stationary-');
  let parked: Fleet;
  let moving: Fleet | undefined;
  let stays: Fleet | undefined;
  let t: TestGateway;
  let stopped = false;
  let again: TestGateway | undefined;
  let ids: Record<string, string> = {};

  beforeAll(async () => {
    parked = await sceneFleet('car-parked', { count: 1, firstIndex: 70, password: PASSWORD });
    moving = await sceneFleet('car-moves', { count: 1, firstIndex: 71, password: PASSWORD });
    stays = await sceneFleet('person-stays', { count: 1, firstIndex: 72, password: PASSWORD });
    t = await startTestGateway(
      {
        cameras: [
          camera('Drive', parked),
          camera('Lane', moving),
          camera('Door', stays, { zones: { door: DOOR }, required_zones: ['door'], loitering_zones: { door: 8 } }),
        ],
        recording,
        detection,
      },
      { dataDir, keepDataDir: true },
    );
    ids = await onlineDevicesByName(t, ['Drive', 'Lane', 'Door']);
  }, 180_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    const gateway = again ?? t;
    for (const [name, id] of Object.entries(ids))
      console.error(name, JSON.stringify((await alertsOf(gateway, id)).map((a) => [a.type, a.message, a.detections])));
  });
  afterAll(async () => {
    await again?.stop();
    if (!stopped) await t?.stop();
    await parked?.stop();
    await moving?.stop();
    await stays?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 180_000);

  it(
    'a parked car with motion beside it: a vehicle alert at the first check, then motion alerts listing it stationary',
    { timeout: 240_000 },
    async () => {
      const drive = ids.Drive!;
      await expect
        .poll(async () => (await alertsOf(t, drive)).length, { timeout: 220_000, interval: 1000 })
        .toBeGreaterThanOrEqual(4);
      const [first, ...later] = await alertsOf(t, drive);
      // Nothing was remembered of this camera: what the first check found alerts once.
      expect(first!.type).toBe('vehicle');
      expect(first!.message).toBe('Vehicle detected at Drive');
      const car = vehicles(first!)[0]!;
      expect(nearX(car, CAR_PX.ax), JSON.stringify(car)).toBe(true);
      expect(car.stationary).toBeUndefined();
      // From then on: no vehicle alert; the car is listed, marked stationary, with the motion.
      expect(later.map((a) => a.type)).toEqual(later.map(() => 'motion'));
      const listed = later.filter((a) => vehicles(a).some((d) => d.stationary === true && nearX(d, CAR_PX.ax)));
      expect(listed.length).toBeGreaterThanOrEqual(2);
      expect(listed[0]!.message).toBe('Motion detected by Drive');
      expect(metric(await t.metrics(), 'edge_gateway_detection_checks_total{result="quiet"}')).toBeGreaterThanOrEqual(
        2,
      );
    },
  );

  it(
    'the car moved by a quarter of the frame: an alert at its new place, then none there',
    { timeout: 240_000 },
    async () => {
      const lane = ids.Lane!;
      /**
       * A check that found the car at one place (it alerted then, or listed it stationary), then a
       * vehicle alert for it at the other, not stationary (which place comes first depends on where
       * the loop was when the gateway started).
       */
      const movedAfterFound = (alerts: AlertBody[]) => {
        for (const [from, to] of [
          [CAR_PX.ax, CAR_PX.bx],
          [CAR_PX.bx, CAR_PX.ax],
        ] as const) {
          const standing = alerts.findIndex((a) => vehicles(a).some((d) => nearX(d, from)));
          if (standing < 0) continue;
          const moved = alerts
            .slice(standing + 1)
            .find((a) => a.type === 'vehicle' && vehicles(a).some((d) => !d.stationary && nearX(d, to)));
          if (moved) return moved;
        }
        return null;
      };
      let moved: AlertBody | null = null;
      await expect
        .poll(async () => (moved = movedAfterFound(await alertsOf(t, lane))) !== null, {
          timeout: 220_000,
          interval: 1000,
        })
        .toBe(true);
      expect(moved!.message).toBe('Vehicle detected at Lane');
      // Once found there, it is stationary there too.
      const place = vehicles(moved!)[0]!;
      await expect
        .poll(
          async () =>
            (await alertsOf(t, lane)).some(
              (a) =>
                a.created_at > moved!.created_at &&
                vehicles(a).some((d) => d.stationary && nearX(d, place.box.x * 1280)),
            ),
          { timeout: 120_000, interval: 1000 },
        )
        .toBe(true);
    },
  );

  it(
    'a person staying in a loitering zone: one alert once she has stayed its time, none on the way',
    { timeout: 240_000 },
    async () => {
      const door = ids.Door!;
      const humans = async () => (await alertsOf(t, door)).filter((a) => a.type === 'human');
      await expect.poll(async () => (await humans()).length, { timeout: 200_000, interval: 1000 }).toBe(1);
      const [alert] = await humans();
      expect(alert!.message).toBe('Person loitering at Door');
      const person = alert!.detections.find((d) => d.label === 'person');
      expect(person, JSON.stringify(alert!.detections)).toBeDefined();
      const feet = [person!.box.x + person!.box.w / 2, person!.box.y + person!.box.h];
      expect(feet[0]).toBeGreaterThan(0.3);
      expect(feet[0]).toBeLessThan(0.7);
      expect(feet[1]).toBeGreaterThan(0.6);
      // She stays for most of a minute: no second alert meanwhile; the alert has its clip.
      await new Promise((r) => setTimeout(r, 20_000));
      expect(await humans()).toHaveLength(1);
      await expect
        .poll(async () => (await humans())[0]!.recording_id, { timeout: 30_000, interval: 1000 })
        .not.toBeNull();
      expect(metric(await t.metrics(), 'edge_gateway_detection_rechecks_total{result="human"}')).toBeGreaterThanOrEqual(
        1,
      );
    },
  );

  it('after a restart the parked car is still known: no vehicle alert', { timeout: 240_000 }, async () => {
    const drive = ids.Drive!;
    stopped = true;
    await t.stop();
    // Only the parked car's camera stays on: the others would only cost CPU here.
    await moving?.stop();
    await stays?.stop();
    moving = stays = undefined;
    const restartedAt = new Date().toISOString();
    again = await startTestGateway(
      { cameras: [camera('Drive', parked)], recording, detection },
      { dataDir, keepDataDir: true },
    );
    expect((await onlineDevicesByName(again, ['Drive'])).Drive).toBe(drive);
    const since = async () => (await alertsOf(again!, drive)).filter((a) => a.created_at > restartedAt);
    await expect
      .poll(async () => (await since()).length, { timeout: 220_000, interval: 1000 })
      .toBeGreaterThanOrEqual(2);
    const after = await since();
    expect(after.map((a) => a.type)).toEqual(after.map(() => 'motion'));
    expect(after.some((a) => vehicles(a).some((d) => d.stationary === true && nearX(d, CAR_PX.ax)))).toBe(true);
  });
});
