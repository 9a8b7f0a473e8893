import { describe, expect, it } from 'vitest';
import type { EventType } from '../../../src/domain/types.js';
import {
  type ClipCut,
  type EpisodeChange,
  type EpisodeOptions,
  EpisodeTracker,
  MIN_PART_MS,
} from '../../../src/media/recorder/episodes.js';
import { makeRng, type Rng } from '../../support/fuzz.js';

const start = (kind: EventType, at: number) => ({ kind, phase: 'start', at }) as const;
const stop = (kind: EventType, at: number) => ({ kind, phase: 'stop', at }) as const;
const opts: EpisodeOptions = { preRollMs: 5_000, postRollMs: 3_000, maxClipMs: 60_000 };

/** A cut with the fields a test cares about; the rest of episode 1's defaults. */
function cut(c: Partial<ClipCut> & Pick<ClipCut, 'from' | 'to'>): ClipCut {
  return { episode: 1, part: 0, eventType: 'motion', triggeredAt: c.from + opts.preRollMs, final: true, ...c };
}

describe('EpisodeTracker: one episode', () => {
  it('opens on the first start with the pre-roll before it, and ends post-roll after the stop', () => {
    const t = new EpisodeTracker(opts);
    expect(t.current).toBeNull();
    expect(t.event(start('motion', 100_000))).toEqual([
      { type: 'opened', episode: 1, at: 100_000, eventType: 'motion' },
    ]);
    expect(t.current).toEqual({ episode: 1, from: 95_000, eventType: 'motion', triggeredAt: 100_000 });
    expect(t.tick(105_000)).toEqual([]);
    // Before the stop: the end of its first part, or the start going stale (10 minutes) plus the post-roll.
    expect(t.nextDueAt()).toBe(155_000);
    expect(t.event(stop('motion', 110_000))).toEqual([]);
    expect(t.tick(112_999)).toEqual([]);
    expect(t.current).not.toBeNull(); // still in the post-roll
    expect(t.nextDueAt()).toBe(113_000);
    expect(t.tick(113_000)).toEqual([cut({ from: 95_000, to: 113_000 })]);
    expect(t.current).toBeNull();
    expect(t.nextDueAt()).toBeNull();
    expect(t.tick(200_000)).toEqual([]); // handed out once
  });

  it('is extended by a start during the post-roll', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 100_000));
    t.event(stop('motion', 110_000)); // would end at 113 000
    expect(t.event(start('motion', 112_999))).toEqual([]);
    expect(t.tick(113_000)).toEqual([]);
    t.event(stop('motion', 120_000));
    expect(t.tick(123_000)).toEqual([cut({ from: 95_000, to: 123_000 })]);
  });

  it('lasts while any kind is active: ends post-roll after the last of them stops', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 0));
    t.event(start('human', 1_000));
    t.event(stop('motion', 2_000));
    expect(t.tick(4_000)).toEqual([]);
    expect(t.current?.episode).toBe(1);
    t.event(stop('human', 5_000));
    expect(t.tick(7_999)).toEqual([]);
    expect(t.tick(8_000)).toEqual([cut({ from: -5_000, to: 8_000, eventType: 'human' })]);
  });

  it('ignores a start of an active kind and a stop of an inactive one', () => {
    const t = new EpisodeTracker(opts);
    expect(t.event(stop('human', 0))).toEqual([]);
    expect(t.current).toBeNull();
    t.event(start('motion', 10_000));
    expect(t.event(start('motion', 12_000))).toEqual([]);
    expect(t.current).toEqual({ episode: 1, from: 5_000, eventType: 'motion', triggeredAt: 10_000 });
    t.event(stop('motion', 15_000));
    t.event(stop('vehicle', 16_000));
    t.event(stop('motion', 17_000)); // already stopped: the end stays at 18 000
    expect(t.tick(1_000_000)).toEqual([cut({ from: 5_000, to: 18_000 })]);
  });

  it('never opens an episode with a stop, and hands out nothing without events', () => {
    const t = new EpisodeTracker(opts);
    for (const kind of ['motion', 'human', 'vehicle'] as const) expect(t.event(stop(kind, 1_000))).toEqual([]);
    expect(t.tick(10_000_000)).toEqual([]);
    expect(t.abort(10_000_001)).toEqual([]);
  });

  it('makes an episode with no pre- or post-roll and one instant of event MIN_PART_MS long (its alert needs a recording)', () => {
    const t = new EpisodeTracker({ preRollMs: 0, postRollMs: 0, maxClipMs: 10_000 });
    t.event(start('vehicle', 50));
    t.event(stop('vehicle', 50));
    expect(t.tick(50)).toEqual([]);
    expect(t.tick(50 + MIN_PART_MS)).toEqual([
      cut({ from: 50, to: 50 + MIN_PART_MS, eventType: 'vehicle', triggeredAt: 50 }),
    ]);
  });
});

