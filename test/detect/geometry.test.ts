import { describe, expect, it } from 'vitest';
import { bottomCentre, inRequiredZones, maskedCells, movingArea, pointInPolygon } from '../../src/detect/geometry.js';
import type { Polygon } from '../../src/domain/polygon.js';

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

describe('pointInPolygon', () => {
  it.each([
    [[0.4, 0.4], square, true],
    [[0.1, 0.4], square, false],
    [[0.7, 0.4], square, false],
    [[0.4, 0.7], square, false],
    [[0.75, 0.25], ell, false],
    [[0.75, 0.75], ell, true],
    [[0.25, 0.25], ell, true],
  ] as const)('%j in %j → %s', (point, polygon, inside) => {
    expect(pointInPolygon(point, polygon)).toBe(inside);
  });
});

describe('required zones use the bottom centre of the box', () => {
  const zones = {
    porch: [
      [0, 0.6],
      [0.5, 0.6],
      [0.5, 1],
      [0, 1],
    ] as Polygon,
    drive: [
      [0.6, 0.6],
      [1, 0.6],
      [1, 1],
      [0.6, 1],
    ] as Polygon,
  };
  it.each([
    ['no required zone: anywhere counts', { x: 0.8, y: 0, w: 0.1, h: 0.1 }, [], true],
    ['feet on the porch, head above it', { x: 0.1, y: 0.2, w: 0.2, h: 0.6 }, ['porch'], true],
    [
      'head in the porch zone, feet below the frame edge? no: feet on the sidewalk',
      { x: 0.7, y: 0.3, w: 0.1, h: 0.4 },
      ['porch'],
      false,
    ],
    ['one of several required zones is enough', { x: 0.7, y: 0.3, w: 0.1, h: 0.4 }, ['porch', 'drive'], true],
    ['a required zone that does not exist matches nothing', { x: 0.1, y: 0.2, w: 0.2, h: 0.6 }, ['garden'], false],
  ] as const)('%s', (_name, box, required, expected) => {
    expect(inRequiredZones(box, zones, required)).toBe(expected);
  });
  it('bottom centre', () => {
    expect(bottomCentre({ x: 0.1, y: 0.2, w: 0.4, h: 0.5 })).toEqual([0.30000000000000004, 0.7]);
  });
});

describe('maskedCells', () => {
  it('marks the cells whose centre is inside a mask', () => {
    // The left half of a 4 × 2 grid.
    expect(
      maskedCells(4, 2, [
        [
          [0, 0],
          [0.5, 0],
          [0.5, 1],
          [0, 1],
        ],
      ]),
    ).toEqual([true, true, false, false, true, true, false, false]);
    expect(maskedCells(2, 1, [])).toEqual([false, false]);
  });
});

describe('movingArea', () => {
  const o = false;
  const X = true;
  // A 4 × 3 grid.
  it.each([
    ['nothing changed', [o, o, o, o, o, o, o, o, o, o, o, o], [], null],
    ['one cell', [o, o, o, o, o, X, o, o, o, o, o, o], [], { x: 0.25, y: 1 / 3, w: 0.25, h: 1 / 3 }],
    ['two apart: the box around both', [X, o, o, o, o, o, o, o, o, o, o, X], [], { x: 0, y: 0, w: 1, h: 1 }],
    [
      'a masked cell does not count',
      [X, o, o, o, o, o, o, o, o, o, o, X],
      [X, o, o, o, o, o, o, o, o, o, o, o],
      { x: 0.75, y: 2 / 3, w: 0.25, h: 1 / 3 },
    ],
    ['only masked cells changed', [X, o, o, o, o, o, o, o, o, o, o, o], [X, o, o, o, o, o, o, o, o, o, o, o], null],
  ] as const)('%s', (_name, changed, masked, box) => {
    const got = movingArea(4, 3, changed, masked);
    if (box === null) return expect(got).toBeNull();
    expect(got).not.toBeNull();
    for (const k of ['x', 'y', 'w', 'h'] as const) expect(got![k]).toBeCloseTo(box[k], 9);
  });
});
