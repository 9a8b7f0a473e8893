import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { drawBox, encodeJpeg } from '../../src/detect/annotate.js';
import type { CheckRequest } from '../../src/detect/detector-pool.js';
import { CheckDroppedError, DetectorUnavailableError, FrameError } from '../../src/detect/errors.js';
import { grabFrames, PpmSplitter } from '../../src/detect/grab.js';
import { decodeJpeg } from '../../src/detect/jpeg.js';
import { MotionChecker, type CheckCount } from '../../src/detect/motion-check.js';
import { detectionWanted } from '../../src/detect/service.js';
import type { Frame, RawDetection } from '../../src/detect/types.js';
import { tempDir } from '../support/gateway.js';

// The parts between a motion start and the detector: frames from a stream (ffmpeg), the checker's
// outcomes (with a scripted detector: the real one is in detector.test.ts and the end-to-end test),
// the boxed thumbnail, and which cameras are checked.

const run = promisify(execFile);
const grey = (width: number, height: number, value = 100): Frame => ({ data: new Uint8Array(width * height * 3).fill(value), width, height });
const ppm = (f: Frame) => Buffer.concat([Buffer.from(`P6\n${f.width} ${f.height}\n255\n`), Buffer.from(f.data)]);

describe('detectionWanted', () => {
  it.each([
    ['off', 'on', false, false],
    ['off', 'auto', false, false],
    ['auto', 'auto', false, true],
    ['auto', 'auto', true, false], // the camera reports people itself
    ['auto', 'on', true, true], // on double-checks it
    ['on', 'auto', true, true],
    ['on', 'off', false, false],
    ['auto', 'off', false, false],
  ] as const)('global %s, camera %s, reports objects %s → %s', (global, cam, reports, wanted) => {
    expect(detectionWanted(global, cam, reports)).toBe(wanted);
  });
});

describe('PpmSplitter', () => {
  it('cuts a stream of pictures wherever the chunks split it', () => {
    const a = grey(3, 2, 10);
    const b = grey(2, 2, 200);
    const stream = Buffer.concat([ppm(a), ppm(b)]);
    for (let cut = 1; cut < stream.length; cut += 7) {
      const s = new PpmSplitter(1000);
      const frames = [...s.push(stream.subarray(0, cut)), ...s.push(stream.subarray(cut))];
      expect(frames.map((f) => [f.width, f.height, f.data[0]])).toEqual([
        [3, 2, 10],
        [2, 2, 200],
      ]);
    }
  });

  it('refuses what is not a PPM, and pictures over its size limit', () => {
    expect(() => new PpmSplitter(1000).push(Buffer.alloc(100, 0x41))).toThrow(FrameError);
    expect(() => new PpmSplitter(10).push(ppm(grey(4, 4)))).toThrow(/larger than allowed/);
  });
});

describe('grabFrames', () => {
  it('keeps the frames a stream gave before it stopped', { timeout: 30_000 }, async () => {
    const dir = tempDir('eg-grab-');
    const clip = path.join(dir, 'short.mp4');
    // 1 s of video: at 2 frames a second there are only 2 of the 3 asked for.
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=10:d=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
    const frames = await grabFrames({ ffmpegPath: 'ffmpeg', inputUrl: clip, rtsp: false, count: 3, fps: 2 });
    expect(frames.length).toBe(2);
    expect(frames.every((f) => f.width === 320 && f.height === 180 && f.data.length === 320 * 180 * 3)).toBe(true);
  });

  it('scales wide pictures down to maxWidth', { timeout: 30_000 }, async () => {
    const dir = tempDir('eg-grab-');
    const clip = path.join(dir, 'wide.mp4');
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=5:d=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
    const [frame] = await grabFrames({ ffmpegPath: 'ffmpeg', inputUrl: clip, rtsp: false, count: 1, maxWidth: 640 });
    expect([frame!.width, frame!.height]).toEqual([640, 360]);
  });

  it('a corrupt stream, a dead address and a missing ffmpeg are FrameErrors, not hangs', { timeout: 30_000 }, async () => {
    const dir = tempDir('eg-grab-');
    const junk = path.join(dir, 'junk.mp4');
    writeFileSync(junk, Buffer.alloc(50_000, 0x5a));
    await expect(grabFrames({ ffmpegPath: 'ffmpeg', inputUrl: junk, rtsp: false })).rejects.toThrow(FrameError);
    await expect(grabFrames({ ffmpegPath: 'ffmpeg', inputUrl: 'rtsp://127.0.0.1:9/nothing', timeoutMs: 8000 })).rejects.toThrow(/no frame from the stream/);
    await expect(grabFrames({ ffmpegPath: '/nonexistent/ffmpeg', inputUrl: junk, rtsp: false })).rejects.toThrow(/cannot run/);
  });
});