describe('EpisodeTracker: the footage an open episode still needs', () => {
  it('is its next part only: an episode kept open for an hour by one start after another needs no more than a part', () => {
    const maxClipMs = 60_000;
    const t = new EpisodeTracker({ preRollMs: 5_000, postRollMs: 10_000, maxClipMs });
    expect(t.pendingFrom).toBeNull();
    const handed: ClipCut[] = [];
    // A start and a stop every 8 s, within the post-roll: one episode all along.
    for (let at = 100_000; at < 100_000 + 3600_000; at += 8_000) {
      t.event(start('motion', at));
      t.event(stop('motion', at + 2_000));
      handed.push(...t.tick(at + 2_000));
      const from = t.pendingFrom;
      expect(from).not.toBeNull();
      // Nothing after pendingFrom has been handed out, and everything before it has.
      expect(handed.at(-1)?.to ?? 95_000).toBe(from);
      expect(at + 2_000 - from!).toBeLessThanOrEqual(maxClipMs);
    }
    expect(t.current?.episode).toBe(1);
    expect(handed.length).toBeGreaterThanOrEqual(59);
    expect(handed.every((c) => c.episode === 1 && !c.final)).toBe(true);
    const [last] = t.abort(100_000 + 3600_000);
    expect(last?.from).toBe(handed.at(-1)?.to);
    expect(t.pendingFrom).toBeNull();
  });
});

describe('EpisodeTracker: event type', () => {
  it.each<[EventType[], EpisodeChange[], EventType]>([
    [['motion'], [], 'motion'],
    [['motion', 'human', 'vehicle'], [{ type: 'upgraded', episode: 1, eventType: 'human' }], 'human'],
    [['motion', 'vehicle', 'human'], [{ type: 'upgraded', episode: 1, eventType: 'vehicle' }], 'vehicle'],
    [['human', 'motion'], [], 'human'],
    [['vehicle', 'human', 'motion'], [], 'vehicle'],
  ])('starts %j: changes after the opening %j, type %s', (kinds, changes, type) => {
    const t = new EpisodeTracker(opts);
    const got = kinds.flatMap((kind, i) => t.event(start(kind, 1_000 * i)));
    expect(got[0]).toEqual({ type: 'opened', episode: 1, at: 0, eventType: kinds[0] });
    expect(got.slice(1)).toEqual(changes);
    expect(t.current?.eventType).toBe(type);
    kinds.forEach((kind) => t.event(stop(kind, 10_000)));
    expect(t.tick(13_000)).toEqual([cut({ from: -5_000, to: 13_000, eventType: type })]);
  });

  it("types each part with the most specific class seen before its end; the final part with the alert's", () => {
    const t = new EpisodeTracker({ preRollMs: 0, postRollMs: 0, maxClipMs: 10_000 });
    t.event(start('motion', 0));
    t.event(start('human', 10_000)); // exactly at part 1's start: part 0 saw motion only
    t.event(stop('human', 11_000));
    t.event(stop('motion', 25_000));
    t.event(start('motion', 25_000)); // a new episode (the first ended at 25 000)
    t.event(start('vehicle', 26_000));
    t.event(stop('motion', 27_000));
    t.event(stop('vehicle', 27_000));
    expect(t.tick(30_000).map((c) => [c.episode, c.part, c.eventType, c.final])).toEqual([
      [1, 0, 'motion', false],
      [1, 1, 'human', false],
      [1, 2, 'human', true],
      [2, 0, 'vehicle', true],
    ]);
  });
});

