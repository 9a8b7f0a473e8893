import { describe, expect, it } from 'vitest';
import type { CheckRules } from '../../src/detect/confirm.js';
import { iou } from '../../src/detect/boxes.js';
import { MEMORY_RULES } from '../../src/detect/object-memory.js';
import {
  EMPTY_SCENE,
  judgeScene,
  observe,
  type Observation,
  type SceneMemory,
  type SceneRules,
} from '../../src/detect/stationary.js';
import type { Box, Category, Detection, RawDetection } from '../../src/detect/types.js';
import { makeRng } from '../support/fuzz.js';

// Which objects of a check alert: new or moved ones do, stationary ones do not (except in a zone
// with alert_on_stationary), a person in a loitering zone only once they have stayed its time; a
// look again (recheck) alerts only for loitering. Then a camera's checks in a row, and a fuzz test.

const CAR: Box = { x: 0.2, y: 0.45, w: 0.3, h: 0.2 };
const PERSON: Box = { x: 0.7, y: 0.3, w: 0.08, h: 0.5 };
/** The bottom centre of PERSON, (0.74, 0.8), is inside; CAR's, (0.35, 0.65), is not. */
const DOOR: Box = { x: 0.6, y: 0.5, w: 0.3, h: 0.5 };
const polygonOf = (b: Box) =>
  [
    [b.x, b.y],
    [b.x + b.w, b.y],
    [b.x + b.w, b.y + b.h],
    [b.x, b.y + b.h],
  ] as const;
const DRIVE: Box = { x: 0.1, y: 0.4, w: 0.5, h: 0.4 };

const det = (category: Category, box: Box, score = 0.6): Detection => ({
  label: category === 'human' ? 'person' : 'car',
  category,
  score,
  box,
});
const shifted = (b: Box, dx: number): Box => ({ ...b, x: b.x + dx });

function rules(more: Partial<SceneRules> = {}): SceneRules {
  return {
    stationaryIou: 0.6,
    zones: { door: polygonOf(DOOR), drive: polygonOf(DRIVE) },
    stationaryZones: [],
    loiteringZones: {},
    ...more,
  };
}

/** A check that confirmed `found` (and saw them in every frame). */
const sawing = (...found: Detection[]): Observation => ({
  found,
  bestFrame: { human: 0, vehicle: 0 },
  frames: [found],
  people: found.filter((d) => d.category === 'human').map((d) => d.box),
  looked: null,
});

/** What a car seen at `at`, once before, leaves in memory. */
const remembering = (...found: Detection[]): SceneMemory =>
  judgeScene(EMPTY_SCENE, sawing(...found), rules(), 0).memory;

