import { describe, expect, it } from 'vitest';
import { EventTracker, type TrackerOutput } from '../../src/onvif/event-tracker.js';
import type { Notification, PropertyOperation } from '../../src/onvif/notification.js';
import type { Classification, EventKind } from '../../src/onvif/topics.js';
import { makeRng } from '../support/fuzz.js';

const DEBOUNCE = 1500;

type Step =
  | { t: number; kind: EventKind; active: boolean; key: string; op: PropertyOperation | null; momentary?: true }
  | { t: number; tick: true }
  | { t: number; reset: true }
  | { t: number; unclassified: true };

const on = (t: number, kind: EventKind = 'motion', key = 'a', op: PropertyOperation | null = 'Changed'): Step => ({
  t,
  kind,
  active: true,
  key,
  op,
});
const off = (t: number, kind: EventKind = 'motion', key = 'a', op: PropertyOperation | null = 'Changed'): Step => ({
  t,
  kind,
  active: false,
  key,
  op,
});
const init = (t: number, active: boolean, kind: EventKind = 'motion', key = 'a'): Step => ({
  t,
  kind,
  active,
  key,
  op: 'Initialized',
});
const pulse = (t: number, kind: EventKind = 'human', op: PropertyOperation | null = 'Changed'): Step => ({
  t,
  kind,
  active: true,
  key: 'line',
  op,
  momentary: true,
});
const tick = (t: number): Step => ({ t, tick: true });
const reset = (t: number): Step => ({ t, reset: true });
const start = (kind: EventKind, at: number): TrackerOutput => ({ type: 'start', kind, at });
const stop = (kind: EventKind, at: number): TrackerOutput => ({ type: 'stop', kind, at });

function run(tracker: EventTracker, steps: readonly Step[]): TrackerOutput[] {
  return steps.flatMap((s) => {
    if ('tick' in s) return tracker.tick(s.t);
    if ('reset' in s) return tracker.reset(s.t);
    const n: Notification = {
      topic: 'tns1:Test/Topic',
      operation: 'op' in s ? s.op : null,
      utcTime: null,
      source: {},
      data: {},
    };
    if ('unclassified' in s) return tracker.push(n, null, s.t);
    const c: Classification = {
      kind: s.kind,
      active: s.active,
      key: s.key,
      ...(s.momentary ? { momentary: true as const } : {}),
    };
    return tracker.push(n, c, s.t);
  });
}

