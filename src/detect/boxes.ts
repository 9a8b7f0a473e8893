import type { Box, RawDetection } from './types.js';

export function area(b: Box): number {
  return Math.max(0, b.w) * Math.max(0, b.h);
}

/** Intersection over union of two boxes (0 when either is empty). */
export function iou(a: Box, b: Box): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (area(a) + area(b) - inter);
}

/** How much of the smaller box lies inside the other (1: wholly inside). */
export function containment(a: Box, b: Box): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / Math.min(area(a), area(b));
}

/**
 * Keeps the best of overlapping detections of one group (same key): the model often gives one
 * vehicle as both "car" and "truck", and overlapping regions find one object twice, once whole and
 * once cut at a region's edge (a part mostly inside the whole, which IoU alone lets through).
 */
export function suppressOverlaps<T extends RawDetection>(
  detections: readonly T[],
  groupOf: (d: T) => string,
  maxIou = 0.5,
  maxContainment = 0.8,
): T[] {
  const sorted = [...detections].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const d of sorted) {
    const duplicate = kept.some(
      (k) => groupOf(k) === groupOf(d) && (iou(k.box, d.box) > maxIou || containment(k.box, d.box) > maxContainment),
    );
    if (!duplicate) kept.push(d);
  }
  return kept;
}

/** Clamps a box to the unit square; null when nothing of it is left. */
export function clampBox(b: Box): Box | null {
  const x1 = Math.max(0, Math.min(1, b.x));
  const y1 = Math.max(0, Math.min(1, b.y));
  const x2 = Math.max(0, Math.min(1, b.x + b.w));
  const y2 = Math.max(0, Math.min(1, b.y + b.h));
  if (!(x2 > x1 && y2 > y1)) return null;
  return { x: x1, y: y1, w: x2 - x1, h: y2 - y1 };
}
