import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { drawBox, encodeJpeg } from '../../src/detect/annotate.js';
import type { CheckRequest } from '../../src/detect/detector-pool.js';
import { CheckDroppedError, DetectorUnavailableError, FrameError } from '../../src/detect/errors.js';
import { shrinkFrame } from '../../src/detect/frame.js';
import { decodeJpeg } from '../../src/detect/jpeg.js';
import { MotionChecker, type CheckCount } from '../../src/detect/motion-check.js';
import { detectionWanted } from '../../src/detect/service.js';
import type { Frame, FrameSource, RawDetection } from '../../src/detect/types.js';

// The parts between a motion start and the detector: the checker's outcomes (with a scripted
// detector: the real one is in detector.test.ts and the end-to-end test; frames from the relay are
// in relay-frames.test.ts), the boxed thumbnail, and which cameras are checked.

const grey = (width: number, height: number, value = 100): Frame => ({
  data: new Uint8Array(width * height * 3).fill(value),
  width,
  height,
});

/** A source giving `frames`, then the end (`ended` says why when it gave fewer than 3). */
function sourceOf(frames: Frame[], ended: string | null = null): FrameSource & { closed: boolean } {
  const left = [...frames];
  return {
    closed: false,
    next: () => Promise.resolve(left.shift() ?? null),
    get ended() {
      return left.length === 0 ? ended : null;
    },
    close() {
      this.closed = true;
    },
  };
}

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

  it(
    'encodes an RGB frame to a JPEG of the asked width that decodes to the same picture',
    { timeout: 30_000 },
    async () => {
      const frame = drawBox(grey(320, 180), { x: 0.25, y: 0.25, w: 0.5, h: 0.5 }, [255, 0, 0], 4);
      const jpeg = await encodeJpeg(frame, { ffmpegPath: 'ffmpeg', width: 160 });
      expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
      const back = await decodeJpeg(jpeg, { ffmpegPath: 'ffmpeg' });
      expect([back.width, back.height]).toEqual([160, 90]);
      const at = (x: number, y: number) => [...back.data.subarray((y * 160 + x) * 3, (y * 160 + x) * 3 + 3)];
      expect(at(41, 45)[0]).toBeGreaterThan(180); // the box's left edge, red
      expect(at(10, 10)[0]).toBeLessThan(130); // grey background
    },
  );
});

