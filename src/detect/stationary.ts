import type { Polygon } from '../domain/polygon.js';
import { iou } from './boxes.js';
import { bestScore, keptOf, type CheckRules, type Verdict } from './confirm.js';
import { classify } from './labels.js';
import { standsIn, stepMs, updateLoitering, type LoiteringZone, type Occupancy } from './loitering.js';
import { findRemembered, inForce, updateMemory, type RememberedObject } from './object-memory.js';
import type { Box, Category, Detection, RawDetection } from './types.js';

// Which of the objects a check confirmed make an alert. An object found where one of its category
// was found before on that camera (object-memory.ts), and not seen to move between the frames of
// the check, is stationary and makes no alert of its own, unless it stands in a zone with
// alert_on_stationary. A person standing in a
// zone with loitering_s makes no alert until they have stayed that long (loitering.ts), and then
// one. What does not alert is still reported, marked, with the motion it came with. Pure.

export interface SceneRules {
  /** detection.stationary_iou; null: nothing is remembered, every object alerts. */
  stationaryIou: number | null;
  zones: Readonly<Record<string, Polygon>>;
  /** Zones where an object alerts even when stationary. */
  stationaryZones: readonly string[];
  /** Seconds a person must stay in each of these zones before its alert. */
  loiteringZones: Readonly<Record<string, number>>;
}

/** What a camera's checks remember: objects (kept across restarts) and the loitering zones' occupancy (RAM only). */
export interface SceneMemory {
  objects: readonly RememberedObject[];
  occupancy: readonly Occupancy[];
}

export const EMPTY_SCENE: SceneMemory = { objects: [], occupancy: [] };

/** What one check saw, as the scene rules read it. */
export interface Observation {
  /** Each confirmed category's detections in its best frame (labels, min_score, required zones, duplicates merged). */
  found: Detection[];
  /** Which frame each confirmed category's come from. */
  bestFrame: Partial<Record<Category, number>>;
  /** Every detection kept in each frame, by the same rules. */
  frames: Detection[][];
  /** Every person in any frame before required zones: someone who may be on the way to a loitering zone. */
  people: Box[];
  /** The part of the frame the check looked at (0–1; null: all of it). */
  looked: Box | null;
}

/** The check's frames (raw detections) and verdict, as the scene rules read them. */
export function observe(
  raw: readonly (readonly RawDetection[])[],
  rules: CheckRules,
  verdict: Pick<Verdict, 'medians'>,
  looked: Box | null,
): Observation {
  const kept = raw.map((frame) => keptOf(frame, rules));
  const found: Detection[] = [];
  const bestFrame: Partial<Record<Category, number>> = {};
  for (const category of ['human', 'vehicle'] as const) {
    if (kept.length === 0 || verdict.medians[category] < rules.threshold) continue;
    let best = 0;
    kept.forEach((frame, i) => {
      if (bestScore(category, frame) > bestScore(category, kept[best]!)) best = i;
    });
    bestFrame[category] = best;
    found.push(...kept[best]!.filter((d) => d.category === category));
  }
  const people = raw.flatMap((frame) =>
    classify(frame, rules.labels, rules.minScore)
      .filter((d) => d.category === 'human')
      .map((d) => d.box),
  );
  return { found, bestFrame, frames: kept, people, looked };
}

export interface JudgedObject extends Detection {
  stationary: boolean;
  /** It makes the check's alert (with the others that do). */
  alerts: boolean;
}

export interface SceneJudgement {
  memory: SceneMemory;
  /** The alert's category (human before vehicle), or null: none of the objects alerts. */
  type: Category | null;
  /** The objects the check confirmed, alerting ones first, then by score. */
  objects: JudgedObject[];
  /** Loitering zones whose one alert this check makes. */
  loitering: string[];
  /** When looking again could make a loitering alert (epoch ms), or null. */
  recheckAt: number | null;
}