describe('EpisodeTracker: parts', () => {
  it('splits at maxClipMs and hands out parts while the events go on', () => {
    const t = new EpisodeTracker({ ...opts, maxClipMs: 10_000 });
    t.event(start('motion', 100_000));
    expect(t.tick(104_999)).toEqual([]);
    expect(t.tick(105_000)).toEqual([cut({ from: 95_000, to: 105_000, final: false })]);
    expect(t.tick(130_000)).toEqual([
      cut({ part: 1, from: 105_000, to: 115_000, triggeredAt: 100_000, final: false }),
      cut({ part: 2, from: 115_000, to: 125_000, triggeredAt: 100_000, final: false }),
    ]);
    t.event(stop('motion', 131_000));
    expect(t.tick(140_000)).toEqual([cut({ part: 3, from: 125_000, to: 134_000, triggeredAt: 100_000 })]);
  });

  it('ends with a whole part when the end falls on a boundary', () => {
    const t = new EpisodeTracker({ ...opts, maxClipMs: 10_000 });
    t.event(start('motion', 5_000));
    t.event(stop('motion', 17_000));
    expect(t.tick(20_000)).toEqual([
      cut({ from: 0, to: 10_000, final: false }),
      cut({ part: 1, from: 10_000, to: 20_000, triggeredAt: 5_000 }),
    ]);
  });

  it('holds a part back while the end could still fall on its boundary (no post-roll)', () => {
    const t = new EpisodeTracker({ preRollMs: 0, postRollMs: 0, maxClipMs: 10_000 });
    t.event(start('motion', 0));
    expect(t.tick(10_000)).toEqual([]); // a stop at 10 000 would make part 0 the final one
    t.event(stop('motion', 10_000));
    expect(t.current).toBeNull(); // over already: nothing can extend it
    expect(t.tick(10_000)).toEqual([cut({ from: 0, to: 10_000, triggeredAt: 0 })]);

    const u = new EpisodeTracker({ preRollMs: 0, postRollMs: 0, maxClipMs: 10_000 });
    u.event(start('motion', 0));
    u.tick(10_000);
    expect(u.tick(10_001)).toEqual([cut({ from: 0, to: 10_000, triggeredAt: 0, final: false })]);
  });

  it('drops a tail shorter than MIN_PART_MS instead of making it a clip (and keeps one of MIN_PART_MS)', () => {
    const short = new EpisodeTracker({ preRollMs: 0, postRollMs: 0, maxClipMs: 10 });
    short.event(start('motion', 0));
    short.event(stop('motion', 20.5));
    expect(short.tick(100).map((c) => [c.from, c.to, c.final])).toEqual([
      [0, 10, false],
      [10, 20, true],
    ]);
    const whole = new EpisodeTracker({ preRollMs: 0, postRollMs: 0, maxClipMs: 10 });
    whole.event(start('motion', 0));
    whole.event(stop('motion', 20 + MIN_PART_MS));
    expect(whole.tick(100).map((c) => [c.from, c.to, c.final])).toEqual([
      [0, 10, false],
      [10, 20, false],
      [20, 20 + MIN_PART_MS, true],
    ]);
  });
});

