import { describe, expect, it } from 'vitest';
import { isSegmentFile, SegmentRing, segmentFileName } from '../../../src/media/recorder/segments.js';
import { makeRng } from '../../support/fuzz.js';

/** Feeds GOP-long segments as the segmenter lists them, all there `delay` ms after their end. */
function feed(
  ring: SegmentRing,
  wallStart: number,
  streamStart: number,
  durations: number[],
  delay: (i: number) => number = () => 0,
) {
  let s = streamStart;
  return durations.map((d, i) => {
    const line = { file: `r1-${i}.ts`, startS: s, endS: s + d };
    s += d;
    return ring.add(line, wallStart + (line.endS - streamStart) * 1000 + delay(i));
  });
}

describe('isSegmentFile', () => {
  it.each([
    ['r1-000000012.mp4', true],
    ['r123-000000000.mp4', true],
    ['r2-1234567890.mp4', true],
    // The segmenter's own names.
    [segmentFileName(7, 42), true],
    [segmentFileName(1, 1234567890), true],
    ['index.csv', false],
    ['.index.csv.tmp', false],
    // The clip writer's concat list lives beside the segments while a clip is written.
    ['.rec_nogxkrLBnJ4xbd97.ffconcat', false],
    ['r1-12.mp4', false],
    ['r1-000000012.mp4.tmp', false],
    ['x1-000000012.mp4', false],
    ['r1-000000012.nut', false],
  ])('%s → %s', (name, expected) => {
    expect(isSegmentFile(name)).toBe(expected);
  });
});

