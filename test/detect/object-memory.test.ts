import { describe, expect, it } from 'vitest';
import {
  clipBox,
  findRemembered,
  inForce,
  MEMORY_RULES,
  overlapWith,
  shareInside,
  updateMemory,
  type RememberedObject,
  type Sighting,
} from '../../src/detect/object-memory.js';
import type { Box, Category } from '../../src/detect/types.js';

// The memory of what a camera's checks found: the same object is a box of its category overlapping
// the remembered one by IoU >= the threshold; misses, expiry and the bound.

const CAR: Box = { x: 0.2, y: 0.4, w: 0.3, h: 0.2 };
const shifted = (b: Box, dx: number, dy = 0): Box => ({ ...b, x: b.x + dx, y: b.y + dy });
const sighting = (category: Category, box: Box): Sighting => ({ category, box });
const remembered = (category: Category, box: Box, more: Partial<RememberedObject> = {}): RememberedObject => ({
  category,
  box,
  firstSeenAt: 1000,
  lastSeenAt: 1000,
  misses: 0,
  ...more,
});

describe('boxes cut to where a check looked', () => {
  it.each<[string, Box, Box, Box | null, number]>([
    ['inside', CAR, { x: 0, y: 0, w: 1, h: 1 }, CAR, 1],
    ['half out', { x: 0.5, y: 0, w: 0.2, h: 0.2 }, { x: 0, y: 0, w: 0.6, h: 1 }, { x: 0.5, y: 0, w: 0.1, h: 0.2 }, 0.5],
    ['apart', CAR, { x: 0.6, y: 0, w: 0.4, h: 1 }, null, 0],
    ['touching edges', { x: 0, y: 0, w: 0.5, h: 0.5 }, { x: 0.5, y: 0, w: 0.5, h: 0.5 }, null, 0],
  ])('%s', (_name, box, to, clipped, share) => {
    const got = clipBox(box, to);
    if (clipped === null) expect(got).toBeNull();
    else for (const k of ['x', 'y', 'w', 'h'] as const) expect(got![k]).toBeCloseTo(clipped[k], 9);
    expect(shareInside(box, to)).toBeCloseTo(share, 9);
  });

  it('a remembered box half outside the crop matches the half the crop saw', () => {
    const looked = { x: 0, y: 0, w: 0.35, h: 1 };
    const seenPart = clipBox(CAR, looked)!;
    expect(overlapWith(seenPart, CAR, null)).toBeLessThan(0.6);
    expect(overlapWith(seenPart, CAR, looked)).toBeCloseTo(1, 9);
  });
});

describe('findRemembered', () => {
  const objects = [remembered('vehicle', CAR), remembered('human', { x: 0.7, y: 0.2, w: 0.1, h: 0.4 })];
  it.each<[string, Sighting, number, RememberedObject | null]>([
    ['the same place', sighting('vehicle', CAR), 0.6, objects[0]!],
    ['a little jitter', sighting('vehicle', shifted(CAR, 0.02, 0.01)), 0.6, objects[0]!],
    ['moved by a quarter of the frame', sighting('vehicle', shifted(CAR, 0.25)), 0.6, null],
    ['another category in the same place', sighting('human', CAR), 0.6, null],
    ['a strict threshold', sighting('vehicle', shifted(CAR, 0.05)), 0.9, null],
  ])('%s', (_name, s, minIou, expected) => {
    expect(findRemembered(objects, s, minIou, null)).toBe(expected);
  });

  it('picks the best overlap of several', () => {
    const near = remembered('vehicle', shifted(CAR, 0.04));
    const exact = remembered('vehicle', CAR);
    expect(findRemembered([near, exact], sighting('vehicle', CAR), 0.6, null)).toBe(exact);
  });
});

describe('inForce', () => {
  it('forgets people unseen for personUnseenMs, never a vehicle for time alone', () => {
    const person = remembered('human', CAR, { lastSeenAt: 0 });
    const car = remembered('vehicle', CAR, { lastSeenAt: 0 });
    expect(inForce([person, car], MEMORY_RULES.personUnseenMs)).toEqual([person, car]);
    expect(inForce([person, car], MEMORY_RULES.personUnseenMs + 1)).toEqual([car]);
    expect(inForce([person, car], 1e13)).toEqual([car]);
  });
});

describe('updateMemory', () => {
  const car = remembered('vehicle', CAR);
  it.each<
    [string, RememberedObject[], { seen: Sighting[]; found: Sighting[]; looked: Box | null }, RememberedObject[]]
  >([
    [
      'a confirmed object nothing matches is remembered where it is',
      [],
      { seen: [], found: [sighting('vehicle', CAR)], looked: null },
      [remembered('vehicle', CAR, { firstSeenAt: 5000, lastSeenAt: 5000 })],
    ],
    [
      'seen again in any frame, weakly: refreshed, its box kept',
      [{ ...car, misses: 1 }],
      { seen: [sighting('vehicle', shifted(CAR, 0.02))], found: [], looked: null },
      [{ ...car, lastSeenAt: 5000, misses: 0 }],
    ],
    ['looked for and not found: one miss', [car], { seen: [], found: [], looked: null }, [{ ...car, misses: 1 }]],
    ['a second miss in a row: forgotten', [{ ...car, misses: 1 }], { seen: [], found: [], looked: null }, []],
    [
      'outside where the check looked: left as it was',
      [car],
      { seen: [], found: [], looked: { x: 0.6, y: 0, w: 0.4, h: 1 } },
      [car],
    ],
    [
      'mostly inside where it looked: a miss',
      [car],
      { seen: [], found: [], looked: { x: 0.21, y: 0, w: 0.79, h: 1 } },
      [{ ...car, misses: 1 }],
    ],
    [
      'moved: the new place remembered, the old one missed',
      [car],
      { seen: [], found: [sighting('vehicle', shifted(CAR, 0.25))], looked: null },
      [{ ...car, misses: 1 }, remembered('vehicle', shifted(CAR, 0.25), { firstSeenAt: 5000, lastSeenAt: 5000 })],
    ],
    ['a weak box seen once is not remembered', [], { seen: [sighting('human', CAR)], found: [], looked: null }, []],
    [
      'two confirmed boxes of one object are remembered once',
      [],
      { seen: [], found: [sighting('vehicle', CAR), sighting('vehicle', shifted(CAR, 0.01))], looked: null },
      [remembered('vehicle', CAR, { firstSeenAt: 5000, lastSeenAt: 5000 })],
    ],
  ])('%s', (_name, before, check, after) => {
    expect(updateMemory(before, check, 0.6, 5000)).toEqual(after);
  });

  it(`keeps at most ${MEMORY_RULES.maxObjects}, the most recently seen`, () => {
    const many = Array.from({ length: MEMORY_RULES.maxObjects }, (_, i) =>
      remembered('vehicle', { x: (i % 8) / 8, y: Math.floor(i / 8) / 8, w: 0.1, h: 0.1 }, { lastSeenAt: i }),
    );
    const next = updateMemory(
      many,
      {
        seen: [],
        found: [sighting('human', { x: 0.05, y: 0.9, w: 0.05, h: 0.09 })],
        looked: { x: 0, y: 0.85, w: 1, h: 0.15 },
      },
      0.6,
      5000,
    );
    expect(next).toHaveLength(MEMORY_RULES.maxObjects);
    expect(next).not.toContain(many[0]);
    expect(next.at(-1)).toMatchObject({ category: 'human', firstSeenAt: 5000 });
  });
});
