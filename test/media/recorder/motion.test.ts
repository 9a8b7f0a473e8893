import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { GrayFrameSplitter, MotionDetector, type MotionOptions } from '../../../src/media/recorder/motion.js';
import { makeRng, type Rng } from '../../support/fuzz.js';

const W = 32;
const H = 24;
const base: MotionOptions = { width: W, height: H, threshold: 0.02 };

function flat(value: number): Uint8Array {
  return new Uint8Array(W * H).fill(value);
}

/** `value` ± up to `amplitude` per pixel. */
function noisy(rng: Rng, value: number, amplitude: number): Uint8Array {
  return flat(0).map(() => value - amplitude + rng.int(2 * amplitude + 1));
}

/** A bright 8 × 8 square with its left edge at column x (the scene's moving thing). */
function block(frame: Uint8Array, x: number, value = 220): Uint8Array {
  const out = frame.slice();
  for (let row = 8; row < 16; row++) out.fill(value, row * W + x, row * W + x + 8);
  return out;
}

/** Pushes frames 500 ms apart (2 fps), starting at 0; the results in order. */
function feed(d: MotionDetector, frames: Uint8Array[], from = 0): Array<'start' | 'stop' | null> {
  return frames.map((f, i) => d.push(f, from + i * 500));
}

describe('MotionDetector', () => {
  it('ignores sensor noise below pixelDelta', () => {
    const rng = makeRng(7);
    const d = new MotionDetector(base);
    const results = feed(
      d,
      Array.from({ length: 40 }, () => noisy(rng, 100, 10)),
    ); // at most 20 apart
    expect(results.every((r) => r === null)).toBe(true);
    expect(d.lastScore).toBe(0);
    expect(d.active).toBe(false);
  });

  it('scores the fraction of pixels that changed by at least pixelDelta', () => {
    const d = new MotionDetector(base);
    d.push(block(flat(100), 0), 0);
    d.push(block(flat(100), 8), 500); // 64 pixels left, 64 covered
    expect(d.lastScore).toBe(128 / (W * H));
    for (const [pixelDelta, value, changed] of [
      [25, 124, 0],
      [25, 125, 64],
      [24, 124, 64],
      [25, 76, 0],
      [25, 75, 64], // darker counts the same
      [1, 101, 64],
      [255, 255, 0],
    ] as const) {
      const e = new MotionDetector({ ...base, pixelDelta });
      e.push(flat(100), 0);
      e.push(block(flat(100), 0, value), 500);
      expect(e.lastScore, `pixelDelta ${pixelDelta}, 100 → ${value}`).toBe(changed / (W * H));
    }
  });

  it('scores a change of the whole scene high (though never 1: the typical change counts as lighting)', () => {
    const rng = makeRng(17);
    const d = new MotionDetector({ ...base, threshold: 0.5, minFrames: 1 });
    d.push(flat(128), 0);
    expect(d.push(noisy(rng, 128, 127), 500)).toBe('start');
    expect(d.lastScore).toBeGreaterThan(0.6);
    expect(d.lastScore).toBeLessThan(1);
    expect(() => new MotionDetector({ ...base, threshold: 1 })).not.toThrow();
  });

  it('counts a frame whose score equals the threshold as moving', () => {
    const at = (threshold: number) =>
      feed(new MotionDetector({ ...base, threshold, minFrames: 1 }), [flat(100), block(flat(100), 0)]);
    expect(at(64 / (W * H))).toEqual([null, 'start']);
    expect(at(65 / (W * H))).toEqual([null, null]);
  });

  it.each([1, 2, 3])('starts after %i consecutive moving frames', (minFrames) => {
    const rng = makeRng(11);
    const d = new MotionDetector({ ...base, minFrames });
    const frames = Array.from({ length: 6 }, (_, i) => block(noisy(rng, 100, 5), 2 + 4 * i));
    const results = feed(d, frames);
    // Frame 0 is only the reference: the first comparison is at frame 1.
    expect(results).toEqual(frames.map((_, i) => (i === minFrames ? 'start' : null)));
    expect(d.active).toBe(true);
  });

  it('does not start on moving frames that are not consecutive', () => {
    const d = new MotionDetector(base);
    const still = flat(100);
    const frames = [
      still,
      block(still, 0),
      block(still, 0),
      block(still, 16),
      block(still, 16),
      block(still, 0),
      block(still, 0),
    ];
    expect(feed(d, frames).every((r) => r === null)).toBe(true);
  });

  it('stops once quietMs passed without motion, and goes on while motion returns within it', () => {
    const d = new MotionDetector({ ...base, quietMs: 2_000 });
    const still = flat(100);
    const moving = [still, block(still, 0), block(still, 8)]; // start at 1 000
    const frames = [
      ...moving,
      block(still, 8),
      block(still, 8),
      block(still, 8),
      block(still, 16),
      ...Array.from({ length: 6 }, () => block(still, 16)),
    ];
    const results = feed(d, frames);
    // Last motion at frame 6 (3 000 ms): quiet through 4 500, stop at 5 000.
    expect(results).toEqual([null, null, 'start', null, null, null, null, null, null, null, 'stop', null, null]);
    expect(d.active).toBe(false);
  });

  it("does not take a change of the whole picture's brightness for motion", () => {
    const rng = makeRng(13);
    for (const step of [10, 60, -90]) {
      const d = new MotionDetector(base);
      // Flicker (small steps) and lights switching on or off (large ones), on a noisy picture.
      const frames = Array.from({ length: 12 }, (_, i) => noisy(rng, 128 + (i % 2) * step, 5));
      expect(feed(d, frames), `step ${step}`).toEqual(frames.map(() => null));
      expect(d.lastScore, `step ${step}`).toBe(0);
    }
    const d = new MotionDetector(base); // and motion still shows through a brightness change
    expect(feed(d, [block(flat(60), 0), block(flat(120), 12), block(flat(60), 24)])).toEqual([null, null, 'start']);
  });

  it('forgets the previous frame and the motion under way on reset', () => {
    const d = new MotionDetector(base);
    feed(d, [flat(100), block(flat(100), 0), block(flat(100), 8)]);
    expect(d.active).toBe(true);
    d.reset();
    expect([d.active, d.lastScore]).toEqual([false, 0]);
    expect(d.push(flat(0), 10_000)).toBeNull(); // a new reference, not a change
    expect(d.lastScore).toBe(0);
    expect(d.push(flat(0), 20_000)).toBeNull(); // no stop: none was running any more
  });

  it('tells where the picture moved, on a grid, from the streak that made the start', () => {
    // 32 × 24 in a 4 × 3 grid: cells of 8 × 8. The block covers rows 8–15 (grid row 1).
    const d = new MotionDetector({ ...base, grid: { cols: 4, rows: 3 } });
    expect(d.movingArea()).toBeNull();
    expect(feed(d, [flat(100), block(flat(100), 0), block(flat(100), 8)])).toEqual([null, null, 'start']);
    // Columns 0–15 changed (block left column 0 and covered 8–15): cells 0 and 1 of row 1.
    expect(d.movingArea()).toEqual({ x: 0, y: 1 / 3, w: 0.5, h: 1 / 3 });
    d.push(block(flat(100), 16), 1500); // it moves on: the area grows while motion lasts
    expect(d.movingArea()).toEqual({ x: 0, y: 1 / 3, w: 0.75, h: 1 / 3 });
  });

  it('ignores changes inside the motion mask, and counts the rest against the unmasked pixels', () => {
    const leftHalf = [
      [0, 0],
      [0.5, 0],
      [0.5, 1],
      [0, 1],
    ] as const;
    const masked = new MotionDetector({ ...base, mask: [leftHalf], grid: { cols: 4, rows: 3 } });
    // The block moves within columns 0–15: all masked.
    expect(feed(masked, [flat(100), block(flat(100), 0), block(flat(100), 8), block(flat(100), 0)])).toEqual([
      null,
      null,
      null,
      null,
    ]);
    expect(masked.lastScore).toBe(0);
    expect(masked.movingArea()).toBeNull();
    // The same block on the right half moves as before, its score over the 384 unmasked pixels.
    const right = new MotionDetector({ ...base, mask: [leftHalf], grid: { cols: 4, rows: 3 } });
    expect(feed(right, [flat(100), block(flat(100), 16), block(flat(100), 24)])).toEqual([null, null, 'start']);
    expect(right.lastScore).toBe(128 / 384);
    expect(right.movingArea()).toEqual({ x: 0.5, y: 1 / 3, w: 0.5, h: 1 / 3 });
  });

  it.each<[string, Partial<MotionOptions>]>([
    ['width', { width: 0 }],
    ['height', { height: -3 }],
    ['width', { width: 1.5 }],
    ['threshold', { threshold: 0 }],
    ['threshold', { threshold: 1.01 }],
    ['threshold', { threshold: Number.NaN }],
    ['pixelDelta', { pixelDelta: 0 }],
    ['pixelDelta', { pixelDelta: 256 }],
    ['pixelDelta', { pixelDelta: 2.5 }],
    ['minFrames', { minFrames: 0 }],
    ['quietMs', { quietMs: -1 }],
  ])('rejects a bad %s', (name, over) => {
    expect(() => new MotionDetector({ ...base, ...over })).toThrow(RangeError);
    expect(() => new MotionDetector({ ...base, ...over })).toThrow(new RegExp(`^${name} must be`));
  });

  it('rejects a frame of the wrong size', () => {
    const d = new MotionDetector(base);
    expect(() => d.push(new Uint8Array(W * H - 1), 0)).toThrow(RangeError);
    expect(() => d.push(new Uint8Array(W * H + 1), 0)).toThrow(/768 bytes, got 769/);
    expect(() => d.push(flat(0), Number.NaN)).toThrow(RangeError);
  });
});

