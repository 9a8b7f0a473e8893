import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../../src/onvif/simulator/fleet.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { metric, sceneFleet } from './scene.js';

// 16 cameras in motion at the same moment, one detector thread and a queue of 2: at most 3 checks
// hold frames (queue_size + threads), the rest are dropped before any frame is decoded and counted,
// their events stay motion, and every camera's clip is written all the same.

const CAMERAS = 16;
const PASSWORD = 'overload-pw';
let fleet: Fleet;
let t: TestGateway;
const lines: string[] = [];

beforeAll(async () => {
  fleet = await sceneFleet('pattern', { count: CAMERAS, firstIndex: 60, password: PASSWORD });
  t = await startTestGateway(
    {
      cameras: fleet.cameras.map((c, i) => ({
        name: `Cam ${i}`,
        onvif_url: c.deviceServiceUrl,
        username: 'admin',
        password: PASSWORD,
      })),
      recording: { pre_roll_s: 1, post_roll_s: 2, max_clip_s: 10, motion: { mode: 'on', threshold: 0.01, fps: 2 } },
      detection: { mode: 'on', threads: 1, queue_size: 2, max_wait_s: 20 },
    },
    { logLines: lines },
  );
}, 180_000);
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
}, 180_000);

describe('detection under overload', () => {
  it(
    '16 cameras in motion: checks in flight stay bounded, the excess is dropped and counted, every camera gets its motion clip',
    { timeout: 400_000 },
    async () => {
      const headers = await t.auth('recordings:read alerts:read devices:read');
      const inFlight: number[] = [];
      const queued: number[] = [];
      const frameBytes: number[] = [];
      const camerasWithClip = async () => {
        const text = await t.metrics();
        inFlight.push(metric(text, 'edge_gateway_detection_in_flight'));
        queued.push(metric(text, 'edge_gateway_detection_queued'));
        frameBytes.push(metric(text, 'edge_gateway_detection_frame_bytes'));
        const { data } = (await t.request('/v1/alerts?limit=200', { headers })).json() as {
          data: Array<{ device_id: string; recording_id: string | null }>;
        };
        return new Set(data.filter((a) => a.recording_id !== null).map((a) => a.device_id)).size;
      };
      await expect.poll(camerasWithClip, { timeout: 380_000, interval: 500 }).toBe(CAMERAS);

      const text = await t.metrics();
      expect(metric(text, 'edge_gateway_detection_checks_total{result="dropped"}')).toBeGreaterThanOrEqual(1);
      // The detector threads' own heaps, which the process's heap series leave out.
      const workerHeap = metric(text, 'edge_gateway_detection_worker_heap_bytes{kind="used"}');
      expect(workerHeap).toBeGreaterThan(0);
      expect(metric(text, 'edge_gateway_detection_worker_heap_bytes{kind="physical"}')).toBeGreaterThanOrEqual(
        workerHeap,
      );
      expect(Math.max(...inFlight)).toBeLessThanOrEqual(3);
      expect(Math.max(...queued)).toBeLessThanOrEqual(2);
      // The frames they hold: each check one whole (decoded at most 1280 px wide, RGB) and at most
      // two kept for its thumbnail at 640 px.
      expect(Math.max(...frameBytes)).toBeGreaterThan(0);
      expect(Math.max(...frameBytes)).toBeLessThanOrEqual(3 * (1280 * 720 * 3 + 2 * 640 * 360 * 3));
      expect(
        lines.some(
          (l) =>
            l.includes('"msg":"motion not checked by the detector: it stays motion"') &&
            l.includes('checks are under way already'),
        ),
      ).toBe(true);

      // Every clip is listed under motion and its file is there (the download answers).
      const { data: devices } = (await t.request('/v1/devices?limit=200', { headers })).json() as {
        data: Array<{ id: string }>;
      };
      for (const d of devices) {
        const { data: recs } = (await t.request(`/v1/devices/${d.id}/recordings`, { headers })).json() as {
          data: Array<{ id: string; event_type: string; size_bytes: number }>;
        };
        expect(recs.length, d.id).toBeGreaterThanOrEqual(1);
        expect(recs.every((r) => r.event_type === 'motion' && r.size_bytes > 0)).toBe(true);
      }
    },
  );
});
