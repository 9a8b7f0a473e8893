import { describe, expect, it } from 'vitest';
import { polygonProblem, type Polygon } from '../../src/domain/polygon.js';

const square: Polygon = [
  [0.2, 0.2],
  [0.6, 0.2],
  [0.6, 0.6],
  [0.2, 0.6],
];
// An L shape: the notch at the top right is outside.
const ell: Polygon = [
  [0, 0],
  [0.5, 0],
  [0.5, 0.5],
  [1, 0.5],
  [1, 1],
  [0, 1],
];

describe('polygonProblem', () => {
  it.each([
    [square, null],
    [ell, null],
    [
      [
        [0, 0],
        [1, 0],
      ],
      /at least 3 corners/,
    ],
    [
      [
        [0, 0],
        [1.5, 0],
        [1, 1],
      ],
      /corner 1 must be \[x, y\] with both in 0–1/,
    ],
    [[[0, 0], [1, 0], [1]], /corner 2/],
    [
      [
        [0, 0],
        [0.5, 0.5],
        [1, 1],
      ],
      /no area/,
    ],
    [
      [
        [0, 0],
        [1, 1],
        [1, 0],
        [0, 0.5],
      ],
      /edges 0 and 2 cross/,
    ],
  ] as const)('%j → %s', (polygon, problem) => {
    const got = polygonProblem(polygon);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });
});
