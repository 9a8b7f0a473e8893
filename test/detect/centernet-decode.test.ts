import { describe, expect, it } from 'vitest';
import { iou, suppressOverlaps } from '../../src/detect/boxes.js';
import { decodeCenterNet } from '../../src/detect/centernet-decode.js';
import { categoryOf, classify } from '../../src/detect/labels.js';
import type { RawDetection } from '../../src/detect/types.js';

const LABELS = { human: ['person'], vehicle: ['car', 'truck', 'bus', 'motorcycle', 'bicycle'] };

describe('decodeCenterNet', () => {
  it('turns rows of x1 y1 x2 y2 score class (input pixels) into 0–1 boxes, skipping noise', () => {
    const rows = [
      [128, 64, 256, 512, 0.8, 0], // person
      [0, 0, 512, 256, 0.55, 2], // car
      [10, 10, 20, 20, 0.05, 0], // below the floor
      [-50, 400, 100, 600, 0.6, 7], // truck partly outside: clamped
      [10, 10, 20, 20, 0.9, 80], // no such class
      [10, 10, 20, 20, Number.NaN, 0], // NaN score
      [30, 30, 30, 60, 0.9, 0], // empty box
      [10, 10, 20, 20, 0.9, 1.5], // class not a whole number
    ].flat();
    expect(decodeCenterNet(rows, 512, 0.1)).toEqual([
      { label: 'person', score: 0.8, box: { x: 0.25, y: 0.125, w: 0.25, h: 0.875 } },
      { label: 'car', score: 0.55, box: { x: 0, y: 0, w: 1, h: 0.5 } },
      { label: 'truck', score: 0.6, box: { x: 0, y: 0.78125, w: 100 / 512, h: 0.21875 } },
    ]);
  });
  it('ignores a trailing partial row', () => {
    expect(decodeCenterNet([0, 0, 10, 10, 0.9, 0, 1, 2], 512, 0.1)).toHaveLength(1);
  });
});

describe('labels', () => {
  it.each([
    ['person', 'human'],
    ['truck', 'vehicle'],
    ['bicycle', 'vehicle'],
    ['dog', null],
    ['kite', null],
  ] as const)('%s → %s', (label, category) => {
    expect(categoryOf(label, LABELS)).toBe(category);
  });
  it('classify keeps our classes at or above min_score', () => {
    const raw: RawDetection[] = [
      { label: 'person', score: 0.5, box: { x: 0, y: 0, w: 0.1, h: 0.1 } },
      { label: 'person', score: 0.49, box: { x: 0, y: 0, w: 0.1, h: 0.1 } },
      { label: 'dog', score: 0.9, box: { x: 0, y: 0, w: 0.1, h: 0.1 } },
      { label: 'car', score: 0.7, box: { x: 0, y: 0, w: 0.1, h: 0.1 } },
    ];
    expect(classify(raw, LABELS, 0.5).map((d) => [d.label, d.category])).toEqual([
      ['person', 'human'],
      ['car', 'vehicle'],
    ]);
  });
});

describe('boxes', () => {
  it.each([
    [{ x: 0, y: 0, w: 0.5, h: 0.5 }, { x: 0, y: 0, w: 0.5, h: 0.5 }, 1],
    [{ x: 0, y: 0, w: 0.5, h: 0.5 }, { x: 0.5, y: 0, w: 0.5, h: 0.5 }, 0],
    [{ x: 0, y: 0, w: 0.5, h: 0.5 }, { x: 0.25, y: 0, w: 0.5, h: 0.5 }, 1 / 3],
  ])('iou(%j, %j) = %d', (a, b, expected) => {
    expect(iou(a, b)).toBeCloseTo(expected, 9);
  });
  it('suppressOverlaps keeps the best of each overlapping group, and different groups side by side', () => {
    const box = { x: 0.1, y: 0.1, w: 0.3, h: 0.3 };
    const shifted = { x: 0.12, y: 0.1, w: 0.3, h: 0.3 };
    const far = { x: 0.6, y: 0.6, w: 0.3, h: 0.3 };
    const kept = suppressOverlaps(
      [
        { label: 'truck', score: 0.3, box },
        { label: 'car', score: 0.6, box: shifted },
        { label: 'person', score: 0.5, box },
        { label: 'car', score: 0.4, box: far },
      ],
      (d) => (d.label === 'person' ? 'human' : 'vehicle'),
    );
    expect(kept.map((d) => [d.label, d.score])).toEqual([
      ['car', 0.6],
      ['person', 0.5],
      ['car', 0.4],
    ]);
  });
  it('suppressOverlaps drops a part cut at a region edge that lies inside the whole', () => {
    const whole = { label: 'car', score: 0.58, box: { x: 0.61, y: 0.15, w: 0.27, h: 0.14 } };
    const part = { label: 'car', score: 0.52, box: { x: 0.61, y: 0.13, w: 0.14, h: 0.15 } };
    expect(iou(whole.box, part.box)).toBeLessThan(0.5);
    expect(suppressOverlaps([part, whole], (d) => d.label)).toEqual([whole]);
  });
});