describe('SegmentRing', () => {
  it('maps stream time to wall-clock time from the arrivals, taking the least delayed', () => {
    const ring = new SegmentRing();
    // Arrivals late by 40, 5, 70, 5 ms: the offset settles on the smallest delay.
    const segs = feed(ring, 1_000_000, 10, [1, 1, 1, 1], (i) => [40, 5, 70, 5][i]!);
    expect(segs[3]).toEqual({ file: 'r1-3.ts', startAt: 1_003_005, endAt: 1_004_005, durationS: 1 });
    expect(ring.latestEndAt).toBe(1_004_005);
  });

  it('previews the part of an open segment received so far as add() would place it, changing nothing', () => {
    const ring = new SegmentRing();
    feed(ring, 1_000_000, 10, [1, 1], (i) => [40, 5][i]!);
    // Half of the next group, all there 300 ms after its end: placed by the offset already known.
    const open = { file: 'r1-2.ts', startS: 12, endS: 12.5 };
    expect(ring.preview(open, 1_002_800)).toEqual({
      file: 'r1-2.ts',
      startAt: 1_002_005,
      endAt: 1_002_505,
      durationS: 0.5,
    });
    expect(ring.size).toBe(2);
    expect(ring.latestEndAt).toBe(1_002_005);
    // The same group listed whole later lies where the preview said.
    expect(ring.add({ file: 'r1-2.ts', startS: 12, endS: 13 }, 1_003_050)).toMatchObject({ startAt: 1_002_005 });
    // A run with no segment yet: the part is dated by when it was all there.
    ring.newRun();
    expect(ring.preview({ file: 'r2-1.ts', startS: 0, endS: 0.4 }, 1_010_000)).toMatchObject({
      startAt: 1_009_600,
      endAt: 1_010_000,
    });
  });

  it('starts a new estimate when stream time jumps (ffmpeg restarted, or the camera reset its clock)', () => {
    const ring = new SegmentRing();
    feed(ring, 1_000_000, 0, [1, 1]);
    ring.newRun();
    const after = ring.add({ file: 'r2-0.ts', startS: 0, endS: 1 }, 1_010_000);
    expect(after).toEqual({ file: 'r2-0.ts', startAt: 1_009_000, endAt: 1_010_000, durationS: 1 });
    const jumped = ring.add({ file: 'r2-1.ts', startS: 500, endS: 501 }, 1_011_000);
    expect(jumped).toEqual({ file: 'r2-1.ts', startAt: 1_010_000, endAt: 1_011_000, durationS: 1 });
  });

  it('selects from the keyframe at or before `from` through the segment that reaches `to`', () => {
    const ring = new SegmentRing();
    feed(ring, 0, 0, [1, 1, 1, 1, 1, 1]); // [0,1000), [1000,2000), …
    expect(ring.select(2500, 4200)).toEqual({
      segments: [
        { file: 'r1-2.ts', startAt: 2000, endAt: 3000, durationS: 1 },
        { file: 'r1-3.ts', startAt: 3000, endAt: 4000, durationS: 1 },
        { file: 'r1-4.ts', startAt: 4000, endAt: 5000, durationS: 1 },
      ],
      startAt: 2000,
      endAt: 5000,
    });
    expect(ring.select(2000, 3000)?.segments.map((s) => s.file)).toEqual(['r1-2.ts']);
    // Before the oldest segment: start with the oldest (the ring began after the pre-roll).
    expect(ring.select(-5000, 1500)?.segments.map((s) => s.file)).toEqual(['r1-0.ts', 'r1-1.ts']);
    // After everything: nothing to write yet.
    expect(ring.select(7000, 8000)).toBeNull();
    expect(ring.select(6000, 8000)).toBeNull();
  });

  it('starts after a gap in the footage, not with the last segment before it (the camera was down)', () => {
    const ring = new SegmentRing();
    feed(ring, 0, 0, [1, 1]); // [0,1000), [1000,2000)
    ring.newRun();
    ring.add({ file: 'r2-0.ts', startS: 0, endS: 1 }, 31_000); // [30000,31000) after the outage
    ring.add({ file: 'r2-1.ts', startS: 1, endS: 2 }, 32_000);
    expect(ring.select(29_000, 31_500)?.segments.map((s) => s.file)).toEqual(['r2-0.ts', 'r2-1.ts']);
    expect(ring.select(29_000, 31_500)?.startAt).toBe(30_000);
    // An event that began before the outage keeps its footage from both sides.
    expect(ring.select(1500, 30_500)?.segments.map((s) => s.file)).toEqual(['r1-1.ts', 'r2-0.ts']);
  });

  it('prunes what ended before the horizon, but keeps what a pending clip needs', () => {
    const ring = new SegmentRing();
    feed(ring, 0, 0, [1, 1, 1, 1, 1, 1]);
    expect(ring.prune(2500, 1500)).toEqual(['r1-0.ts']); // the clip from 1500 opens on r1-1
    expect(ring.prune(4000, null)).toEqual(['r1-1.ts', 'r1-2.ts', 'r1-3.ts']);
    expect(ring.prune(1e9, null)).toEqual(['r1-4.ts']); // the newest always stays
    expect(ring.size).toBe(1);
  });

  it('fuzz: selections start at or before `from` when the ring holds it, and are contiguous', () => {
    const rng = makeRng();
    for (let run = 0; run < 500; run++) {
      const ring = new SegmentRing();
      const durations = Array.from({ length: 1 + rng.int(30) }, () => 0.2 + rng.int(40) / 10);
      const segs = feed(ring, rng.int(1e9), rng.int(1000), durations, () => rng.int(50));
      const from = segs[0]!.startAt + rng.int(Math.ceil(segs.at(-1)!.endAt - segs[0]!.startAt));
      const to = from + 1 + rng.int(20_000);
      const sel = ring.select(from, to);
      expect(sel, `seed ${rng.seed}`).not.toBeNull();
      expect(sel!.startAt).toBeLessThanOrEqual(from);
      for (let i = 1; i < sel!.segments.length; i++)
        expect(sel!.segments[i]!.startAt).toBeGreaterThanOrEqual(sel!.segments[i - 1]!.startAt);
      // It reaches `to`, or ends with the newest segment (the footage so far).
      expect(sel!.endAt >= to || sel!.segments.at(-1)!.file === segs.at(-1)!.file).toBe(true);
    }
  });
});
