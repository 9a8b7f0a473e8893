import { COCO_LABELS } from '../domain/object-classes.js';
import { clampBox } from './boxes.js';
import type { RawDetection } from './types.js';

/** Values per row of CenterNet's "detections" output: x1, y1, x2, y2 (input pixels), score, class id. */
export const CENTERNET_ROW = 6;

/**
 * Turns the model's [N, 6] detections output into detections in 0–1 coordinates of its input.
 * Rows below minScore, with a class id that is not a COCO class, non-finite values or an empty box
 * after clamping are skipped (the model pads its 100 rows with low-score noise).
 */
export function decodeCenterNet(rows: ArrayLike<number>, inputSize: number, minScore: number): RawDetection[] {
  const out: RawDetection[] = [];
  for (let i = 0; i + CENTERNET_ROW <= rows.length; i += CENTERNET_ROW) {
    const [x1, y1, x2, y2, score, classId] = [
      rows[i]!,
      rows[i + 1]!,
      rows[i + 2]!,
      rows[i + 3]!,
      rows[i + 4]!,
      rows[i + 5]!,
    ];
    if (![x1, y1, x2, y2, score].every(Number.isFinite) || !(score >= minScore)) continue;
    const label = Number.isInteger(classId) ? COCO_LABELS[classId] : undefined;
    if (label === undefined) continue;
    const box = clampBox({ x: x1 / inputSize, y: y1 / inputSize, w: (x2 - x1) / inputSize, h: (y2 - y1) / inputSize });
    if (box) out.push({ label, score: Math.min(1, score), box });
  }
  return out;
}
