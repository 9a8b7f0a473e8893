import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { launchChromium, newContext } from '../../support/browser.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';

// A clip recorded from the simulated camera by the started gateway plays and seeks in Debian's
// chromium from its playback_url, on the gateway's own origin as the web app will use it: no
// Authorization header, the media element fetching byte ranges with the ticket in the URL.

const run = promisify(execFile);
let fleet: Fleet;
let t: TestGateway;
let browser: Browser;
let deviceId = '';

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'play-secret',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [
      { name: 'Garden', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'play-secret' },
    ],
    recording: { pre_roll_s: 2, post_roll_s: 2 },
  });
  deviceId = await firstOnlineDevice(t);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await fleet?.stop();
});

interface RecordingJson {
  id: string;
  duration_s: number;
  playback_url: string;
}

/** The top-level MP4 boxes of a file, in order. */
function topLevelBoxes(file: Buffer): string[] {
  const types: string[] = [];
  for (let at = 0; at + 8 <= file.length;) {
    let size = file.readUInt32BE(at);
    if (size === 1) size = Number(file.readBigUInt64BE(at + 8));
    types.push(file.toString('latin1', at + 4, at + 8));
    if (size < 8) break;
    at += size;
  }
  return types;
}

async function recordClip(): Promise<RecordingJson> {
  // The ring must hold the pre-roll before the event starts (1 s segments: the camera's GOP).
  const segments = path.join(t.dataDir, 'segments', deviceId);
  await expect
    .poll(() => (existsSync(segments) ? readdirSync(segments).length : 0), { timeout: 20_000 })
    .toBeGreaterThan(3);
  const camera = fleet.cameras[0]!;
  camera.trigger('motion', true);
  await new Promise((r) => setTimeout(r, 4000));
  camera.trigger('motion', false);
  const list = async () => {
    const res = await t.request(`/v1/devices/${deviceId}/recordings`, { headers: await t.auth('recordings:read') });
    return (res.json() as { data: RecordingJson[] }).data;
  };
  await expect.poll(async () => (await list()).length, { timeout: 30_000 }).toBe(1);
  return (await list())[0]!;
}

describe('a recorded clip in a <video> element', () => {
  it('is a faststart MP4 (index before the media) that chromium plays and seeks to the middle from its playback_url', async () => {
    const rec = await recordClip();
    const file = path.join(t.dataDir, 'recordings', t.gw.store.getRecording(rec.id)!.fileName);

    // As the recorder finalises it: the index (moov) before the media (mdat), so a player starts
    // with the first bytes instead of fetching the end first.
    const boxes = topLevelBoxes(readFileSync(file));
    expect(boxes[0]).toBe('ftyp');
    expect(boxes.indexOf('moov')).toBeGreaterThan(0);
    expect(boxes.indexOf('moov')).toBeLessThan(boxes.indexOf('mdat'));
    const probed = JSON.parse(
      (
        await run('ffprobe', [
          '-v',
          'error',
          '-show_entries',
          'format=format_name,duration:stream=codec_type,codec_name',
          '-of',
          'json',
          file,
        ])
      ).stdout,
    ) as {
      format: { format_name: string; duration: string };
      streams: Array<{ codec_type: string; codec_name: string }>;
    };
    expect(probed.format.format_name).toContain('mp4');
    expect(probed.streams.find((s) => s.codec_type === 'video')?.codec_name).toBe('h264');

    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      // What the media element asked the play route for, as chromium saw the answers (the gateway
      // counts an answer only once it is sent to the end, which one chromium cuts short is not).
      const plays: Array<{ status: number; range: string | undefined }> = [];
      page.on('response', (res) => {
        if (new URL(res.url()).pathname.endsWith('/play'))
          plays.push({ status: res.status(), range: res.request().headers().range });
      });
      // The gateway's own origin, as the web app: playback_url is a path relative to it.
      await page.goto(`${t.gw.apiUrl}/healthz`);
      // Page code as text: the tests are compiled without the DOM library.
      const result = await page.evaluate<{
        duration: number;
        middle: number;
        currentTime: number;
        presentedAt: number;
        frames: number;
        error: string | null;
      }>(`(async () => {
        const video = document.createElement('video');
        video.muted = true;
        video.preload = 'auto';
        document.body.append(video);
        const failed = new Promise((_, reject) => video.addEventListener('error', () => reject(new Error('media error ' + video.error?.code + ': ' + video.error?.message))));
        const event = (name) => Promise.race([new Promise((resolve) => video.addEventListener(name, resolve, { once: true })), failed]);
        const loaded = event('loadedmetadata');
        video.src = ${JSON.stringify(rec.playback_url)};
        await loaded;
        const middle = video.duration / 2;
        const seeked = event('seeked');
        video.currentTime = middle;
        await seeked;
        const currentTime = video.currentTime;
        // A frame decoded and shown from the new position.
        const presented = new Promise((resolve) => video.requestVideoFrameCallback((_now, meta) => resolve(meta.mediaTime)));
        await video.play();
        const presentedAt = await Promise.race([presented, failed]);
        video.pause();
        return { duration: video.duration, middle, currentTime, presentedAt, frames: video.getVideoPlaybackQuality().totalVideoFrames, error: null };
      })()`);
      expect(result.duration).toBeCloseTo(Number(probed.format.duration), 0);
      expect(result.currentTime).toBeCloseTo(result.middle, 1);
      expect(result.presentedAt).toBeGreaterThanOrEqual(result.middle - 0.5);
      expect(result.presentedAt).toBeLessThan(result.duration);
      expect(result.frames).toBeGreaterThan(0);
      // The element fetched it by byte ranges from the play route.
      expect(plays.some((p) => p.status === 206 && p.range?.startsWith('bytes='))).toBe(true);
    } finally {
      await context.close();
    }
  }, 120_000);
});
