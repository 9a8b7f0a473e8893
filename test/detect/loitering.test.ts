import { describe, expect, it } from 'vitest';
import { stepMs, updateLoitering, type LoiteringZone, type Occupancy } from '../../src/detect/loitering.js';
import type { Box } from '../../src/detect/types.js';

// Loitering zones: occupied from the first check that confirms a person standing in one, one alert
// once the zone's seconds are up (confirmed again then), cleared after two checks in a row miss,
// and when to look again.

const DOOR: LoiteringZone = {
  name: 'door',
  polygon: [
    [0.4, 0.5],
    [0.6, 0.5],
    [0.6, 1],
    [0.4, 1],
  ],
  seconds: 20,
};
/** A person whose feet (the bottom centre of the box) are at the door, and one elsewhere. */
const AT_DOOR: Box = { x: 0.45, y: 0.4, w: 0.1, h: 0.5 };
const ON_PATH: Box = { x: 0.05, y: 0.3, w: 0.1, h: 0.5 };
const occupied = (more: Partial<Occupancy> = {}): Occupancy => ({
  zone: 'door',
  since: 1000,
  lastSeenAt: 1000,
  misses: 0,
  alerted: false,
  ...more,
});

describe('updateLoitering', () => {
  it.each<
    [string, Occupancy[], { seen: Box[]; found: Box[]; looked: Box | null }, number, ReturnType<typeof updateLoitering>]
  >([
    [
      'a person confirmed at the door: occupied from now, look again when the time is up',
      [],
      { seen: [AT_DOOR], found: [AT_DOOR], looked: null },
      1000,
      { occupancy: [occupied()], due: [], recheckAt: 21_000 },
    ],
    [
      'seen there but not confirmed: not yet occupied, look again soon',
      [],
      { seen: [AT_DOOR], found: [], looked: null },
      1000,
      { occupancy: [], due: [], recheckAt: 6000 },
    ],
    [
      'someone elsewhere: may walk to the door, look again soon',
      [],
      { seen: [ON_PATH], found: [ON_PATH], looked: null },
      1000,
      { occupancy: [], due: [], recheckAt: 6000 },
    ],
    [
      'nobody: nothing to follow',
      [],
      { seen: [], found: [], looked: null },
      1000,
      { occupancy: [], due: [], recheckAt: null },
    ],
    [
      'still there before the time is up: look again then',
      [occupied()],
      { seen: [AT_DOOR], found: [AT_DOOR], looked: null },
      15_000,
      { occupancy: [occupied({ lastSeenAt: 15_000 })], due: [], recheckAt: 21_000 },
    ],
    [
      'confirmed there when the time is up: the one alert',
      [occupied()],
      { seen: [AT_DOOR], found: [AT_DOOR], looked: null },
      21_000,
      { occupancy: [occupied({ lastSeenAt: 21_000, alerted: true })], due: ['door'], recheckAt: null },
    ],
    [
      'time up, seen but not confirmed: no alert yet, look again soon',
      [occupied()],
      { seen: [AT_DOOR], found: [], looked: null },
      21_000,
      { occupancy: [occupied({ lastSeenAt: 21_000 })], due: [], recheckAt: 26_000 },
    ],
    [
      'after its alert: no second one, nothing to follow',
      [occupied({ alerted: true })],
      { seen: [AT_DOOR], found: [AT_DOOR], looked: null },
      60_000,
      { occupancy: [occupied({ lastSeenAt: 60_000, alerted: true })], due: [], recheckAt: null },
    ],
    [
      'looked and nobody there once: kept (hidden by a passer-by)',
      [occupied()],
      { seen: [], found: [], looked: null },
      5000,
      { occupancy: [occupied({ misses: 1 })], due: [], recheckAt: 21_000 },
    ],
    [
      'twice in a row: cleared',
      [occupied({ misses: 1 })],
      { seen: [], found: [], looked: null },
      9000,
      { occupancy: [], due: [], recheckAt: null },
    ],
    [
      'a check that did not look at the door does not count',
      [occupied({ misses: 1 })],
      { seen: [], found: [], looked: { x: 0, y: 0, w: 0.3, h: 1 } },
      9000,
      { occupancy: [occupied({ misses: 1 })], due: [], recheckAt: 21_000 },
    ],
  ])('%s', (_name, before, people, now, expected) => {
    expect(updateLoitering(before, [DOOR], people, now)).toEqual(expected);
  });

  it('drops the occupancy of a zone no longer listed', () => {
    expect(updateLoitering([occupied()], [], { seen: [AT_DOOR], found: [AT_DOOR], looked: null }, 5000)).toEqual({
      occupancy: [],
      due: [],
      recheckAt: null,
    });
  });

  it.each([
    [[8], 5000],
    [[60], 15_000],
    [[3600, 60], 15_000],
    [[3600], 30_000],
  ])('looks again for someone on the way after a quarter of the shortest time, 5–30 s: %j → %d ms', (seconds, ms) => {
    expect(stepMs(seconds.map((s, i) => ({ ...DOOR, name: `z${i}`, seconds: s })))).toBe(ms);
  });
});
