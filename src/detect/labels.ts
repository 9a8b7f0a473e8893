import type { LabelMap } from '../domain/object-classes.js';
import type { Category, Detection, RawDetection } from './types.js';

export function categoryOf(label: string, labels: LabelMap): Category | null {
  if (labels.human.includes(label)) return 'human';
  if (labels.vehicle.includes(label)) return 'vehicle';
  return null;
}

/** Keeps the detections of classes we care about with score >= minScore, tagged with their category. */
export function classify(raw: readonly RawDetection[], labels: LabelMap, minScore: number): Detection[] {
  const out: Detection[] = [];
  for (const d of raw) {
    const category = categoryOf(d.label, labels);
    if (category !== null && d.score >= minScore) out.push({ ...d, category });
  }
  return out;
}