describe('EventTracker sequences', () => {
  it.each<[string, Step[], TrackerOutput[]]>([
    ['Initialized true does not start', [init(0, true), tick(10_000)], []],
    [
      'Initialized true then Changed false: nothing was started, so nothing stops',
      [init(0, true), off(100), tick(10_000)],
      [],
    ],
    [
      'Initialized true then a Changed true: the camera asserts new activity',
      [init(0, true), on(100), off(200), tick(1700)],
      [start('motion', 100), stop('motion', 200)],
    ],
    [
      'Initialized false while an event is open closes it (re-subscribed without reset)',
      [on(0), init(100, false), tick(1600)],
      [start('motion', 0), stop('motion', 100)],
    ],
    [
      'start, then stop once the window has passed',
      [on(0), off(1000), tick(2499), tick(2500)],
      [start('motion', 0), stop('motion', 1000)],
    ],
    [
      'a missing operation counts as Changed',
      [on(0, 'motion', 'a', null), off(10, 'motion', 'a', null), tick(1510)],
      [start('motion', 0), stop('motion', 10)],
    ],
    [
      'true/false/true within the window: one start, no stop',
      [on(0), off(200), on(400), tick(10_000)],
      [start('motion', 0)],
    ],
    [
      'flapping, then quiet: one event ending at the last false',
      [on(0), off(200), on(400), off(600), on(800), off(1000), tick(2499), tick(2500)],
      [start('motion', 0), stop('motion', 1000)],
    ],
    [
      're-activation after the window: the stop comes first, then a new event',
      [on(0), off(100), on(1600)],
      [start('motion', 0), stop('motion', 100), start('motion', 1600)],
    ],
    [
      'duplicate true while active does nothing',
      [on(0), on(100), on(200), off(300), tick(1800)],
      [start('motion', 0), stop('motion', 300)],
    ],
    [
      'duplicate false does not push the stop back',
      [on(0), off(100), off(1000), tick(1600)],
      [start('motion', 0), stop('motion', 100)],
    ],
    ['false for a detector never seen active', [off(0), tick(5000)], []],
    [
      'two detectors of one kind overlap: one event, active while any is',
      [
        on(0, 'motion', 'a'),
        on(500, 'motion', 'b'),
        off(1000, 'motion', 'a'),
        tick(5000),
        off(6000, 'motion', 'b'),
        tick(7499),
        tick(7500),
      ],
      [start('motion', 0), stop('motion', 6000)],
    ],
    [
      'a second detector going active cancels a pending stop',
      [on(0, 'motion', 'a'), off(100, 'motion', 'a'), on(1000, 'motion', 'b'), tick(5000)],
      [start('motion', 0)],
    ],
    [
      'human and motion are independent',
      [on(0, 'motion'), on(100, 'human'), off(200, 'motion'), tick(1700), off(3000, 'human'), tick(4500)],
      [start('motion', 0), start('human', 100), stop('motion', 200), stop('human', 3000)],
    ],
    [
      'one detector key under two kinds (TP-Link smart event) is two detectors',
      [on(0, 'human', 'k'), on(10, 'vehicle', 'k'), off(20, 'human', 'k'), tick(5000)],
      [start('human', 0), start('vehicle', 10), stop('human', 20)],
    ],
    [
      'reset closes open events: an active one at the reset time, a pending one at its end',
      [on(0, 'motion'), on(10, 'human'), off(20, 'human'), reset(50), tick(10_000)],
      [start('motion', 0), start('human', 10), stop('motion', 50), stop('human', 20)],
    ],
    [
      'after reset, Initialized true does not start again',
      [on(0), reset(100), init(200, true), tick(10_000)],
      [start('motion', 0), stop('motion', 100)],
    ],
    [
      'after reset, old detectors are forgotten',
      [on(0, 'motion', 'a'), reset(100), on(200, 'motion', 'b'), off(300, 'motion', 'b'), tick(1800)],
      [start('motion', 0), stop('motion', 100), start('motion', 200), stop('motion', 300)],
    ],
    ['reset with nothing open emits nothing', [init(0, true), reset(100)], []],
    [
      'a momentary detection is an instant event',
      [pulse(0), tick(1499), tick(1500)],
      [start('human', 0), stop('human', 0)],
    ],
    [
      'repeated momentary detections extend one event',
      [pulse(0), pulse(1000), pulse(2000), tick(3499), tick(3500)],
      [start('human', 0), stop('human', 2000)],
    ],
    [
      'a momentary detection during a stateful one',
      [on(0, 'human', 'a'), pulse(100), off(200, 'human', 'a'), tick(1700)],
      [start('human', 0), stop('human', 200)],
    ],
    [
      'a stateful detection during a momentary one cancels its stop',
      [pulse(0), on(100, 'human', 'a'), tick(5000), off(6000, 'human', 'a'), tick(7500)],
      [start('human', 0), stop('human', 6000)],
    ],
    ['an Initialized momentary detection is ignored', [pulse(0, 'human', 'Initialized'), tick(5000)], []],
    [
      'unclassified notifications only move time on',
      [on(0), off(100), { t: 1600, unclassified: true }],
      [start('motion', 0), stop('motion', 100)],
    ],
  ])('%s', (_name, steps, expected) => {
    expect(run(new EventTracker({ debounceMs: DEBOUNCE }), steps)).toEqual(expected);
  });

  it('with no debounce, a stop is due at the next push or tick', () => {
    expect(run(new EventTracker({ debounceMs: 0 }), [on(0), off(5), tick(5)])).toEqual([
      start('motion', 0),
      stop('motion', 5),
    ]);
  });

  it('reset without a time stops an active event at the last time seen', () => {
    const tracker = new EventTracker({ debounceMs: DEBOUNCE });
    run(tracker, [on(0), tick(700)]);
    expect(tracker.reset()).toEqual([stop('motion', 700)]);
    expect(tracker.openKinds()).toEqual([]);
  });
});