describe('judgeScene: one check', () => {
  it.each<[string, SceneMemory, Observation, Partial<SceneRules>, Category | null, boolean[]]>([
    ['nothing remembered: a car alerts', EMPTY_SCENE, sawing(det('vehicle', CAR)), {}, 'vehicle', [false]],
    [
      'the car where it was: stationary, no alert',
      remembering(det('vehicle', CAR)),
      sawing(det('vehicle', CAR)),
      {},
      null,
      [true],
    ],
    [
      'moved by a quarter of the frame: alerts',
      remembering(det('vehicle', CAR)),
      sawing(det('vehicle', shifted(CAR, 0.25))),
      {},
      'vehicle',
      [false],
    ],
    [
      'a person where a car was: alerts (per category)',
      remembering(det('vehicle', CAR)),
      sawing(det('human', CAR)),
      {},
      'human',
      [false],
    ],
    [
      'a parked car and a person walking up: the person alerts',
      remembering(det('vehicle', CAR)),
      sawing(det('vehicle', CAR), det('human', PERSON)),
      {},
      'human',
      [false, true],
    ],
    [
      'a stationary person in an alert_on_stationary zone alerts',
      remembering(det('human', PERSON)),
      sawing(det('human', PERSON)),
      { stationaryZones: ['door'] },
      'human',
      [true],
    ],
    [
      'stationary_iou null: nothing is stationary',
      remembering(det('vehicle', CAR)),
      sawing(det('vehicle', CAR)),
      { stationaryIou: null },
      'vehicle',
      [false],
    ],
    [
      'a person arriving in a loitering zone: no alert yet',
      EMPTY_SCENE,
      sawing(det('human', PERSON)),
      { loiteringZones: { door: 30 } },
      null,
      [false],
    ],
    [
      'a car in a loitering zone: loitering is for people, it alerts',
      EMPTY_SCENE,
      sawing(det('vehicle', CAR)),
      { loiteringZones: { drive: 30 } },
      'vehicle',
      [false],
    ],
  ])('%s', (_name, memory, seen, more, type, stationary) => {
    const judged = judgeScene(memory, seen, rules(more), 60_000);
    expect(judged.type).toBe(type);
    expect(judged.objects.map((o) => o.stationary).sort()).toEqual([...stationary].sort());
  });

  it('a person standing where another stood, but seen walking between the frames: not stationary, alerts', () => {
    const memory = remembering(det('human', PERSON));
    const walking: Observation = {
      ...sawing(det('human', PERSON)),
      frames: [[det('human', PERSON)], [det('human', shifted(PERSON, -0.05))]],
    };
    const judged = judgeScene(memory, walking, rules(), 60_000);
    expect([judged.type, judged.objects[0]?.stationary]).toEqual(['human', false]);
    // Jitter of a few per cent is not a move; another object far off is not this one.
    const still: Observation = {
      ...sawing(det('human', PERSON)),
      frames: [[det('human', PERSON)], [det('human', shifted(PERSON, 0.005)), det('human', shifted(PERSON, -0.5))]],
    };
    expect(judgeScene(memory, still, rules(), 60_000).type).toBeNull();
  });

  it('lists alerting objects first, then by score', () => {
    const judged = judgeScene(
      remembering(det('vehicle', CAR, 0.9)),
      sawing(det('vehicle', CAR, 0.9), det('human', PERSON, 0.5)),
      rules(),
      60_000,
    );
    expect(judged.objects.map((o) => [o.category, o.alerts])).toEqual([
      ['human', true],
      ['vehicle', false],
    ]);
  });

  it('a look again (recheck) makes no alert for a new object, and remembers it', () => {
    const judged = judgeScene(EMPTY_SCENE, sawing(det('vehicle', CAR)), rules(), 60_000, { recheck: true });
    expect(judged.type).toBeNull();
    expect(judged.memory.objects).toHaveLength(1);
    expect(judgeScene(judged.memory, sawing(det('vehicle', CAR)), rules(), 70_000).type).toBeNull();
  });
});

describe('judgeScene: a camera over time', () => {
  it('a parked car: one alert, then none while it stays; hidden once it keeps its place; gone twice it alerts again', () => {
    const r = rules();
    let memory: SceneMemory = EMPTY_SCENE;
    const check = (seen: Observation, at: number) => {
      const judged = judgeScene(memory, seen, r, at);
      memory = judged.memory;
      return judged.type;
    };
    expect(check(sawing(det('vehicle', CAR)), 1000)).toBe('vehicle');
    expect(check(sawing(det('vehicle', shifted(CAR, 0.01))), 2000)).toBeNull();
    expect(check(sawing(), 3000)).toBeNull(); // a truck passed in front: a miss
    expect(check(sawing(det('vehicle', CAR)), 4000)).toBeNull();
    expect(check(sawing(), 5000)).toBeNull();
    expect(check(sawing(), 6000)).toBeNull(); // two misses in a row: forgotten
    expect(memory.objects).toEqual([]);
    expect(check(sawing(det('vehicle', CAR)), 7000)).toBe('vehicle');
  });

  it('a person remembered and unseen for personUnseenMs alerts again in the same spot; a car never for time alone', () => {
    const memory = remembering(det('human', PERSON), det('vehicle', CAR));
    const later = MEMORY_RULES.personUnseenMs + 1;
    const judged = judgeScene(memory, sawing(det('human', PERSON), det('vehicle', CAR)), rules(), later);
    expect(judged.type).toBe('human');
    expect(judged.objects.find((o) => o.category === 'vehicle')?.stationary).toBe(true);
  });

  it('a person standing in a loitering zone: no alert, then one when the time is up, then none', () => {
    const r = rules({ loiteringZones: { door: 30 } });
    let memory: SceneMemory = EMPTY_SCENE;
    const at = (now: number) => {
      const judged = judgeScene(memory, sawing(det('human', PERSON)), r, now, { recheck: now > 1000 });
      memory = judged.memory;
      return [judged.type, judged.loitering, judged.recheckAt];
    };
    // A motion start: looked at again after a quarter of the zone's time (7.5 s), then when it is up.
    expect(at(1000)).toEqual([null, [], 8500]);
    expect(at(8500)).toEqual([null, [], 31_000]);
    expect(at(31_000)).toEqual(['human', ['door'], null]);
    expect(at(45_000)).toEqual([null, [], null]);
  });

  it('motion on a camera with a loitering zone is looked at once more, even with nobody seen', () => {
    const r = rules({ loiteringZones: { door: 30 } });
    expect(judgeScene(EMPTY_SCENE, sawing(), r, 1000).recheckAt).toBe(8500);
    expect(judgeScene(EMPTY_SCENE, sawing(), r, 8500, { recheck: true }).recheckAt).toBeNull();
    expect(judgeScene(EMPTY_SCENE, sawing(), rules(), 1000).recheckAt).toBeNull();
  });
});