describe('EpisodeTracker: the next episode', () => {
  it("opens a new episode for a start at or after the end, never covering the previous one's footage again", () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 100_000));
    t.event(stop('motion', 110_000)); // ends at 113 000
    expect(t.event(start('human', 113_000))).toEqual([{ type: 'opened', episode: 2, at: 113_000, eventType: 'human' }]);
    expect(t.current).toEqual({ episode: 2, from: 113_000, eventType: 'human', triggeredAt: 113_000 }); // not 108 000
    t.event(stop('human', 114_000));
    expect(t.tick(117_000)).toEqual([
      cut({ from: 95_000, to: 113_000 }),
      cut({ episode: 2, from: 113_000, to: 117_000, eventType: 'human', triggeredAt: 113_000 }),
    ]);
    t.event(start('motion', 200_000)); // far enough: the whole pre-roll
    expect(t.current).toEqual({ episode: 3, from: 195_000, eventType: 'motion', triggeredAt: 200_000 });
  });
});

describe('EpisodeTracker: clock skew', () => {
  it('moves an event stamped before the latest event to that time', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 100_000));
    t.event(stop('motion', 90_000)); // the camera's clock jumped back
    expect(t.tick(103_000)).toEqual([cut({ from: 95_000, to: 103_000 })]);
  });

  it('keeps a late stop at its own time, but never ends inside a part already handed out', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 100_000));
    expect(t.tick(200_000)).toEqual([cut({ from: 95_000, to: 155_000, final: false, triggeredAt: 100_000 })]);
    t.event(stop('motion', 150_000)); // lagging: would end inside the part already handed out
    expect(t.tick(203_000)).toEqual([cut({ part: 1, from: 155_000, to: 155_001, triggeredAt: 100_000 })]);
  });

  it('ends at a stop reported late (stamped when it happened) plus the post-roll, not at the report', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 100_000));
    t.tick(110_000);
    t.tick(111_500); // the stop happened at 110 000; the ONVIF tracker reports it 1.5 s later
    t.event(stop('motion', 110_000));
    expect(t.tick(114_000)).toEqual([cut({ from: 95_000, to: 113_000, triggeredAt: 100_000 })]);
  });

  it('moves a start of a new episode to the latest time seen', () => {
    const t = new EpisodeTracker(opts);
    t.tick(50_000);
    expect(t.event(start('motion', 40_000))).toEqual([{ type: 'opened', episode: 1, at: 50_000, eventType: 'motion' }]);
    expect(t.current?.from).toBe(45_000);
  });
});

describe('EpisodeTracker: stale events', () => {
  const stale = { ...opts, staleEventMs: 60_000 };

  it('treats a kind active for staleEventMs without a stop as stopped then', () => {
    const t = new EpisodeTracker(stale);
    t.event(start('motion', 0));
    expect(t.tick(62_999)).toEqual([cut({ from: -5_000, to: 55_000, final: false, triggeredAt: 0 })]);
    expect(t.tick(1_000_000)).toEqual([cut({ part: 1, from: 55_000, to: 63_000, triggeredAt: 0 })]);
    expect(t.event(stop('motion', 1_000_001))).toEqual([]); // the late stop is ignored
    expect(t.current).toBeNull();
  });

  it('times each kind from its own start, and uses the default of 10 minutes', () => {
    const t = new EpisodeTracker(stale);
    t.event(start('motion', 0));
    t.event(start('human', 30_000));
    expect(t.tick(10_000_000).at(-1)).toMatchObject({ to: 93_000, final: true, eventType: 'human' });

    const d = new EpisodeTracker({ ...opts, maxClipMs: 3_600_000 });
    d.event(start('motion', 0));
    expect(d.tick(10_000_000)).toEqual([cut({ from: -5_000, to: 603_000, triggeredAt: 0 })]);
  });

  it('lets a start after the stale end open the next episode', () => {
    const t = new EpisodeTracker(stale);
    t.event(start('motion', 0));
    expect(t.event(start('vehicle', 70_000))).toEqual([
      { type: 'opened', episode: 2, at: 70_000, eventType: 'vehicle' },
    ]);
    expect(t.current?.from).toBe(65_000);
    expect(t.tick(70_000)).toEqual([
      cut({ part: 0, from: -5_000, to: 55_000, final: false, triggeredAt: 0 }),
      cut({ part: 1, from: 55_000, to: 63_000, triggeredAt: 0 }),
    ]);
  });

  it('keeps the stale clock of a kind when its start repeats (a stuck camera cannot record forever)', () => {
    const t = new EpisodeTracker({ ...stale, maxClipMs: 3_600_000 });
    t.event(start('motion', 0));
    t.event(start('motion', 50_000));
    expect(t.tick(1_000_000)).toEqual([cut({ from: -5_000, to: 63_000, triggeredAt: 0 })]);
  });
});