describe('GrayFrameSplitter', () => {
  it('rejects a frame size that is not a positive integer', () => {
    for (const bad of [0, -1, 2.5, Number.NaN]) expect(() => new GrayFrameSplitter(bad)).toThrow(RangeError);
  });

  it('hands out one reused buffer', () => {
    const s = new GrayFrameSplitter(4);
    const seen: Uint8Array[] = [];
    const contents: number[][] = [];
    s.push(Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]), (f) => {
      seen.push(f);
      contents.push([...f]);
    });
    expect(contents).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(seen[0]).toBe(seen[1]);
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): delivers every whole frame once, wherever the chunks split`, () => {
    for (let run = 0; run < 2_000; run++) {
      const frameBytes = 1 + rng.int(40);
      const s = new GrayFrameSplitter(frameBytes);
      for (let stream = 0; stream < 2; stream++) {
        const random = (n: number) => Buffer.from(Array.from({ length: n }, () => rng.int(256)));
        const frames = Array.from({ length: rng.int(12) }, () => random(frameBytes));
        const partial = random(rng.int(frameBytes));
        const bytes = Buffer.concat([...frames, partial]);
        const got: Buffer[] = [];
        for (let at = 0; at < bytes.length || rng.int(3) === 0;) {
          const size = rng.pick([0, 1, rng.int(frameBytes * 3 + 1)]);
          s.push(bytes.subarray(at, at + size), (f) => got.push(Buffer.from(f)));
          at += size;
        }
        expect(got, `run ${run}, ${frameBytes} bytes a frame`).toEqual(frames);
        s.reset(); // the next stream starts on a frame, after this one's partial frame
      }
    }
  });
});

/** 4 s of ffmpeg's raw grey frames of a lavfi source (160 × 90 at 2 fps), through splitter and detector. */
async function detect(
  source: string,
): Promise<{ frames: number; bytes: number; results: Array<'start' | 'stop' | null>; scores: number[] }> {
  const args = [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    source,
    '-t',
    '4',
    '-vf',
    'format=gray',
    '-f',
    'rawvideo',
    'pipe:1',
  ];
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  const splitter = new GrayFrameSplitter(160 * 90);
  const detector = new MotionDetector({ width: 160, height: 90, threshold: 0.02 });
  const results: Array<'start' | 'stop' | null> = [];
  const scores: number[] = [];
  let bytes = 0;
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    splitter.push(chunk, (frame) => {
      results.push(detector.push(frame, results.length * 500));
      scores.push(detector.lastScore);
    });
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`ffmpeg exited ${code}: ${stderr}`);
  return { frames: results.length, bytes, results, scores };
}

describe('motion on real ffmpeg output', () => {
  it('starts on a moving test picture', async () => {
    const { frames, bytes, results, scores } = await detect('testsrc2=size=160x90:rate=2');
    expect(frames).toBeGreaterThanOrEqual(4);
    expect(bytes).toBe(frames * 160 * 90);
    expect(results.indexOf('start')).toBe(2); // frames 1 and 2 moved (frame 0 is the reference)
    expect(Math.min(...scores.slice(1))).toBeGreaterThanOrEqual(0.02);
  });

  it('stays quiet on a still picture', async () => {
    const { frames, bytes, results, scores } = await detect('color=c=gray:size=160x90:rate=2');
    expect(frames).toBeGreaterThanOrEqual(4);
    expect(bytes).toBe(frames * 160 * 90);
    expect(results).toEqual(Array.from({ length: frames }, () => null));
    expect(scores.every((s) => s === 0)).toBe(true);
  });
});
