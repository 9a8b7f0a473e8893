import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnvifSession } from '../../../src/onvif/library.js';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { readPtzMarkers } from '../../../src/onvif/simulator/ptz-picture.js';
import { CLOCK_STRIP } from '../../../src/onvif/simulator/rtsp.js';

// The simulated camera's live video, checked with a real RTSP client (ffprobe): the URI the camera
// gives over ONVIF serves H.264 at the profile's size, behind Digest authentication; with
// clockStrip, its pictures carry the wall clock the benchmarks read back; with ptzPicture, they follow
// the camera's pan and tilt.

const run = promisify(execFile);
let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'pw',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
});
afterAll(() => fleet?.stop());

async function probe(url: string): Promise<{ codec_name: string; width: number; height: number }> {
  const { stdout } = await run(
    'ffprobe',
    ['-v', 'error', '-rtsp_transport', 'tcp', '-show_entries', 'stream=codec_name,width,height', '-of', 'json', url],
    { timeout: 20_000 },
  );
  const streams = (JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; height: number }> })
    .streams;
  return streams[0]!;
}
const withCredentials = (url: string, user: string, password: string) =>
  url.replace('rtsp://', `rtsp://${user}:${password}@`);

describe('simulated camera RTSP', () => {
  it('serves H.264 main and sub streams at the URIs GetStreamUri gives', async () => {
    const cam = fleet.cameras[0]!;
    const s = await OnvifSession.connect({ url: cam.deviceServiceUrl, username: 'admin', password: 'pw' });
    try {
      const main = await s.streamUri('Profile_1');
      const sub = await s.streamUri('Profile_2');
      expect(main).toMatch(/^rtsp:\/\/127\.0\.0\.1:\d+\/cam0\/main$/);
      expect(await probe(withCredentials(main!, 'admin', 'pw'))).toEqual({
        codec_name: 'h264',
        width: 1280,
        height: 720,
      });
      expect(await probe(withCredentials(sub!, 'admin', 'pw'))).toEqual({
        codec_name: 'h264',
        width: 320,
        height: 180,
      });
    } finally {
      s.close();
    }
  });

  it('refuses clients without the right Digest credentials', async () => {
    const url = fleet.rtsp!.url(0, 'main');
    for (const u of [url, withCredentials(url, 'admin', 'wrong')]) {
      await expect(probe(u)).rejects.toThrow(/401 Unauthorized/);
    }
  });

  it(
    'burns the wall clock into the main picture with clockStrip (the clock read back from a decoded frame)',
    { timeout: 60_000 },
    async () => {
      const clocked = await startFleet({
        count: 1,
        host: '127.0.0.1',
        basePort: 0,
        username: 'admin',
        password: 'pw',
        discovery: null,
        rtspPort: 0,
        clockStrip: true,
        logger: pino({ level: 'silent' }),
      });
      try {
        const W = CLOCK_STRIP.bits * CLOCK_STRIP.pitch;
        const url = withCredentials(clocked.rtsp!.url(0, 'main'), 'admin', 'pw');
        const { stdout } = await run(
          'ffmpeg',
          [
            '-v',
            'error',
            '-rtsp_transport',
            'tcp',
            '-i',
            url,
            '-frames:v',
            '1',
            '-vf',
            `crop=${W}:${CLOCK_STRIP.size}:0:${CLOCK_STRIP.y}`,
            '-pix_fmt',
            'gray',
            '-f',
            'rawvideo',
            'pipe:1',
          ],
          {
            encoding: 'buffer',
            timeout: 30_000,
          },
        );
        const read = Date.now();
        const row = (CLOCK_STRIP.size >> 1) * W;
        let clock = 0;
        for (let k = 0; k < CLOCK_STRIP.bits; k++)
          if (stdout[row + k * CLOCK_STRIP.pitch + (CLOCK_STRIP.size >> 1)]! > 128) clock += 2 ** k;
        // The picture was made before it was read (modulo 2^20 ms): not after, and not minutes before.
        const age = (((read - clock) % 2 ** CLOCK_STRIP.bits) + 2 ** CLOCK_STRIP.bits) % 2 ** CLOCK_STRIP.bits;
        expect(age).toBeLessThan(30_000);
      } finally {
        await clocked.stop();
      }
    },
  );

  it(
    'pans and tilts the picture with ptzPicture: the markers read back from a decoded frame say where it points',
    { timeout: 90_000 },
    async () => {
      const moving = await startFleet({
        count: 1,
        host: '127.0.0.1',
        basePort: 0,
        username: 'admin',
        password: 'pw',
        discovery: null,
        rtspPort: 0,
        ptzPicture: true,
        logger: pino({ level: 'silent' }),
      });
      const cam = moving.cameras[0]!;
      const s = await OnvifSession.connect({ url: cam.deviceServiceUrl, username: 'admin', password: 'pw' });
      try {
        await s.describe();
        const url = withCredentials(moving.rtsp!.url(0, 'main'), 'admin', 'pw');
        const markers = async () => {
          const { stdout } = await run(
            'ffmpeg',
            [
              '-v',
              'error',
              '-rtsp_transport',
              'tcp',
              '-i',
              url,
              '-frames:v',
              '1',
              '-pix_fmt',
              'gray',
              '-f',
              'rawvideo',
              'pipe:1',
            ],
            { encoding: 'buffer', timeout: 30_000, maxBuffer: 4 << 20 },
          );
          return readPtzMarkers(stdout, 1280, 720);
        };
        const home = await markers();
        expect(home?.pan).toBeCloseTo(0, 1);
        expect(home?.tilt).toBeCloseTo(0, 1);

        await s.ptzMove({ pan: 1, tilt: -0.5, zoom: 0 }, 5000);
        await new Promise((r) => setTimeout(r, 800));
        await s.ptzStop();
        const at = cam.ptz!.position();
        expect(at.pan).toBeGreaterThan(0.2);
        // The encoder takes a command each 100 ms; four make the picture follow.
        await new Promise((r) => setTimeout(r, 1000));
        const moved = await markers();
        expect(Math.abs(moved!.pan - at.pan)).toBeLessThan(0.05);
        expect(Math.abs(moved!.tilt - at.tilt)).toBeLessThan(0.05);
      } finally {
        s.close();
        await moving.stop();
      }
    },
  );
});