describe('observe', () => {
  const checkRules: CheckRules = {
    labels: { human: ['person'], vehicle: ['car'] },
    minScore: 0.35,
    threshold: 0.45,
    zones: { door: polygonOf(DOOR) },
    requiredZones: ['door'],
  };
  const raw = (label: string, score: number, box: Box): RawDetection => ({ label, score, box });

  it('each confirmed category from its best frame, every kept box of every frame, people before required zones', () => {
    const frames = [
      [raw('person', 0.6, PERSON), raw('car', 0.4, shifted(CAR, 0.5))],
      [raw('person', 0.8, shifted(PERSON, -0.02)), raw('person', 0.5, CAR)],
    ];
    const seen = observe(frames, checkRules, { medians: { human: 0.7, vehicle: 0.2 } }, null);
    expect(seen.bestFrame).toEqual({ human: 1 });
    expect(seen.found.map((d) => [d.category, d.score])).toEqual([['human', 0.8]]);
    // The person at CAR stands outside the required door zone: not kept, but followed for loitering.
    expect(
      seen.frames
        .flat()
        .map((d) => d.score)
        .sort(),
    ).toEqual([0.4, 0.6, 0.8]);
    expect(seen.people).toHaveLength(3);
  });
});

describe('judgeScene fuzz', () => {
  it('never alerts for an object matching what the previous check remembered, outside alerting zones; memory stays bounded', () => {
    const rng = makeRng();
    const boxOf = (): Box => {
      const w = 0.05 + rng.next() * 0.4;
      const h = 0.05 + rng.next() * 0.4;
      return { x: rng.next() * (1 - w), y: rng.next() * (1 - h), w, h };
    };
    for (let run = 0; run < 200; run++) {
      let memory: SceneMemory = EMPTY_SCENE;
      const r = rules({ stationaryIou: 0.3 + rng.next() * 0.7, zones: {}, loiteringZones: {} });
      const pool = Array.from({ length: 1 + rng.int(6) }, () => det(rng.pick(['human', 'vehicle'] as const), boxOf()));
      let now = 0;
      for (let step = 0; step < 30; step++) {
        now += 1000 * (1 + rng.int(400));
        const found = pool
          .filter(() => rng.next() < 0.5)
          .map((d) => ({ ...d, box: rng.next() < 0.2 ? boxOf() : d.box }));
        const looked = rng.next() < 0.3 ? boxOf() : null;
        const seen: Observation = { found, bestFrame: {}, frames: [found], people: [], looked };
        const judged = judgeScene(memory, seen, r, now);
        const context = `seed ${rng.seed}, run ${run}, step ${step}`;
        for (const o of judged.objects) {
          // Stationary exactly when a remembered box of its category (in force) overlaps enough.
          const matches = memory.objects.some(
            (m) =>
              m.category === o.category &&
              (m.category !== 'human' || now - m.lastSeenAt <= MEMORY_RULES.personUnseenMs) &&
              iou(o.box, looked ? clip(m.box, looked) : m.box) >= r.stationaryIou!,
          );
          expect(o.stationary, context).toBe(matches);
          expect(o.alerts, context).toBe(!matches);
        }
        expect(judged.type === null, context).toBe(judged.objects.every((o) => !o.alerts));
        expect(judged.memory.objects.length, context).toBeLessThanOrEqual(MEMORY_RULES.maxObjects);
        // Whatever was confirmed is remembered after the check (as itself or what it matched).
        for (const o of found)
          expect(
            judged.memory.objects.some((m) => m.category === o.category && m.lastSeenAt === now),
            context,
          ).toBe(true);
        memory = judged.memory;
      }
    }
  });
});

function clip(b: Box, to: Box): Box {
  const x = Math.max(b.x, to.x);
  const y = Math.max(b.y, to.y);
  const w = Math.min(b.x + b.w, to.x + to.w) - x;
  const h = Math.min(b.y + b.h, to.y + to.h) - y;
  return w > 0 && h > 0 ? { x, y, w, h } : { x: 0, y: 0, w: 0, h: 0 };
}