/**
 * Judges one check's objects against what the camera's checks remember, and the memory after it.
 * A `recheck` (a look that no motion asked for, only to follow loitering) makes loitering alerts
 * only: an object it finds for the first time was most likely there all along, unlooked at.
 */
export function judgeScene(
  memory: SceneMemory,
  seen: Observation,
  rules: SceneRules,
  now: number,
  opts: { recheck: boolean } = { recheck: false },
): SceneJudgement {
  const minIou = rules.stationaryIou;
  const before = minIou === null ? [] : inForce(memory.objects, now);
  const loiteringZones = Object.entries(rules.loiteringZones).flatMap(([name, seconds]): LoiteringZone[] => {
    const polygon = rules.zones[name];
    return polygon ? [{ name, polygon, seconds }] : [];
  });
  const humans = seen.found.filter((d) => d.category === 'human').map((d) => d.box);
  const loitering = updateLoitering(
    memory.occupancy,
    loiteringZones,
    { seen: seen.people, found: humans, looked: seen.looked },
    now,
  );
  const alertOnStationary = rules.stationaryZones.flatMap((name): Polygon[] => {
    const polygon = rules.zones[name];
    return polygon ? [polygon] : [];
  });
  const objects = seen.found.map((d): JudgedObject => {
    const stationary =
      minIou !== null &&
      findRemembered(before, d, minIou, seen.looked) !== null &&
      !movedDuring(d, seen.frames, seen.bestFrame[d.category], minIou);
    const waiting = d.category === 'human' ? loiteringZones.filter((z) => standsIn(d.box, z.polygon)) : [];
    let alerts: boolean;
    if (waiting.length > 0) alerts = waiting.some((z) => loitering.due.includes(z.name));
    else if (opts.recheck) alerts = false;
    else alerts = !stationary || alertOnStationary.some((polygon) => standsIn(d.box, polygon));
    return { ...d, stationary, alerts };
  });
  objects.sort((a, b) => Number(b.alerts) - Number(a.alerts) || b.score - a.score);
  const type = objects.some((o) => o.alerts && o.category === 'human')
    ? 'human'
    : objects.some((o) => o.alerts)
      ? 'vehicle'
      : null;
  const objectsAfter =
    minIou === null
      ? []
      : updateMemory(before, { seen: seen.frames.flat(), found: seen.found, looked: seen.looked }, minIou, now);
  // Motion on a camera with a loitering zone: look once more when it has settled, in case someone
  // walked in unseen by these first frames and now stands still (no motion, no check).
  const afterMotion = !opts.recheck && loiteringZones.length > 0 ? now + stepMs(loiteringZones) : null;
  const times = [loitering.recheckAt, afterMotion].filter((t): t is number => t !== null);
  return {
    memory: { objects: objectsAfter, occupancy: loitering.occupancy },
    type,
    objects,
    loitering: loitering.due,
    recheckAt: times.length === 0 ? null : Math.min(...times),
  };
}

/**
 * Whether the check saw the object move: in another of its frames, the nearest box of its category
 * (centres at most the object's size apart, so plausibly the same object) overlaps it by less than
 * minIou. A person walking up to where another stood minutes ago is not the one who stood there.
 */
export function movedDuring(
  d: Detection,
  frames: readonly (readonly Detection[])[],
  ownFrame: number | undefined,
  minIou: number,
): boolean {
  const size = Math.max(d.box.w, d.box.h);
  const centre = (b: Box) => [b.x + b.w / 2, b.y + b.h / 2] as const;
  const [cx, cy] = centre(d.box);
  return frames.some((frame, i) => {
    if (i === ownFrame) return false;
    let nearest: Detection | null = null;
    let distance = Number.POSITIVE_INFINITY;
    for (const o of frame) {
      if (o.category !== d.category) continue;
      const [ox, oy] = centre(o.box);
      const apart = Math.hypot(ox - cx, oy - cy);
      if (apart < distance) [nearest, distance] = [o, apart];
    }
    return nearest !== null && distance <= size && iou(nearest.box, d.box) < minIou;
  });
}
