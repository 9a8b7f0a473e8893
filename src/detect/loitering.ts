import type { Polygon } from '../domain/polygon.js';
import { bottomCentre, pointInPolygon } from './geometry.js';
import { MEMORY_RULES, shareInside } from './object-memory.js';
import type { Box } from './types.js';

// Loitering: a zone with loitering_s makes one alert once a person has stayed in it that long. A
// zone is occupied from the first check that confirms a person standing in it (the bottom centre of
// the box) until checks that look there stop finding one; the count is per zone, not per person
// (one person pacing inside keeps it occupied, boxes and all). Checks come at motion starts, and a
// person standing still makes no motion, so a check that sees a person asks to look again: at the
// moment the zone's time is up, or soon when the person is not (yet) in an occupied zone. Pure: the
// caller keeps the occupancy (in RAM) and passes the time in.

export interface LoiteringZone {
  name: string;
  polygon: Polygon;
  seconds: number;
}

export interface Occupancy {
  zone: string;
  /** The first check that confirmed a person in it. */
  since: number;
  lastSeenAt: number;
  /** Checks in a row that looked at the zone and found nobody in it. */
  misses: number;
  /** Its one alert is made. */
  alerted: boolean;
}

export interface PeopleSeen {
  /** Every person in any frame of the check (labels, min_score; required zones not applied). */
  seen: readonly Box[];
  /** The people the check confirmed: only they start a zone's count and make its alert. */
  found: readonly Box[];
  /** The part of the frame the check looked at (0–1; null: all of it). */
  looked: Box | null;
}

export interface LoiteringUpdate {
  occupancy: Occupancy[];
  /** Zones whose alert this check makes. */
  due: string[];
  /** When to look again (epoch ms), or null: no reason to. */
  recheckAt: number | null;
}

export const LOITERING_RULES = {
  /** Cleared when this many checks in a row looked at the zone and found nobody (as MEMORY_RULES). */
  maxMisses: MEMORY_RULES.maxMisses,
  /** How soon to look again for a person not in an occupied zone: a quarter of the shortest loitering_s, within these. */
  minStepMs: 5000,
  maxStepMs: 30_000,
} as const;

export function standsIn(box: Box, polygon: Polygon): boolean {
  return pointInPolygon(bottomCentre(box), polygon);
}

/** The smallest box around a polygon. */
function boundsOf(polygon: Polygon): Box {
  const xs = polygon.map((p) => p[0]);
  const ys = polygon.map((p) => p[1]);
  const [x, y] = [Math.min(...xs), Math.min(...ys)];
  return { x, y, w: Math.max(...xs) - x, h: Math.max(...ys) - y };
}

/** How soon to look again for a person who may walk into a zone: a quarter of its time, 5–30 s. */
export function stepMs(zones: readonly LoiteringZone[]): number {
  const shortest = Math.min(...zones.map((z) => z.seconds)) * 1000;
  return Math.min(LOITERING_RULES.maxStepMs, Math.max(LOITERING_RULES.minStepMs, shortest / 4));
}

/**
 * The zones' occupancy after a check at `now`, the alerts it makes (a zone occupied for its
 * loitering_s whose person this check confirmed, once per occupancy) and when to look again.
 * Occupancy of zones no longer listed is dropped.
 */
export function updateLoitering(
  occupancy: readonly Occupancy[],
  zones: readonly LoiteringZone[],
  people: PeopleSeen,
  now: number,
): LoiteringUpdate {
  const next: Occupancy[] = [];
  const due: string[] = [];
  const times: number[] = [];
  for (const zone of zones) {
    const before = occupancy.find((o) => o.zone === zone.name) ?? null;
    const seen = people.seen.some((b) => standsIn(b, zone.polygon));
    const found = people.found.some((b) => standsIn(b, zone.polygon));
    let after: Occupancy | null = before;
    if (before !== null && (seen || found))
      after = { ...before, lastSeenAt: Math.max(before.lastSeenAt, now), misses: 0 };
    else if (before !== null && lookedAt(zone, people.looked))
      after = before.misses + 1 < LOITERING_RULES.maxMisses ? { ...before, misses: before.misses + 1 } : null;
    else if (before === null && found)
      after = { zone: zone.name, since: now, lastSeenAt: now, misses: 0, alerted: false };
    if (after === null) continue;
    const timeUp = after.since + zone.seconds * 1000;
    if (!after.alerted && found && now >= timeUp) {
      after = { ...after, alerted: true };
      due.push(zone.name);
    }
    next.push(after);
    if (!after.alerted) times.push(timeUp > now ? timeUp : now + stepMs(zones));
  }
  // Someone in view but in no occupied zone may be on the way to one.
  const occupied = zones.filter((z) => next.some((o) => o.zone === z.name));
  if (zones.length > 0 && people.seen.some((b) => !occupied.some((z) => standsIn(b, z.polygon))))
    times.push(now + stepMs(zones));
  return { occupancy: next, due, recheckAt: times.length === 0 ? null : Math.min(...times) };
}

/** Whether a check that looked at `looked` would have seen a person anywhere in the zone. */
function lookedAt(zone: LoiteringZone, looked: Box | null): boolean {
  return looked === null || shareInside(boundsOf(zone.polygon), looked) >= MEMORY_RULES.lookedShare;
}
