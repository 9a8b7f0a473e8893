// The object classes the model knows, by COCO's names: what config detection.labels may list and
// what a DetectedObject's label holds. They sit here, below config, which refuses an unknown name
// when the file is loaded; detect decodes and sorts detections by them (src/detect/labels.ts).

/**
 * The 80 COCO object classes in the order the CenterNet model numbers them (class id = index),
 * with COCO's official names ("motorcycle", not darknet's "motorbike").
 */
export const COCO_LABELS: readonly string[] = [
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'airplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'couch',
  'potted plant',
  'bed',
  'dining table',
  'toilet',
  'tv',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
];

/** Which model classes count as which of our categories (config detection.labels). */
export interface LabelMap {
  human: readonly string[];
  vehicle: readonly string[];
}

/** The first problem with a label map, as [key, message], or null: unknown classes, or one class in both. */
export function labelMapProblem(labels: LabelMap): [string, string] | null {
  for (const category of ['human', 'vehicle'] as const) {
    for (const [i, label] of labels[category].entries()) {
      if (!COCO_LABELS.includes(label))
        return [
          `${category}[${i}]`,
          `${JSON.stringify(label)} is not a class of the model (COCO names such as person, car, truck)`,
        ];
    }
  }
  const both = labels.human.find((l) => labels.vehicle.includes(l));
  return both === undefined ? null : ['vehicle', `${JSON.stringify(both)} is listed under both human and vehicle`];
}
