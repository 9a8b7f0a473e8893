import { describe, expect, it } from 'vitest';
import { planRetention, type RetainedClip, type RetentionInput } from '../../../src/media/recorder/retention.js';
import { makeRng } from '../../support/fuzz.js';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;
const GB = 1_000_000_000;

/** Clip c<i>, i days old, 1 GB, listed newest first (the planner must not rely on order). */
const clips = (n: number): RetainedClip[] =>
  Array.from({ length: n }, (_, i) => ({ id: `c${i}`, startedAt: NOW - i * DAY, sizeBytes: GB }));
const input = (over: Partial<RetentionInput>): RetentionInput => ({
  clips: clips(5),
  now: NOW,
  maxAgeDays: 30,
  maxBytes: null,
  freeBytes: 100 * GB,
  minFreeBytes: 1 * GB,
  busy: new Set(),
  ...over,
});

describe('planRetention', () => {
  it('removes nothing within the limits', () => {
    expect(planRetention(input({}))).toEqual({ remove: [], shortfallBytes: 0 });
    expect(planRetention(input({ clips: [] }))).toEqual({ remove: [], shortfallBytes: 0 });
  });

  it('removes clips older than maxAgeDays (one exactly that old stays)', () => {
    expect(planRetention(input({ maxAgeDays: 3 })).remove).toEqual([{ id: 'c4', reason: 'age' }]);
    expect(planRetention(input({ maxAgeDays: 2.5 })).remove).toEqual([
      { id: 'c4', reason: 'age' },
      { id: 'c3', reason: 'age' },
    ]);
  });

  it('removes the oldest clips until all of them fit in maxBytes', () => {
    expect(planRetention(input({ maxBytes: 3 * GB })).remove).toEqual([
      { id: 'c4', reason: 'bytes' },
      { id: 'c3', reason: 'bytes' },
    ]);
    expect(planRetention(input({ maxBytes: 3 * GB + 1 })).remove).toEqual([
      { id: 'c4', reason: 'bytes' },
      { id: 'c3', reason: 'bytes' },
    ]);
    expect(planRetention(input({ maxBytes: 5 * GB })).remove).toEqual([]);
    expect(planRetention(input({ maxBytes: 0 })).remove).toHaveLength(5);
  });

  it('removes the oldest clips until free space reaches the floor, and reports what is still missing', () => {
    expect(planRetention(input({ freeBytes: 0.5 * GB, minFreeBytes: 2 * GB }))).toEqual({
      remove: [
        { id: 'c4', reason: 'free' },
        { id: 'c3', reason: 'free' },
      ],
      shortfallBytes: 0,
    });
    expect(planRetention(input({ freeBytes: 2 * GB, minFreeBytes: 2 * GB })).remove).toEqual([]);
    expect(planRetention(input({ freeBytes: 0, minFreeBytes: 7 * GB }))).toEqual({
      remove: ['c4', 'c3', 'c2', 'c1', 'c0'].map((id) => ({ id, reason: 'free' })),
      shortfallBytes: 2 * GB,
    });
  });

  it('gives each clip the first reason in the order age, bytes, free', () => {
    const plan = planRetention(input({ maxAgeDays: 3.5, maxBytes: 3 * GB, freeBytes: 0, minFreeBytes: 3 * GB }));
    expect(plan.remove).toEqual([
      { id: 'c4', reason: 'age' },
      { id: 'c3', reason: 'bytes' },
      { id: 'c2', reason: 'free' },
    ]);
  });

  it('never removes a busy clip, though it counts toward maxBytes', () => {
    const plan = planRetention(input({ maxAgeDays: 1.5, busy: new Set(['c4', 'c2']) }));
    expect(plan.remove).toEqual([{ id: 'c3', reason: 'age' }]);
    expect(planRetention(input({ maxBytes: 3 * GB, busy: new Set(['c4']) })).remove).toEqual([
      { id: 'c3', reason: 'bytes' },
      { id: 'c2', reason: 'bytes' },
    ]);
    expect(
      planRetention(input({ freeBytes: 0, minFreeBytes: 3 * GB, busy: new Set(['c0', 'c1', 'c2', 'c3']) })),
    ).toEqual({
      remove: [{ id: 'c4', reason: 'free' }],
      shortfallBytes: 2 * GB,
    });
  });

  it('orders by start time then id, whatever the input order', () => {
    const tied: RetainedClip[] = [
      { id: 'b', startedAt: 10, sizeBytes: 1 },
      { id: 'c', startedAt: 5, sizeBytes: 1 },
      { id: 'B', startedAt: 10, sizeBytes: 1 },
      { id: 'a', startedAt: 10, sizeBytes: 1 },
    ];
    const plan = planRetention({
      clips: tied,
      now: 20,
      maxAgeDays: 1,
      maxBytes: 1,
      freeBytes: 0,
      minFreeBytes: 0,
      busy: new Set(),
    });
    expect(plan.remove.map((r) => r.id)).toEqual(['c', 'B', 'a']);
    expect(tied.map((c) => c.id)).toEqual(['b', 'c', 'B', 'a']); // the input is left alone
  });

  it.each<[string, Partial<RetentionInput>]>([
    ['maxAgeDays', { maxAgeDays: 0 }],
    ['maxAgeDays', { maxAgeDays: Number.NaN }],
    ['maxBytes', { maxBytes: -1 }],
    ['minFreeBytes', { minFreeBytes: Number.POSITIVE_INFINITY }],
    ['freeBytes', { freeBytes: Number.NaN }],
    ['now', { now: Number.NaN }],
    ['sizeBytes of x', { clips: [{ id: 'x', startedAt: 0, sizeBytes: -5 }] }],
    ['startedAt of x', { clips: [{ id: 'x', startedAt: Number.NaN, sizeBytes: 5 }] }],
  ])('rejects a bad %s', (name, over) => {
    expect(() => planRetention(input(over))).toThrow(RangeError);
    expect(() => planRetention(input(over))).toThrow(new RegExp(`^${name} must be`));
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): meets the limits with the shortest oldest-first run of removable clips`, () => {
    for (let run = 0; run < 5_000; run++) {
      const n = rng.int(30);
      const list: RetainedClip[] = Array.from({ length: n }, (_, i) => ({
        id: rng.string(3, 'abcAB') + i,
        startedAt: NOW - rng.int(10) * DAY - rng.pick([0, rng.int(DAY)]), // many ties
        sizeBytes: rng.int(4) === 0 ? 0 : rng.int(1_000),
      }));
      const busy = new Set(list.filter(() => rng.int(5) === 0).map((c) => c.id));
      const total = list.reduce((sum, c) => sum + c.sizeBytes, 0);
      const limits: RetentionInput = {
        clips: list,
        now: NOW,
        maxAgeDays: rng.pick([0.5, 1, 3, 5, 30]),
        maxBytes: rng.int(3) === 0 ? null : rng.int(total + 1),
        freeBytes: rng.int(2_000),
        minFreeBytes: rng.int(3) === 0 ? 0 : rng.int(4_000),
        busy,
      };
      const context = `run ${run}: ${JSON.stringify({ ...limits, busy: [...busy] })}`;
      const plan = planRetention(limits);

      const removable = [...list]
        .sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1))
        .filter((c) => !busy.has(c.id));
      const removed = removable.slice(0, plan.remove.length);
      expect(
        plan.remove.map((r) => r.id),
        context,
      ).toEqual(removed.map((c) => c.id));

      const cutoff = NOW - limits.maxAgeDays * DAY;
      const tooOld = (c: RetainedClip) => c.startedAt < cutoff;
      let bytes = total;
      let free = limits.freeBytes;
      const overBytes = () => limits.maxBytes !== null && bytes > limits.maxBytes;
      plan.remove.forEach((r, i) => {
        const clip = removed[i]!;
        // The reason is the first limit that still wants it gone.
        expect(r.reason, context).toBe(
          tooOld(clip) ? 'age' : overBytes() ? 'bytes' : free < limits.minFreeBytes ? 'free' : 'none needed',
        );
        bytes -= clip.sizeBytes;
        free += clip.sizeBytes;
      });
      expect(plan.shortfallBytes, context).toBe(Math.max(0, limits.minFreeBytes - free));
      if (plan.remove.length < removable.length) {
        // Stopped early: every limit is met by what stays (busy clips aside).
        expect(removable.slice(plan.remove.length).some(tooOld), context).toBe(false);
        expect(overBytes(), context).toBe(false);
        expect(plan.shortfallBytes, context).toBe(0);
      }
    }
  });
});
