import { describe, expect, it } from 'vitest';
import { FrameError } from '../../src/detect/errors.js';
import { channelsOf, cropFrame, shrinkFrame } from '../../src/detect/frame.js';
import { planRegions, toFrameBox } from '../../src/detect/regions.js';

const opts = { inputSize: 512 };

describe('planRegions', () => {
  it.each([
    [
      'no moving area, 16:9: two overlapping squares of the short side',
      1280,
      720,
      null,
      [
        { x: 0, y: 0, size: 720 },
        { x: 560, y: 0, size: 720 },
      ],
    ],
    ['no moving area, square frame: the frame', 512, 512, null, [{ x: 0, y: 0, size: 512 }]],
    [
      'no moving area, portrait 9:16: two squares stacked',
      720,
      1280,
      null,
      [
        { x: 0, y: 0, size: 720 },
        { x: 0, y: 560, size: 720 },
      ],
    ],
    [
      'no moving area, 32:9: four squares',
      1920,
      540,
      null,
      [
        { x: 0, y: 0, size: 540 },
        { x: 460, y: 0, size: 540 },
        { x: 920, y: 0, size: 540 },
        { x: 1380, y: 0, size: 540 },
      ],
    ],
    // A small moving area gets a square of the model's input size at full resolution, centred on it.
    ['small area in the middle', 1280, 720, { x: 0.5, y: 0.5, w: 0.05, h: 0.1 }, [{ x: 416, y: 140, size: 512 }]],
    [
      'small area at the top-left corner: the square stays inside the frame',
      1280,
      720,
      { x: 0, y: 0, w: 0.02, h: 0.02 },
      [{ x: 0, y: 0, size: 512 }],
    ],
    [
      'small area at the bottom-right corner',
      1280,
      720,
      { x: 0.97, y: 0.97, w: 0.03, h: 0.03 },
      [{ x: 768, y: 208, size: 512 }],
    ],
    // 0.5 × 1280 = 640 plus a quarter on each side = 960 > 720: squares of 720 along it.
    [
      'wide area: squares of the short side along it',
      1280,
      720,
      { x: 0.25, y: 0.4, w: 0.5, h: 0.2 },
      [
        { x: 160, y: 0, size: 720 },
        { x: 400, y: 0, size: 720 },
      ],
    ],
    [
      'frame smaller than the model input: the frame short side',
      320,
      240,
      { x: 0.4, y: 0.4, w: 0.1, h: 0.1 },
      [{ x: 24, y: 0, size: 240 }],
    ],
    ['empty frame', 0, 0, null, []],
  ] as const)('%s', (_name, width, height, motion, expected) => {
    const regions = planRegions(width, height, motion, opts);
    expect(regions).toEqual(expected);
    for (const r of regions) {
      expect(r.x + r.size).toBeLessThanOrEqual(width);
      expect(r.y + r.size).toBeLessThanOrEqual(height);
    }
  });

  it('every moving area is wholly inside the union of its squares', () => {
    for (const motion of [
      { x: 0.1, y: 0.1, w: 0.8, h: 0.8 },
      { x: 0, y: 0.45, w: 1, h: 0.1 },
      { x: 0.3, y: 0, w: 0.05, h: 1 },
    ]) {
      const regions = planRegions(1280, 720, motion, opts);
      for (const [px, py] of [
        [motion.x, motion.y],
        [motion.x + motion.w, motion.y + motion.h],
        [motion.x + motion.w / 2, motion.y + motion.h / 2],
      ] as const) {
        const covered = regions.some(
          (r) => px * 1280 >= r.x && px * 1280 <= r.x + r.size && py * 720 >= r.y && py * 720 <= r.y + r.size,
        );
        expect(covered, JSON.stringify({ motion, px, py })).toBe(true);
      }
    }
  });

  it('maps a box in a region back to frame coordinates', () => {
    const box = toFrameBox({ x: 560, y: 0, size: 720 }, { x: 0.5, y: 0.25, w: 0.1, h: 0.5 }, 1280, 720);
    expect(box.x).toBeCloseTo(920 / 1280, 9);
    expect(box.y).toBeCloseTo(0.25, 9);
    expect(box.w).toBeCloseTo(72 / 1280, 9);
    expect(box.h).toBeCloseTo(0.5, 9);
  });
});

describe('frames', () => {
  // A 4 × 3 RGB frame whose every byte says where it is: (row * 4 + col) * 3 + channel.
  const frame = { data: Uint8Array.from({ length: 36 }, (_, i) => i), width: 4, height: 3 };

  it('crops a square region row by row', () => {
    const crop = cropFrame(frame, { x: 1, y: 1, size: 2 });
    expect(crop.width).toBe(2);
    expect(Array.from(crop.data)).toEqual([15, 16, 17, 18, 19, 20, 27, 28, 29, 30, 31, 32]);
  });
  it.each([
    [{ data: new Uint8Array(36), width: 4, height: 3 }, 3],
    [{ data: new Uint8Array(48), width: 4, height: 3 }, 4],
  ])('channels of %#', (f, n) => {
    expect(channelsOf(f)).toBe(n);
  });
  it.each([
    [{ data: new Uint8Array(35), width: 4, height: 3 }, /35 bytes, not RGB \(36\) or RGBA \(48\)/],
    [{ data: new Uint8Array(0), width: 0, height: 0 }, /bad frame size/],
    [{ data: new Uint8Array(36), width: 4.5, height: 3 }, /bad frame size/],
  ])('refuses a frame whose bytes do not fit (%#)', (f, message) => {
    expect(() => channelsOf(f)).toThrow(FrameError);
    expect(() => channelsOf(f)).toThrow(message);
  });
  it('shrinks by the largest whole factor that keeps the width, each pixel the mean of its block', () => {
    const small = shrinkFrame(frame, 2);
    expect([small.width, small.height]).toEqual([2, 1]);
    // Pixel (0,0) is the mean of (0,0), (1,0), (0,1), (1,1): bytes 0, 3, 12, 15 and so on per channel.
    expect(Array.from(small.data)).toEqual([7.5, 8.5, 9.5, 13.5, 14.5, 15.5].map(Math.round));
    const rgba = { data: new Uint8Array(8 * 2 * 4).fill(200), width: 8, height: 2 };
    expect(shrinkFrame(rgba, 3)).toEqual({ data: new Uint8Array(4 * 1 * 4).fill(200), width: 4, height: 1 });
  });
  it.each([
    [4, 'as wide as asked'],
    [3, 'no whole factor keeps 3 px'],
    [0, 'a width of 0 is read as 1: a factor of at most the height'],
  ])('keeps the frame itself when no factor > 1 fits (%s: %s)', (width, _why) => {
    const out = shrinkFrame(frame, width);
    if (width === 0) expect([out.width, out.height]).toEqual([1, 1]);
    else expect(out).toBe(frame);
  });
  it('a 1280×720 frame kept for a 640 px thumbnail is a quarter of the bytes', () => {
    const big = { data: new Uint8Array(1280 * 720 * 3), width: 1280, height: 720 };
    expect(shrinkFrame(big, 640).data.byteLength * 4).toBe(big.data.byteLength);
    const sub = { data: new Uint8Array(704 * 576 * 3), width: 704, height: 576 };
    expect(shrinkFrame(sub, 640)).toBe(sub);
  });
  it('refuses a region outside the frame', () => {
    expect(() => cropFrame(frame, { x: 3, y: 0, size: 2 })).toThrow(/outside the 4x3 frame/);
  });
});