describe('EpisodeTracker: abort', () => {
  it('closes an active episode at once, without post-roll', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 0));
    expect(t.abort(20_000)).toEqual([cut({ from: -5_000, to: 20_000, triggeredAt: 0 })]);
    expect(t.current).toBeNull();
    expect(t.tick(1_000_000)).toEqual([]);
  });

  it('cuts the post-roll short', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 0));
    t.event(stop('motion', 10_000));
    expect(t.abort(11_000)).toEqual([cut({ from: -5_000, to: 11_000, triggeredAt: 0 })]);
  });

  it('hands out the parts of an episode that ended but was not ticked, and the next one', () => {
    const t = new EpisodeTracker(opts);
    t.event(start('motion', 0));
    t.event(stop('motion', 1_000)); // ends at 4 000
    t.event(start('human', 5_000));
    expect(t.abort(6_000)).toEqual([
      cut({ from: -5_000, to: 4_000, triggeredAt: 0 }),
      cut({ episode: 2, from: 4_000, to: 6_000, eventType: 'human', triggeredAt: 5_000 }),
    ]);
  });

  it('ends at most MIN_PART_MS past `at` when a part was just handed out up to it', () => {
    const t = new EpisodeTracker({ ...opts, maxClipMs: 10_000 });
    t.event(start('motion', 0));
    expect(t.tick(25_000)).toHaveLength(3);
    expect(t.abort(25_000)).toEqual([cut({ part: 3, from: 25_000, to: 25_000 + MIN_PART_MS, triggeredAt: 0 })]);
    expect(t.event(start('motion', 25_000))).toEqual([
      { type: 'opened', episode: 2, at: 25_000 + MIN_PART_MS, eventType: 'motion' },
    ]);
    expect(t.current?.from).toBe(25_000 + MIN_PART_MS);
  });
});

