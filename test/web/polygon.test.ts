import { describe, expect, it } from 'vitest';
import { inAnyPolygon, pointInPolygon as serverPointInPolygon } from '../../src/detect/geometry.js';
import { SETTING_LIMITS, ZONE_NAME_PATTERN } from '../../src/domain/camera-settings.js';
import { polygonProblem as serverPolygonProblem } from '../../src/domain/polygon.js';
import { MotionDetector } from '../../src/media/recorder/motion.js';
import { MOTION_FRAME_SIZE } from '../../src/media/recorder/motion-watcher.js';
import {
  clampPoint,
  faultText,
  LIMITS,
  maskedShares,
  MOTION_FRAME,
  MOTION_GRID,
  movedCorner,
  pointInPolygon,
  polygonFault,
  polygonProblem,
  startSquare,
  withMidpoint,
  withoutCorner,
  ZONE_NAME,
  type Polygon,
} from '../../web/src/polygon.js';

// The mask and zone editor's geometry (web/src/polygon.ts): its copy of the gateway's polygon rules
// must refuse exactly what the API refuses, and the motion grid it shades must be the software
// motion detector's. The bundle may hold no file of src/, so the two are kept alike here.

/** A small seeded generator: the same polygons every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

const square: Polygon = [
  [0.1, 0.1],
  [0.6, 0.1],
  [0.6, 0.6],
  [0.1, 0.6],
];
const bowTie = [
  [0, 0],
  [1, 1],
  [1, 0],
  [0, 0.5],
];

describe("the editor's polygon rules", () => {
  it('say what the API says, word for word, of every kind of polygon', () => {
    const fixtures: number[][][] = [
      [],
      [[0.1, 0.1]],
      [
        [0, 0],
        [1, 1],
      ],
      square.map((p) => [...p]),
      bowTie,
      [
        [0, 0],
        [0.5, 0.5],
        [1, 1],
      ],
      [
        [0, 0],
        [1.5, 0],
        [0, 1],
      ],
      [
        [0, 0],
        [-0.1, 0],
        [0, 1],
      ],
      [
        [0, 0, 0],
        [1, 0],
        [0, 1],
      ],
      [
        [0, 0],
        [Number.NaN, 0],
        [0, 1],
      ],
      // A corner on another edge (touching, not crossing through).
      [
        [0, 0],
        [1, 0],
        [0.5, 0],
        [0.5, 1],
      ],
    ];
    const next = random(7);
    for (let i = 0; i < 2_000; i++) {
      const n = 3 + Math.floor(next() * 8);
      // Some on a coarse grid, so that collinear and touching corners come up.
      const coarse = i % 3 === 0;
      fixtures.push(
        Array.from({ length: n }, () =>
          coarse ? [Math.round(next() * 4) / 4, Math.round(next() * 4) / 4] : [next(), next()],
        ),
      );
    }
    const kinds = new Set<string>();
    for (const polygon of fixtures) {
      expect(polygonProblem(polygon), JSON.stringify(polygon)).toBe(serverPolygonProblem(polygon));
      kinds.add(polygonFault(polygon)?.kind ?? 'ok');
    }
    // Every outcome was met, so the comparison above covered each.
    expect([...kinds].sort()).toEqual(['cross', 'few', 'flat', 'ok', 'range']);
  });

  it('keep the limits and the zone name rule of the gateway', () => {
    expect(LIMITS).toEqual({
      corners: SETTING_LIMITS.corners,
      polygons: SETTING_LIMITS.polygons,
      zones: SETTING_LIMITS.zones,
      loiteringS: SETTING_LIMITS.loiteringS,
    });
    expect(ZONE_NAME.source).toBe(ZONE_NAME_PATTERN);
  });

  it('tell a fault in words, corners counted from 1 as the editor labels them', () => {
    expect(faultText(polygonFault(bowTie)!)).toBe(
      'Its edges cross (corner 1 to 2 and corner 3 to 4): drag a corner so they do not.',
    );
    const lastEdge = [
      [0, 0],
      [1, 0],
      [0, 1],
      [0.8, 0.5],
    ];
    // Edge 3 runs from the last corner back to the first.
    expect(polygonFault(lastEdge)).toMatchObject({ kind: 'cross', edges: [1, 3] });
    expect(faultText(polygonFault(lastEdge)!)).toContain('corner 2 to 3 and corner 4 to 1');
    expect(faultText(polygonFault([[0, 0]])!)).toBe('It needs at least 3 corners (it has 1).');
  });

  it('decide inside and outside as the gateway does', () => {
    const next = random(11);
    const polygons: Polygon[] = [
      square,
      [
        [0.2, 0.1],
        [0.9, 0.3],
        [0.5, 0.5],
        [0.8, 0.9],
        [0.1, 0.7],
      ],
    ];
    for (let i = 0; i < 5_000; i++) {
      const p = [next(), next()] as const;
      for (const polygon of polygons) expect(pointInPolygon(p, polygon)).toBe(serverPointInPolygon(p, polygon));
    }
  });
});

describe('the motion grid the mask covers', () => {
  it("is the software motion detector's: its frames, its grid", () => {
    expect(MOTION_FRAME).toEqual(MOTION_FRAME_SIZE);
    // Everything masked but one cell (column 3, row 2): the detector moves in that cell only.
    const { cols, rows } = MOTION_GRID;
    const [c, r] = [3, 2];
    const band = (x0: number, y0: number, x1: number, y1: number): Polygon => [
      [x0, y0],
      [x1, y0],
      [x1, y1],
      [x0, y1],
    ];
    const mask = [
      band(0, 0, c / cols, 1),
      band((c + 1) / cols, 0, 1, 1),
      band(0, 0, 1, r / rows),
      band(0, (r + 1) / rows, 1, 1),
    ];
    const { width, height } = MOTION_FRAME;
    const detector = new MotionDetector({ width, height, threshold: 0.01, mask });
    const still = new Uint8Array(width * height).fill(100);
    // A third of the pixels change (fewer than half: the detector takes the median change as the light's).
    const moved = still.map((v, i) => (i % 3 === 0 ? 250 : v));
    detector.push(still, 0);
    detector.push(moved, 100);
    detector.push(still, 200);
    expect(detector.movingArea()).toEqual({ x: c / cols, y: r / rows, w: 1 / cols, h: 1 / rows });
    const shares = maskedShares(mask);
    expect(shares.length).toBe(cols * rows);
    expect(shares.filter((s) => s === 0)).toHaveLength(1);
    expect(shares[r * cols + c]).toBe(0);
    expect(shares.filter((s) => s === 1)).toHaveLength(cols * rows - 1);
  });

  it('counts the pixels the detector masks, cell by cell', () => {
    const mask: Polygon[] = [
      [
        [0.05, 0.1],
        [0.7, 0.2],
        [0.4, 0.95],
      ],
      square,
    ];
    const { width, height } = MOTION_FRAME;
    const { cols, rows } = MOTION_GRID;
    const expected = new Array<number>(cols * rows).fill(0);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        if (inAnyPolygon([(x + 0.5) / width, (y + 0.5) / height], mask))
          expected[Math.floor((y * rows) / height) * cols + Math.floor((x * cols) / width)]! += 1;
    const perCell = (width / cols) * (height / rows);
    expect(maskedShares(mask)).toEqual(expected.map((n) => n / perCell));
    expect(maskedShares([]).every((s) => s === 0)).toBe(true);
  });
});

describe('editing corners', () => {
  it('keeps corners inside the picture, to four decimals', () => {
    expect(clampPoint(-0.2, 1.3)).toEqual([0, 1]);
    expect(clampPoint(0.123456, 0.5)).toEqual([0.1235, 0.5]);
    expect(movedCorner(square, 1, [2, 0.25])[1]).toEqual([1, 0.25]);
  });

  it('adds a corner halfway along an edge (the last edge too) and removes one', () => {
    expect(withMidpoint(square, 0)).toEqual([
      [0.1, 0.1],
      [0.35, 0.1],
      [0.6, 0.1],
      [0.6, 0.6],
      [0.1, 0.6],
    ]);
    expect(withMidpoint(square, 3).at(-1)).toEqual([0.1, 0.35]);
    expect(withoutCorner(square, 1)).toEqual([square[0], square[2], square[3]]);
  });

  it('starts a square that is usable whatever the picture', () => {
    for (const aspect of [16 / 9, 4 / 3, 1, 9 / 16, 32 / 9]) {
      const s = startSquare(aspect);
      expect(polygonProblem(s), String(aspect)).toBeNull();
    }
  });
});