describe('drawBox and encodeJpeg', () => {
  it('draws the outline inside the box, clipped to the frame, on a copy', () => {
    const frame = grey(10, 10);
    const out = drawBox(frame, { x: 0.2, y: 0.2, w: 0.5, h: 0.5 }, [255, 0, 0], 1);
    const px = (f: Frame, x: number, y: number) => [...f.data.subarray((y * 10 + x) * 3, (y * 10 + x) * 3 + 3)];
    expect(px(out, 2, 2)).toEqual([255, 0, 0]); // top-left corner
    expect(px(out, 6, 4)).toEqual([255, 0, 0]); // right edge
    expect(px(out, 4, 4)).toEqual([100, 100, 100]); // inside stays
    expect(px(frame, 2, 2)).toEqual([100, 100, 100]); // the original is untouched
    const clipped = drawBox(frame, { x: 0.8, y: 0.8, w: 0.9, h: 0.9 }, [0, 255, 0], 2);
    expect(px(clipped, 9, 9)).toEqual([0, 255, 0]);
  });

  it('encodes an RGB frame to a JPEG of the asked width that decodes to the same picture', { timeout: 30_000 }, async () => {
    const frame = drawBox(grey(320, 180), { x: 0.25, y: 0.25, w: 0.5, h: 0.5 }, [255, 0, 0], 4);
    const jpeg = await encodeJpeg(frame, { ffmpegPath: 'ffmpeg', width: 160 });
    expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
    const back = await decodeJpeg(jpeg, { ffmpegPath: 'ffmpeg' });
    expect([back.width, back.height]).toEqual([160, 90]);
    const at = (x: number, y: number) => [...back.data.subarray((y * 160 + x) * 3, (y * 160 + x) * 3 + 3)];
    expect(at(41, 45)[0]).toBeGreaterThan(180); // the box's left edge, red
    expect(at(10, 10)[0]).toBeLessThan(130); // grey background
  });
});

describe('MotionChecker', () => {
  const person: RawDetection = { label: 'person', score: 0.7, box: { x: 0.25, y: 0.25, w: 0.25, h: 0.5 } };
  const rules = () => ({ labels: { human: ['person'], vehicle: ['car'] }, minScore: 0.35, threshold: 0.45, zones: {}, requiredZones: [] });

  function checker(detect: (req: CheckRequest) => Promise<RawDetection[][]>, grab: () => Promise<Frame[]> = async () => [grey(64, 48), grey(64, 48), grey(64, 48)]) {
    const counts: CheckCount[] = [];
    const seen: CheckRequest[] = [];
    const c = new MotionChecker({
      detector: { check: (req) => (seen.push(req), detect(req)) },
      grab: () => grab(),
      rules,
      encode: (frame) => encodeJpeg(frame, { ffmpegPath: 'ffmpeg', width: 64 }),
      logger: pino({ level: 'silent' }),
      count: (w) => counts.push(w),
    });
    return { c, counts, seen };
  }

  it('a person in most frames: confirmed human, her detections and a thumbnail; the moving area is asked after the frames', { timeout: 20_000 }, async () => {
    const { c, counts, seen } = checker(async () => [[person], [], [{ ...person, score: 0.8 }]]);
    let asked = 0;
    const outcome = await c.check('dev_a', () => (asked++, { x: 0.1, y: 0.1, w: 0.5, h: 0.5 }));
    expect(outcome.result).toBe('confirmed');
    expect(outcome.type).toBe('human');
    expect(outcome.detections).toEqual([{ label: 'person', score: 0.8, box: person.box }]);
    expect(outcome.thumbnail?.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(asked).toBe(1);
    expect(seen[0]!.motion).toEqual({ x: 0.1, y: 0.1, w: 0.5, h: 0.5 });
    expect(counts).toEqual(['human']);
  });

  it('one lucky frame is not enough: unconfirmed motion', async () => {
    const { c, counts } = checker(async () => [[person], [], []]);
    const outcome = await c.check('dev_a', null);
    expect([outcome.result, outcome.type, outcome.detections, outcome.thumbnail]).toEqual(['unconfirmed', 'motion', [], null]);
    expect(counts).toEqual(['motion']);
  });

  it.each<[string, () => Error, CheckCount]>([
    ['dropped from the full queue', () => new CheckDroppedError('queue full'), 'dropped'],
    ['no model', () => new DetectorUnavailableError('not loaded'), 'unavailable'],
    ['a bad frame', () => new FrameError('bad'), 'failed'],
  ])('%s: unchecked (stays motion, never dropped), counted', async (_name, error, count) => {
    const { c, counts } = checker(async () => {
      throw error();
    });
    const outcome = await c.check('dev_a', null);
    expect([outcome.result, outcome.type]).toEqual(['unchecked', 'motion']);
    expect(counts).toEqual([count]);
  });

  it('no frames from the camera (stream stopped): unchecked, the detector not asked', async () => {
    const { c, counts, seen } = checker(
      async () => [[person]],
      async () => {
        throw new FrameError('no frame from the stream: connection refused');
      },
    );
    const outcome = await c.check('dev_a', null);
    expect(outcome.result).toBe('unchecked');
    expect(outcome.reason).toMatch(/connection refused/);
    expect(seen).toEqual([]);
    expect(counts).toEqual(['no_frames']);
  });
});