describe('EpisodeTracker: input', () => {
  it.each<[string, EpisodeOptions]>([
    ['preRollMs', { ...opts, preRollMs: -1 }],
    ['postRollMs', { ...opts, postRollMs: Number.NaN }],
    ['maxClipMs', { ...opts, maxClipMs: 0 }],
    ['maxClipMs', { ...opts, maxClipMs: Number.POSITIVE_INFINITY }],
    ['staleEventMs', { ...opts, staleEventMs: 0 }],
  ])('rejects a bad %s', (name, bad) => {
    expect(() => new EpisodeTracker(bad)).toThrow(new RegExp(`^${name} must be`));
    expect(() => new EpisodeTracker(bad)).toThrow(RangeError);
  });

  it('rejects times that are not finite', () => {
    const t = new EpisodeTracker(opts);
    expect(() => t.event(start('motion', Number.NaN))).toThrow(RangeError);
    expect(() => t.tick(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => t.abort(Number.NEGATIVE_INFINITY)).toThrow(RangeError);
    expect(t.current).toBeNull();
  });
});

// ---- properties over random event sequences ----

const KINDS: readonly EventType[] = ['motion', 'human', 'vehicle'];

interface Trace {
  cuts: ClipCut[];
  changes: EpisodeChange[];
}

/** Random options at a random time scale, so that tiny and long clips both occur. */
function randomOptions(rng: Rng): { opts: Required<EpisodeOptions>; unit: number } {
  const unit = rng.pick([1, 10, 1_000]);
  return {
    unit,
    opts: {
      preRollMs: rng.int(3) === 0 ? 0 : rng.int(5 * unit),
      postRollMs: rng.int(3) === 0 ? 0 : rng.int(5 * unit),
      maxClipMs: Math.max(1, Math.ceil(unit / 10)) + rng.int(20 * unit),
      staleEventMs: 1 + rng.int(40 * unit),
    },
  };
}

describe('EpisodeTracker: properties', () => {
  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): parts are ordered, bounded and cover the events; every opened episode gets one final part`, () => {
    for (let run = 0; run < 1_000; run++) {
      const { opts: o, unit } = randomOptions(rng);
      const fractional = rng.int(4) === 0;
      const jitter = (span: number) => rng.int(span) + (fractional ? rng.next() : 0);
      const t = new EpisodeTracker(o);
      const trace: Trace = { cuts: [], changes: [] };
      // What the tracker must do with time, modelled independently: the clamp, and the kinds
      // active (a stop of one of them must lie inside its episode).
      let latest = -Infinity;
      let latestEvent = -Infinity;
      const active = new Map<EventType, number>();
      const mustCover: Array<{ episode: number; at: number }> = [];
      const advance = (at: number) => {
        latest = Math.max(latest, at);
        for (const [kind, since] of active) if (since + o.staleEventMs <= latest) active.delete(kind);
        return latest;
      };
      const collect = (cuts: ClipCut[], now: number) => {
        for (const c of cuts) expect(c.to).toBeLessThanOrEqual(now);
        trace.cuts.push(...cuts);
      };

      let clock = rng.int(1_000 * unit);
      const steps = 1 + rng.int(120);
      for (let i = 0; i < steps; i++) {
        clock += jitter(3 * unit);
        const at = clock - jitter(2 * unit) + (rng.int(4) === 0 ? jitter(unit) : 0);
        const op = rng.int(30);
        if (op < 16) {
          const kind = rng.pick(KINDS);
          const phase = rng.pick(['start', 'stop'] as const);
          const before = t.current;
          const e = advance(at);
          trace.changes.push(...t.event({ kind, phase, at }));
          if (phase === 'start') {
            if (!active.has(kind)) active.set(kind, e);
            latestEvent = e;
            mustCover.push({ episode: t.current!.episode, at: e });
          } else if (active.has(kind)) {
            // A stop keeps its own time: not before its start, nor before the previous event.
            const stoppedAt = Math.max(at, active.get(kind)!, latestEvent);
            active.delete(kind);
            latestEvent = stoppedAt;
            mustCover.push({ episode: before!.episode, at: stoppedAt });
          }
        } else if (op < 29) {
          // Nothing is handed out before the time the tracker says is the next due.
          const due = t.nextDueAt() ?? Number.POSITIVE_INFINITY;
          if (at < due) expect(t.tick(at), `tick at ${at} before due ${due}`).toEqual([]);
          advance(at);
          collect(t.tick(at), at);
        } else {
          const cuts = t.abort(at);
          trace.cuts.push(...cuts);
          advance(Math.max(at, ...cuts.map((c) => c.to)));
          active.clear();
        }
      }
      if (rng.int(2) === 0) collect(t.tick(clock + 1_000_000 * unit), clock + 1_000_000 * unit);
      else trace.cuts.push(...t.abort(clock));
      expect(t.current).toBeNull();

      const context = `run ${run}, options ${JSON.stringify(o)}`;
      checkCuts(trace, o.maxClipMs, fractional, context);
      const spans = new Map<number, { from: number; to: number }>();
      for (const c of trace.cuts) spans.set(c.episode, { from: spans.get(c.episode)?.from ?? c.from, to: c.to });
      // A dropped tail (shorter than MIN_PART_MS) can only occur with fractional times.
      const slack = fractional ? MIN_PART_MS : 0;
      for (const { episode, at } of mustCover) {
        const span = spans.get(episode)!;
        expect(at, `${context}: ${at} in episode ${episode} ${JSON.stringify(span)}`).toBeGreaterThanOrEqual(span.from);
        expect(at, `${context}: ${at} in episode ${episode} ${JSON.stringify(span)}`).toBeLessThanOrEqual(
          span.to + slack,
        );
      }
    }
  });

  it(`fuzz (seed ${rng.seed}): the parts do not depend on when tick() is called`, () => {
    for (let run = 0; run < 400; run++) {
      const { opts: o, unit } = randomOptions(rng);
      const events: Array<{ kind: EventType; phase: 'start' | 'stop'; at: number }> = [];
      let at = 0;
      for (let i = rng.int(80); i > 0; i--) {
        at += rng.int(3 * unit);
        events.push({ kind: rng.pick(KINDS), phase: rng.pick(['start', 'stop'] as const), at });
      }
      const once = new EpisodeTracker(o);
      const often = new EpisodeTracker(o);
      const a: Trace = { cuts: [], changes: [] };
      const b: Trace = { cuts: [], changes: [] };
      let previous = 0;
      for (const e of events) {
        // Ticks never run ahead of the next event, so no event is moved by them.
        for (let n = rng.int(3); n > 0; n--) {
          previous += rng.int(e.at - previous + 1);
          b.cuts.push(...often.tick(previous));
        }
        a.changes.push(...once.event(e));
        b.changes.push(...often.event(e));
        previous = e.at;
      }
      const end = at + 1_000_000 * unit;
      a.cuts.push(...once.tick(end));
      b.cuts.push(...often.tick(end));
      expect(b, `run ${run}, options ${JSON.stringify(o)}`).toEqual(a);
      checkCuts(a, o.maxClipMs, false, `run ${run}`);
    }
  });
});

/** The invariants of any sequence of cuts handed out, with every opened episode closed. */
function checkCuts({ cuts, changes }: Trace, maxClipMs: number, fractional: boolean, context: string): void {
  // Part bounds are sums of fractional times; allow for their rounding only.
  const epsilon = fractional ? 1e-6 : 0;
  const opened = changes.filter((c): c is Extract<EpisodeChange, { type: 'opened' }> => c.type === 'opened');
  const typeOf = new Map<number, EventType>();
  for (const c of changes) typeOf.set(c.episode, c.eventType);
  expect(
    cuts.filter((c) => c.final).map((c) => c.episode),
    context,
  ).toEqual(opened.map((c) => c.episode));
  cuts.forEach((c, i) => {
    const where = `${context}, cut ${i}: ${JSON.stringify(c)}`;
    expect(c.to - c.from, where).toBeGreaterThanOrEqual(MIN_PART_MS - epsilon);
    expect(c.to - c.from, where).toBeLessThanOrEqual(maxClipMs + epsilon);
    expect(c.triggeredAt, where).toBe(opened.find((o) => o.episode === c.episode)?.at);
    if (c.final) expect(c.eventType, where).toBe(typeOf.get(c.episode));
    const previous = cuts[i - 1];
    if (!previous) {
      expect(c.part, where).toBe(0);
    } else if (previous.episode === c.episode) {
      expect([c.part, c.from, previous.final], where).toEqual([previous.part + 1, previous.to, false]);
      if (previous.eventType !== 'motion') expect(c.eventType, where).toBe(previous.eventType);
    } else {
      expect([c.episode, c.part, previous.final], where).toEqual([previous.episode + 1, 0, true]);
      expect(c.from, where).toBeGreaterThanOrEqual(previous.to);
    }
    if (c.part === 0) expect(c.from, where).toBeLessThanOrEqual(c.triggeredAt);
  });
}
