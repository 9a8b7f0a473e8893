import { describe, expect, it } from 'vitest';
import { DecodeTimeline, type DecodeTimelineOptions, type TimedUnit } from '../../../src/media/fmp4/decode-timeline.js';

// PTS in decoding order in, DTS / composition offset / duration out (see decode-timeline.ts).

function timeline(
  rtpTimes: number[],
  options: DecodeTimelineOptions = {},
  flushWith?: number,
): Array<Omit<TimedUnit<number>, 'unit'> & { unit: number }> {
  const out: Array<TimedUnit<number>> = [];
  const t = new DecodeTimeline<number>((u) => out.push(u), options);
  rtpTimes.forEach((rtp, i) => t.push(i, rtp));
  t.flush(flushWith);
  return out;
}

const pts = (rows: Array<{ dts: number; compositionOffset: number }>) => rows.map((r) => r.dts + r.compositionOffset);

describe('DecodeTimeline', () => {
  it.each<[string, number[], DecodeTimelineOptions, number[], number[]]>([
    ['no reordering: DTS = PTS', [1000, 4000, 7000, 10000], {}, [0, 3000, 6000, 9000], [0, 0, 0, 0]],
    [
      'I P B B with depth 1 given',
      [0, 9000, 3000, 6000],
      { initialReorderDepth: 1 },
      [0, 3000, 6000, 9000],
      [0, 6000, -3000, -3000],
    ],
    [
      'B-pyramid I P B b b with depth 2',
      [0, 12000, 6000, 3000, 9000],
      { initialReorderDepth: 2 },
      [0, 3000, 6000, 9000, 12000],
      [0, 9000, 0, -6000, -3000],
    ],
    ['the zero from the shared timeline', [91000, 94000], { zeroRtpTime: 90000 }, [1000, 4000], [0, 0]],
    ['across the 32-bit wrap', [0xffffff00, 0x100], {}, [0, 0x200], [0, 0]],
    [
      'a clock that jumps back: continues one spacing on',
      [2_000_000, 2_003_000, 7, 3007],
      {},
      [0, 3000, 6000, 9000],
      [0, 0, 0, 0],
    ],
    [
      'a clock that jumps ahead by hours',
      [0, 3000, 3000 + 3600 * 90_000, 6000 + 3600 * 90_000],
      {},
      [0, 3000, 6000, 9000],
      [0, 0, 0, 0],
    ],
  ])('%s', (_name, rtp, options, dts, offsets) => {
    const rows = timeline(rtp, options);
    expect(rows.map((r) => r.dts)).toEqual(dts);
    expect(rows.map((r) => r.compositionOffset)).toEqual(offsets);
    expect(rows.map((r) => r.unit)).toEqual(rtp.map((_, i) => i));
  });

  it('learns B-frames it was not told about: PTS kept exactly, DTS increasing, then spaced by the frame', () => {
    const rtp = [0, 9000, 3000, 6000, 18000, 12000, 15000, 27000, 21000, 24000];
    const rows = timeline(rtp);
    expect(pts(rows)).toEqual(rtp);
    rows.forEach((r, i) => i > 0 && expect(r.dts).toBeGreaterThan(rows[i - 1]!.dts));
    expect(rows.slice(-4).map((r) => r.duration)).toEqual([3000, 3000, 3000, 3000]);
  });

  it('gives every unit the distance to the next DTS, the last the one given to flush', () => {
    expect(timeline([0, 3000, 9000], {}, 1234).map((r) => r.duration)).toEqual([3000, 6000, 1234]);
    expect(timeline([0, 3000, 9000]).map((r) => r.duration)).toEqual([3000, 6000, 6000]);
  });

  it('drops units before the timeline zero and counts them', () => {
    const out: number[] = [];
    const t = new DecodeTimeline<number>((u) => out.push(u.unit), { zeroRtpTime: 10_000 });
    t.push(1, 5000);
    t.push(2, 10_000);
    t.push(3, 13_000);
    t.flush();
    expect(out).toEqual([2, 3]);
    expect(t.dropped).toBe(1);
  });
});