describe('EventTracker bookkeeping', () => {
  it('nextDeadline tells the caller when to tick', () => {
    const tracker = new EventTracker({ debounceMs: DEBOUNCE });
    expect(tracker.nextDeadline()).toBeNull();
    run(tracker, [on(0, 'motion'), on(0, 'human')]);
    expect(tracker.nextDeadline()).toBeNull();
    run(tracker, [off(100, 'human'), off(300, 'motion')]);
    expect(tracker.nextDeadline()).toBe(1600);
    expect(tracker.openKinds()).toEqual(['motion', 'human']);
    expect(tracker.tick(1600)).toEqual([stop('human', 100)]);
    expect(tracker.nextDeadline()).toBe(1800);
    expect(tracker.tick(1800)).toEqual([stop('motion', 300)]);
    expect(tracker.nextDeadline()).toBeNull();
  });

  it('keeps at most maxDetectors keys, forgetting the least recently updated', () => {
    const tracker = new EventTracker({ debounceMs: DEBOUNCE });
    const out = run(tracker, [on(0, 'human', 'h')]);
    for (let i = 1; i <= 64; i++) out.push(...run(tracker, [on(i, 'motion', `m${i}`)]));
    expect(tracker.detectorCount).toBe(64);
    // The human detector was the oldest and is forgotten, so its kind counts as inactive from then.
    out.push(...run(tracker, [tick(64 + DEBOUNCE), off(5000, 'human', 'h'), tick(10_000)]));
    expect(out).toEqual([start('human', 0), start('motion', 1), stop('human', 64)]);
    expect(tracker.detectorCount).toBe(64);
    expect(tracker.openKinds()).toEqual(['motion']);
  });

  it('an update refreshes a key, so a busy detector is not the one forgotten', () => {
    const tracker = new EventTracker({ debounceMs: DEBOUNCE, maxDetectors: 3 });
    run(tracker, [
      on(0, 'motion', 'a'),
      on(1, 'motion', 'b'),
      on(2, 'motion', 'c'),
      on(3, 'motion', 'a'),
      on(4, 'human', 'd'),
    ]);
    expect(tracker.detectorCount).toBe(3);
    // "b" was forgotten, not "a": turning off a and c leaves motion inactive.
    expect(run(tracker, [off(10, 'motion', 'a'), off(11, 'motion', 'c'), tick(11 + DEBOUNCE)])).toEqual([
      stop('motion', 11),
    ]);
  });

  it('inactive detectors take no room', () => {
    const tracker = new EventTracker({ debounceMs: DEBOUNCE });
    for (let i = 0; i < 1000; i++) run(tracker, [on(i, 'motion', `k${i}`), off(i, 'motion', `k${i}`)]);
    expect(tracker.detectorCount).toBe(0);
  });

  it.each([
    [{ debounceMs: -1 }],
    [{ debounceMs: Number.NaN }],
    [{ debounceMs: Number.POSITIVE_INFINITY }],
    [{ debounceMs: 10, maxDetectors: 0 }],
    [{ debounceMs: 10, maxDetectors: 1.5 }],
  ])('refuses options %j', (opts) => {
    expect(() => new EventTracker(opts)).toThrow(RangeError);
  });
});

describe('EventTracker random sequences', () => {
  const rng = makeRng();
  it(`per kind, starts and stops alternate, stops never precede their start, reset closes all (seed ${rng.seed})`, () => {
    for (let round = 0; round < 200; round++) {
      const tracker = new EventTracker({ debounceMs: rng.int(3000), maxDetectors: 1 + rng.int(6) });
      const steps: Step[] = [];
      let t = 0;
      for (let i = 0; i < 60; i++) {
        t += rng.int(2000);
        const kind = rng.pick(['motion', 'human', 'vehicle'] as const);
        const key = rng.pick(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
        const op = rng.pick(['Initialized', 'Changed', 'Changed', 'Changed', 'Deleted', null] as const);
        const r = rng.int(12);
        if (r === 0) steps.push(tick(t));
        else if (r === 1) steps.push(pulse(t, kind, op));
        else steps.push({ t, kind, active: rng.int(2) === 0, key, op });
      }
      steps.push(reset(t + 1));
      const out = run(tracker, steps);
      const context = `seed ${rng.seed}, round ${round}: ${JSON.stringify(steps)}`;
      for (const kind of ['motion', 'human', 'vehicle'] as const) {
        const mine = out.filter((o) => o.kind === kind);
        mine.forEach((o, i) => {
          expect(o.type, context).toBe(i % 2 === 0 ? 'start' : 'stop');
          const prev = mine[i - 1];
          if (prev) expect(o.at, context).toBeGreaterThanOrEqual(prev.at);
        });
        expect(mine.length % 2, context).toBe(0);
      }
      expect(tracker.openKinds(), context).toEqual([]);
      expect(tracker.detectorCount, context).toBe(0);
    }
  });
});
