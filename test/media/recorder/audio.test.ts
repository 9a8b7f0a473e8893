import { execFile } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CameraRecorder, type RecorderStore } from '../../../src/media/recorder/camera-recorder.js';
import { RelayStreams } from '../../../src/media/relay/streams.js';
import type { NewRecording } from '../../../src/store/media.js';
import { startSimulatedRtsp, type ExtraMount, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';
import { tempDir } from '../../support/temp-dir.js';

// A camera's sound in its clips: the recorder reads the simulated camera's audio mounts through the
// relay's shared session (H.265 + AAC, H.264 + G.711 µ-law), keeps them in RAM as its fMP4 segments,
// and an event becomes a clip that plays with both tracks: AAC copied, G.711 turned into AAC.

const run = promisify(execFile);
const USER = 'admin';
const PASSWORD = 'rec-audio-secret';
// Warnings and errors are kept, and told when a clip does not come (the camera stream lost, the
// footage missing, ffmpeg failing all end without a clip, and say so only in the log).
const logged: string[] = [];
const logger = process.env.SIM_LOG
  ? pino({ level: process.env.SIM_LOG })
  : pino({ level: 'warn' }, { write: (line: string) => void logged.push(line.trimEnd()) });

const CASES: Array<{ mount: ExtraMount; video: string }> = [
  { mount: 'h265aac', video: 'hevc' },
  { mount: 'h264pcmu', video: 'h264' },
];

let camera: SimulatedRtsp;
let streams: RelayStreams;
const dirs: string[] = [];

beforeAll(async () => {
  camera = await startSimulatedRtsp({
    cameras: 1,
    host: '127.0.0.1',
    port: 0,
    username: USER,
    password: PASSWORD,
    extraMounts: CASES.map((c) => c.mount),
    logger,
  });
  // The device id names the mount.
  streams = new RelayStreams({
    locate: (deviceId, profile) =>
      profile === 'main' && CASES.some((c) => c.mount === deviceId)
        ? { url: camera.url(0, deviceId as ExtraMount), username: USER, password: PASSWORD }
        : null,
    logger,
    idleCloseS: 1,
  });
});
afterAll(async () => {
  streams?.close();
  await camera?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('recorded clips keep the camera’s sound', () => {
  it.each(CASES)(
    '$mount: a clip with the video copied and AAC audio',
    { timeout: 60_000 },
    async ({ mount, video }) => {
      const dir = tempDir('eg-rec-audio-');
      dirs.push(dir);
      const saved: NewRecording[] = [];
      const store: RecorderStore = {
        openEpisode: () => undefined,
        setAlertType: () => undefined,
        beginClip: () => undefined,
        saveRecording: (r) => void saved.push(r),
        settleEpisodePart: () => undefined,
      };
      const recorder = new CameraRecorder({
        deviceId: mount,
        deviceName: () => mount,
        ffmpegPath: 'ffmpeg',
        segmentDir: path.join(dir, 'segments'),
        storageDir: path.join(dir, 'storage'),
        acquire: () => streams.acquire(mount, 'main'),
        store,
        logger,
        preRollMs: 1000,
        postRollMs: 1000,
        maxClipMs: 60_000,
        serialize: (job) => job(),
        bootAt: 0,
      });
      try {
        // A few groups of pictures in RAM first, so the pre-roll is there.
        await expect
          .poll(() => readdirSync(path.join(dir, 'segments')).filter((f) => f.endsWith('.mp4')).length, {
            timeout: 20_000,
            interval: 100,
          })
          .toBeGreaterThanOrEqual(3);
        const start = Date.now();
        recorder.event('motion', 'start', start);
        await new Promise((r) => setTimeout(r, 2000));
        recorder.event('motion', 'stop', Date.now());
        await expect
          .poll(() => saved.length, { timeout: 30_000, interval: 200 })
          .toBe(1)
          .catch((err: Error) => {
            throw new Error(`${err.message}\nthe log's warnings:\n${logged.join('\n') || '(none)'}`);
          });
      } finally {
        await recorder.stop();
      }
      const clip = path.join(dir, 'storage', saved[0]!.fileName);
      const { stdout } = await run('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'stream=codec_type,codec_name,duration',
        '-of',
        'json',
        clip,
      ]);
      const { streams: found } = JSON.parse(stdout) as {
        streams: Array<{ codec_type: string; codec_name: string; duration: string }>;
      };
      expect(found.map((s) => [s.codec_type, s.codec_name])).toEqual([
        ['video', video],
        ['audio', 'aac'],
      ]);
      // Pre-roll + event + post-roll, each track (the keyframe before the pre-roll may add up to a second).
      for (const s of found) {
        expect(Number(s.duration)).toBeGreaterThan(3.5);
        expect(Number(s.duration)).toBeLessThan(6);
      }
      const decoded = await run('ffmpeg', ['-v', 'error', '-i', clip, '-f', 'null', '-']);
      expect(decoded.stderr).toBe('');
    },
  );
});
