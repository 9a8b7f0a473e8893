import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../../src/onvif/simulator/fleet.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { metric, sceneFleet } from './scene.js';

// A camera whose stream stops while the detector takes its frames, through the started gateway:
// the simulated camera's motion event starts a check, and its RTSP server and encoder go away at
// the same moment. The check gets at most what the relay had cached, then no picture: it is
// counted as `no_frames`, the event stays motion (not dropped, although unconfirmed motion is
// dropped here: nobody looked) and its clip is written with the footage there was. Real relay,
// ffmpeg, model and SQLite.

const PASSWORD = 'stop-pw';

interface AlertBody {
  id: string;
  type: string;
  message: string;
  recording_id: string | null;
  detections: unknown[];
}

describe('detection: the camera stream stops in the middle of a check', () => {
  let fleet: Fleet;
  let t: TestGateway;
  const lines: string[] = [];

  beforeAll(async () => {
    fleet = await sceneFleet('pattern', { count: 1, firstIndex: 46, password: PASSWORD });
    t = await startTestGateway(
      {
        cameras: [
          { name: 'Gate', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: PASSWORD },
        ],
        // Motion from the camera's own events only, started when the test says.
        recording: { pre_roll_s: 1, post_roll_s: 1, max_clip_s: 10, motion: { mode: 'off' } },
        detection: { mode: 'on', unconfirmed: 'drop', max_wait_s: 60 },
      },
      { logLines: lines },
    );
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await fleet?.stop();
  }, 180_000);

  it(
    'no crash, the check counted as no_frames, the event stays motion and its clip is written',
    { timeout: 240_000 },
    async () => {
      await expect
        .poll(async () => ((await t.request('/healthz')).json() as { detector?: string }).detector, {
          timeout: 120_000,
          interval: 500,
        })
        .toBe('ready');
      // The recorder reads the camera through the relay (its segments hold the pre-roll).
      await expect
        .poll(async () => metric(await t.metrics(), 'edge_gateway_relay_readers'), { timeout: 60_000, interval: 250 })
        .toBeGreaterThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 3000));

      const camera = fleet.cameras[0]!;
      camera.trigger('motion', true);
      await fleet.rtsp!.stop(); // the camera's RTSP server and encoder go away
      await new Promise((r) => setTimeout(r, 1000));
      camera.trigger('motion', false);

      await expect
        .poll(async () => metric(await t.metrics(), 'edge_gateway_detection_checks_total{result="no_frames"}'), {
          timeout: 60_000,
          interval: 500,
        })
        .toBe(1);
      const stopped = lines.find((l) => l.includes('"msg":"motion not checked by the detector: it stays motion"'));
      expect(stopped).toMatch(/no frame from the stream|too few to decide/);
      const text = await t.metrics();
      for (const result of ['human', 'vehicle', 'motion', 'failed'])
        expect(metric(text, `edge_gateway_detection_checks_total{result="${result}"}`)).toBe(0);

      const headers = await t.auth('alerts:read');
      let alert: AlertBody | undefined;
      await expect
        .poll(
          async () => {
            alert = ((await t.request('/v1/alerts', { headers })).json() as { data: AlertBody[] }).data.find(
              (a) => a.recording_id !== null,
            );
            return alert !== undefined;
          },
          { timeout: 120_000, interval: 1000 },
        )
        .toBe(true);
      expect(alert).toMatchObject({ type: 'motion', message: 'Motion detected by Gate', detections: [] });
      const rec = (
        await t.request(`/v1/recordings/${alert!.recording_id}`, { headers: await t.auth('recordings:read') })
      ).json() as { event_type: string; size_bytes: number };
      expect(rec.event_type).toBe('motion');
      expect(rec.size_bytes).toBeGreaterThan(0);
      expect(lines.some((l) => l.includes('motion without a person or vehicle dropped'))).toBe(false);
      // The gateway goes on answering.
      expect((await t.request('/healthz')).status).toBe(200);
    },
  );
});
