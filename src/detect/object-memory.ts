import { area, iou } from './boxes.js';
import type { Box, Category } from './types.js';

// What a camera's checks have found, remembered so that an object found again in the same place
// (a parked car) is known not to have moved. Checks come only at motion starts, seconds or hours
// apart, so nothing is tracked frame by frame: an object is the same one when a box of its category
// overlaps the remembered box by IoU >= detection.stationary_iou. Pure: the caller keeps the list
// (src/detect/scene-memory.ts, in RAM and in the store) and passes the time in.

/** One object a check confirmed, as remembered per camera. */
export interface RememberedObject {
  category: Category;
  /** Where it was first found (0–1 of the frame); never moved along, so slow drifts add up to a move. */
  box: Box;
  firstSeenAt: number;
  lastSeenAt: number;
  /** Checks in a row that looked where it is and did not find it. */
  misses: number;
}

/** A box of one category found by a check. */
export interface Sighting {
  category: Category;
  box: Box;
}

export const MEMORY_RULES = {
  /**
   * Forgotten when this many checks in a row looked where it is and did not find it: a car hidden
   * once by a passing truck keeps its place, one gone for two checks is gone.
   */
  maxMisses: 2,
  /**
   * A person not found by any check for this long is forgotten: people do not stand still for
   * hours, and a stale one must not hide the next visitor standing in the same spot. Vehicles
   * stay until checks miss them (a car may be parked for days without any motion near it).
   */
  personUnseenMs: 600_000,
  /** Most objects kept per camera (the most recently seen). */
  maxObjects: 32,
  /** Share of an object's box inside the area a check looked at for its absence there to count. */
  lookedShare: 0.8,
} as const;

/** The part of `b` inside `to`, or null when they do not overlap. */
export function clipBox(b: Box, to: Box): Box | null {
  const x1 = Math.max(b.x, to.x);
  const y1 = Math.max(b.y, to.y);
  const x2 = Math.min(b.x + b.w, to.x + to.w);
  const y2 = Math.min(b.y + b.h, to.y + to.h);
  if (!(x2 > x1 && y2 > y1)) return null;
  return { x: x1, y: y1, w: x2 - x1, h: y2 - y1 };
}

/** How much of `b` lies inside `to` (0–1); a box without area counts as outside. */
export function shareInside(b: Box, to: Box): number {
  const clipped = clipBox(b, to);
  const whole = area(b);
  return clipped && whole > 0 ? area(clipped) / whole : 0;
}

/**
 * IoU of a found box with a remembered one, the remembered one first cut to where the check looked
 * (`looked`, null: the whole frame): a crop cuts an object at its edge, and the model boxes only
 * the part it sees.
 */
export function overlapWith(found: Box, remembered: Box, looked: Box | null): number {
  const r = looked === null ? remembered : clipBox(remembered, looked);
  return r === null ? 0 : iou(found, r);
}

/** The remembered object of the sighting's category it overlaps most, at least minIou; null: none (new, or moved). */
export function findRemembered(
  objects: readonly RememberedObject[],
  sighting: Sighting,
  minIou: number,
  looked: Box | null,
): RememberedObject | null {
  let best: RememberedObject | null = null;
  let bestIou = minIou;
  for (const o of objects) {
    if (o.category !== sighting.category) continue;
    const value = overlapWith(sighting.box, o.box, looked);
    if (value >= bestIou) [best, bestIou] = [o, value];
  }
  return best;
}

/** The remembered objects still in force at `now`: people unseen for personUnseenMs are forgotten. */
export function inForce(objects: readonly RememberedObject[], now: number): RememberedObject[] {
  return objects.filter((o) => o.category !== 'human' || now - o.lastSeenAt <= MEMORY_RULES.personUnseenMs);
}

export interface CheckSightings {
  /** Every box the check kept, in any of its frames: what shows a remembered object is still there. */
  seen: readonly Sighting[];
  /** The objects it confirmed: the only ones remembered when new (a box seen once, weakly, is not). */
  found: readonly Sighting[];
  /** The part of the frame it looked at (0–1; null: all of it). */
  looked: Box | null;
}

/**
 * The memory after a check: an object seen again (in any frame) is refreshed; one the check looked
 * for and did not find counts a miss, and is forgotten at maxMisses; one outside where it looked is
 * left as it was; a confirmed object matching none is remembered where it is now. Call it with the
 * objects inForce() at `now`.
 */
export function updateMemory(
  objects: readonly RememberedObject[],
  check: CheckSightings,
  minIou: number,
  now: number,
): RememberedObject[] {
  const all = [...check.seen, ...check.found];
  const kept: RememberedObject[] = [];
  for (const o of objects) {
    const again = all.some((s) => s.category === o.category && overlapWith(s.box, o.box, check.looked) >= minIou);
    if (again) kept.push({ ...o, lastSeenAt: Math.max(o.lastSeenAt, now), misses: 0 });
    else if (check.looked !== null && shareInside(o.box, check.looked) < MEMORY_RULES.lookedShare) kept.push(o);
    else if (o.misses + 1 < MEMORY_RULES.maxMisses) kept.push({ ...o, misses: o.misses + 1 });
  }
  const added: RememberedObject[] = [];
  for (const s of check.found) {
    if (findRemembered([...objects, ...added], s, minIou, check.looked) !== null) continue;
    added.push({ category: s.category, box: { ...s.box }, firstSeenAt: now, lastSeenAt: now, misses: 0 });
  }
  const next = [...kept, ...added];
  if (next.length <= MEMORY_RULES.maxObjects) return next;
  const newest = [...next].sort((a, b) => b.lastSeenAt - a.lastSeenAt).slice(0, MEMORY_RULES.maxObjects);
  return next.filter((o) => newest.includes(o));
}
