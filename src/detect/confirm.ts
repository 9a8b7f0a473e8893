import type { LabelMap } from '../domain/object-classes.js';
import type { Polygon } from '../domain/polygon.js';
import { suppressOverlaps } from './boxes.js';
import { inRequiredZones } from './geometry.js';
import { classify } from './labels.js';
import type { Category, Detection, RawDetection } from './types.js';

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** A category's best score in one frame (0 without one). */
export const bestScore = (category: Category, frame: readonly Detection[]): number =>
  Math.max(0, ...frame.filter((d) => d.category === category).map((d) => d.score));

export interface Verdict {
  /** The most specific category confirmed (human before vehicle), or null: plain motion. */
  type: Category | null;
  /** Each category's median over the frames of its best score per frame (0 in a frame without one). */
  medians: Record<Category, number>;
  /** Index of the frame holding the best detection of `type` (the thumbnail), or null. */
  bestFrame: number | null;
  /** The confirmed categories' detections in that frame. */
  detections: Detection[];
}

/**
 * The confirmation rule over the few frames of one check: a category is confirmed when the median,
 * over all frames looked at, of its best score in each frame is >= threshold, so one lucky frame
 * (a shadow scored as a person once) does not make an alert while a person seen in most frames does.
 * Per category rather than per tracked object: 3 frames over 1.5 s are too few to track.
 */
export function confirm(frames: readonly (readonly Detection[])[], threshold: number): Verdict {
  const best = bestScore;
  const medians = {
    human: median(frames.map((f) => best('human', f))),
    vehicle: median(frames.map((f) => best('vehicle', f))),
  };
  const confirmed = (['human', 'vehicle'] as const).filter((c) => frames.length > 0 && medians[c] >= threshold);
  const type = confirmed[0] ?? null;
  if (type === null) return { type, medians, bestFrame: null, detections: [] };
  let bestFrame = 0;
  frames.forEach((f, i) => {
    if (best(type, f) > best(type, frames[bestFrame]!)) bestFrame = i;
  });
  const detections = frames[bestFrame]!.filter((d) => confirmed.includes(d.category)).sort((a, b) => b.score - a.score);
  return { type, medians, bestFrame, detections };
}

/**
 * The verdict the rule gives over `total` frames, known from the first few already: null while a
 * frame still to come could change it. A frame not seen yet may score anything from 0 to 1, so a
 * category is settled once its median is on the same side of the threshold with the missing frames
 * at 0 and at 1 (with 3 frames: 2 that agree). The type is then exactly the one all `total` frames
 * would give; the thumbnail and its detections come from the frames seen. With every frame seen (or
 * the stream ended early: total = frames seen) it is confirm()'s verdict.
 */
export function confirmSoFar(
  frames: readonly (readonly Detection[])[],
  total: number,
  threshold: number,
): Verdict | null {
  const missing = Math.max(0, total - frames.length);
  if (missing > 0) {
    for (const category of ['human', 'vehicle'] as const) {
      const seen = frames.map((f) => bestScore(category, f));
      const low = median([...seen, ...new Array<number>(missing).fill(0)]);
      const high = median([...seen, ...new Array<number>(missing).fill(1)]);
      if (low < threshold && high >= threshold) return null;
    }
  }
  return confirm(frames, threshold);
}

export interface CheckRules {
  labels: LabelMap;
  minScore: number;
  threshold: number;
  zones: Readonly<Record<string, Polygon>>;
  requiredZones: readonly string[];
}

/** One frame's raw detections as the rule counts them: labels, min_score, required zones, duplicates merged. */
export function keptOf(raw: readonly RawDetection[], rules: CheckRules): Detection[] {
  return suppressOverlaps(
    classify(raw, rules.labels, rules.minScore).filter((d) => inRequiredZones(d.box, rules.zones, rules.requiredZones)),
    (d) => d.category,
  );
}

/**
 * The frames that may still turn out to hold a category's best detection (the one the thumbnail
 * shows: the first frame with the highest score, as `observe` picks it), given the frames seen so
 * far: each category's first best, when it has one. A frame not among them never will be, whatever
 * comes later, so a check need not keep it.
 */
export function bestFramesSoFar(kept: readonly (readonly Detection[])[]): Set<number> {
  const best = new Set<number>();
  for (const category of ['human', 'vehicle'] as const) {
    let at = -1;
    let score = 0;
    kept.forEach((frame, i) => {
      const s = bestScore(category, frame);
      if (s > score) [at, score] = [i, s];
    });
    if (at >= 0) best.add(at);
  }
  return best;
}

/** From the model's raw detections per frame to the verdict: labels, min_score, required zones, confirmation. */
export function judgeCheck(frames: readonly (readonly RawDetection[])[], rules: CheckRules): Verdict {
  return confirm(
    frames.map((raw) => keptOf(raw, rules)),
    rules.threshold,
  );
}

/**
 * judgeCheck() for the first frames of `total`: null while the frames to come could change the verdict (confirmSoFar).
 */
export function judgeSoFar(
  frames: readonly (readonly RawDetection[])[],
  total: number,
  rules: CheckRules,
): Verdict | null {
  return confirmSoFar(
    frames.map((raw) => keptOf(raw, rules)),
    total,
    rules.threshold,
  );
}