describe('MotionChecker', () => {
  const person: RawDetection = { label: 'person', score: 0.7, box: { x: 0.25, y: 0.25, w: 0.25, h: 0.5 } };
  const rules = () => ({
    labels: { human: ['person'], vehicle: ['car'] },
    minScore: 0.35,
    threshold: 0.45,
    zones: {},
    requiredZones: [],
  });
  const three = () => sourceOf([grey(64, 48, 1), grey(64, 48, 2), grey(64, 48, 3)]);

  /** A checker whose detector answers `perFrame[i]` for the i-th frame it is asked about. */
  function checker(
    perFrame: (i: number) => Promise<RawDetection[]>,
    source: () => FrameSource = three,
    keptWidth?: number,
  ) {
    const counts: CheckCount[] = [];
    const seen: CheckRequest[] = [];
    const sources: FrameSource[] = [];
    const encoded: Frame[] = [];
    const c = new MotionChecker({
      detector: {
        // As the pool answers: the frames scaled down by the detector's thread when asked.
        check: async (req) => {
          seen.push(req);
          const found = [await perFrame(seen.length - 1)];
          const width = req.keptWidth;
          return { found, kept: width === undefined ? [] : req.frames.map((f) => shrinkFrame(f, width)) };
        },
      },
      frames: () => {
        const s = source();
        sources.push(s);
        return Promise.resolve(s);
      },
      rules,
      encode: (frame) => (encoded.push(frame), encodeJpeg(frame, { ffmpegPath: 'ffmpeg', width: 64 })),
      logger: pino({ level: 'silent' }),
      count: (w) => counts.push(w),
      ...(keptWidth === undefined ? {} : { keptWidth }),
    });
    return { c, counts, seen, sources, encoded };
  }
  const answers =
    (...frames: RawDetection[][]) =>
    (i: number) =>
      Promise.resolve(frames[i] ?? []);

  it(
    'a person in the first two frames: confirmed human after two inferences, her detections, a thumbnail; the area asked per frame',
    { timeout: 20_000 },
    async () => {
      const { c, counts, seen, sources } = checker(answers([person], [{ ...person, score: 0.8 }], []));
      let asked = 0;
      const outcome = await c.check('dev_a', () => (asked++, { x: 0.1, y: 0.1, w: 0.5, h: 0.5 }));
      expect(outcome.result).toBe('confirmed');
      expect(outcome.type).toBe('human');
      expect(outcome.detections).toEqual([{ label: 'person', score: 0.8, box: person.box }]);
      expect((await outcome.thumbnail)?.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
      // Settled by two frames that agree: the third is never looked at, the frames stop.
      expect(seen.map((r) => r.frames[0]!.data[0])).toEqual([1, 2]);
      expect(asked).toBe(2);
      expect(seen[0]!.motion).toEqual({ x: 0.1, y: 0.1, w: 0.5, h: 0.5 });
      expect((sources[0] as FrameSource & { closed: boolean }).closed).toBe(true);
      expect(counts).toEqual(['human']);
      expect(outcome.timeline.map(([stage]) => stage)).toEqual([
        'frames_requested',
        'frame_1',
        'inference_1',
        'frame_2',
        'inference_2',
        'decided',
      ]);
    },
  );

  it(
    'counts the bytes of the frames a check holds while it waits for the detector, and none once it and its thumbnail are done',
    { timeout: 20_000 },
    async () => {
      let answer: () => void = () => undefined;
      const waiting = new Promise<void>((r) => (answer = r));
      const held: number[] = [];
      const { c } = checker(async (i) => {
        held.push(c.frameBytes);
        if (i === 0) await waiting;
        return i < 2 ? [person] : [];
      });
      const pending = c.check('dev_a', null);
      await expect.poll(() => held.length).toBe(1);
      const one = (await three().next())!.data.byteLength;
      expect(c.frameBytes).toBe(one);
      answer();
      const outcome = await pending;
      expect(held).toEqual([one, 2 * one]);
      await outcome.thumbnail;
      expect(c.frameBytes).toBe(0);
      expect(c.checking).toBe(0);
    },
  );

  it(
    'keeps of the frames looked at only those that may become the thumbnail, scaled down to keptWidth',
    { timeout: 20_000 },
    async () => {
      const held: number[] = [];
      const better = { ...person, score: 0.8 };
      const { c, encoded } = checker(
        (i) => (held.push(c.frameBytes), Promise.resolve([[person], [], [better]][i]!)),
        three,
        32,
      );
      const whole = 64 * 48 * 3;
      const small = 32 * 24 * 3;
      const outcome = await c.check('dev_a', null);
      expect(outcome.result).toBe('confirmed');
      // The second frame (nothing in it) is let go once looked at; the first is kept small until
      // the third beats it, and the third, the best, is the thumbnail.
      expect(held).toEqual([whole, small + whole, small + whole]);
      expect(c.frameBytes).toBe(small);
      await outcome.thumbnail;
      expect(c.frameBytes).toBe(0);
      expect(encoded.map((f) => [f.width, f.height, f.data[0]])).toEqual([[32, 24, 3]]);
    },
  );

  it('frames that disagree: the third decides', async () => {
    const { c, seen } = checker(answers([person], [], [person]));
    const outcome = await c.check('dev_a', null);
    expect([outcome.result, outcome.type, seen.length]).toEqual(['confirmed', 'human', 3]);
  });

  it('one lucky frame is not enough: unconfirmed motion', async () => {
    const { c, counts } = checker(answers([person], [], []));
    const outcome = await c.check('dev_a', null);
    expect([outcome.result, outcome.type, outcome.detections, await outcome.thumbnail]).toEqual([
      'unconfirmed',
      'motion',
      [],
      null,
    ]);
    expect(counts).toEqual(['motion']);
  });

  it('nothing in the first two frames: motion without a third inference', async () => {
    const { c, seen } = checker(answers([], [], [person]));
    expect((await c.check('dev_a', null)).result).toBe('unconfirmed');
    expect(seen.length).toBe(2);
  });

  it.each<[string, () => Error, CheckCount]>([
    ['dropped from the full queue', () => new CheckDroppedError('queue full'), 'dropped'],
    ['no model', () => new DetectorUnavailableError('not loaded'), 'unavailable'],
    ['a bad frame', () => new FrameError('bad'), 'failed'],
  ])('%s: unchecked (stays motion, never dropped), counted', async (_name, error, count) => {
    const { c, counts, sources } = checker(() => Promise.reject(error()));
    const outcome = await c.check('dev_a', null);
    expect([outcome.result, outcome.type]).toEqual(['unchecked', 'motion']);
    expect(counts).toEqual([count]);
    expect((sources[0] as FrameSource & { closed: boolean }).closed).toBe(true);
  });

  it('no frames from the camera (stream stopped): unchecked, the detector not asked', async () => {
    const { c, counts, seen } = checker(answers([person]), () =>
      sourceOf([], 'no picture from the stream for 3000 ms'),
    );
    const outcome = await c.check('dev_a', null);
    expect(outcome.result).toBe('unchecked');
    expect(outcome.reason).toMatch(/no frame from the stream: no picture from the stream for 3000 ms/);
    expect(seen).toEqual([]);
    expect(counts).toEqual(['no_frames']);
  });

  it('the stream stops before the frames settle the rule: unchecked, even after a person in one frame', async () => {
    const { c, counts } = checker(answers([person], []), () =>
      sourceOf([grey(64, 48), grey(64, 48)], 'the relay let the stream go'),
    );
    const outcome = await c.check('dev_a', null);
    expect([outcome.result, outcome.type]).toEqual(['unchecked', 'motion']);
    expect(outcome.reason).toMatch(/2 of 3 frames, too few to decide: the relay let the stream go/);
    expect(counts).toEqual(['no_frames']);
  });

  it('the relay cannot give the stream: unchecked', async () => {
    const c = new MotionChecker({
      detector: { check: () => Promise.resolve({ found: [[person]], kept: [] }) },
      frames: () => Promise.reject(new Error('device dev_a has no main stream')),
      rules,
      encode: () => Promise.resolve(Buffer.alloc(0)),
      logger: pino({ level: 'silent' }),
    });
    const outcome = await c.check('dev_a', null);
    expect([outcome.result, outcome.reason]).toEqual(['unchecked', 'device dev_a has no main stream']);
  });
});
