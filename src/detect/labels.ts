import type { Category, Detection, RawDetection } from './types.js';

/**
 * The 80 COCO object classes in the order the CenterNet model numbers them (class id = index),
 * with COCO's official names ("motorcycle", not darknet's "motorbike").
 */
export const COCO_LABELS: readonly string[] = [
  'person', 'bicycle', 'car', 'motorcycle', 'airplane', 'bus', 'train', 'truck', 'boat', 'traffic light',
  'fire hydrant', 'stop sign', 'parking meter', 'bench', 'bird', 'cat', 'dog', 'horse', 'sheep', 'cow',
  'elephant', 'bear', 'zebra', 'giraffe', 'backpack', 'umbrella', 'handbag', 'tie', 'suitcase', 'frisbee',
  'skis', 'snowboard', 'sports ball', 'kite', 'baseball bat', 'baseball glove', 'skateboard', 'surfboard', 'tennis racket', 'bottle',
  'wine glass', 'cup', 'fork', 'knife', 'spoon', 'bowl', 'banana', 'apple', 'sandwich', 'orange',
  'broccoli', 'carrot', 'hot dog', 'pizza', 'donut', 'cake', 'chair', 'couch', 'potted plant', 'bed',
  'dining table', 'toilet', 'tv', 'laptop', 'mouse', 'remote', 'keyboard', 'cell phone', 'microwave', 'oven',
  'toaster', 'sink', 'refrigerator', 'book', 'clock', 'vase', 'scissors', 'teddy bear', 'hair drier', 'toothbrush',
];

/** Which model classes count as which of our categories (config detection.labels). */
export interface LabelMap {
  human: readonly string[];
  vehicle: readonly string[];
}

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

/** The first problem with a label map, as [key, message], or null: unknown classes, or one class in both. */
export function labelMapProblem(labels: LabelMap): [string, string] | null {
  for (const category of ['human', 'vehicle'] as const) {
    for (const [i, label] of labels[category].entries()) {
      if (!COCO_LABELS.includes(label)) return [`${category}[${i}]`, `${JSON.stringify(label)} is not a class of the model (COCO names such as person, car, truck)`];
    }
  }
  const both = labels.human.find((l) => labels.vehicle.includes(l));
  return both === undefined ? null : ['vehicle', `${JSON.stringify(both)} is listed under both human and vehicle`];
}
