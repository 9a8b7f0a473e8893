// Zones and masks (cameras[].zones, cameras[].motion_mask): polygons in 0–1 coordinates of a
// frame. The shape and its validity sit here, below config, which refuses an unusable polygon when
// the file is loaded; what detect and the recorder do with one is in src/detect/geometry.ts.

/** [x, y] in 0–1 coordinates of the frame (0,0 top-left). */
export type Point = readonly [number, number];
export type Polygon = readonly Point[];

/** Twice the signed area (shoelace). */
function doubleArea(polygon: Polygon): number {
  let sum = 0;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    sum += (polygon[j]![0] - polygon[i]![0]) * (polygon[j]![1] + polygon[i]![1]);
  }
  return sum;
}

function orientation(a: Point, b: Point, c: Point): number {
  const v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  return Math.abs(v) < 1e-12 ? 0 : Math.sign(v);
}

function onSegment(a: Point, b: Point, p: Point): boolean {
  return (
    Math.min(a[0], b[0]) <= p[0] &&
    p[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= p[1] &&
    p[1] <= Math.max(a[1], b[1])
  );
}

function segmentsCross(a: Point, b: Point, c: Point, d: Point): boolean {
  const o1 = orientation(a, b, c);
  const o2 = orientation(a, b, d);
  const o3 = orientation(c, d, a);
  const o4 = orientation(c, d, b);
  if (o1 !== o2 && o3 !== o4) return true;
  return (
    (o1 === 0 && onSegment(a, b, c)) ||
    (o2 === 0 && onSegment(a, b, d)) ||
    (o3 === 0 && onSegment(c, d, a)) ||
    (o4 === 0 && onSegment(c, d, b))
  );
}

/**
 * Why a list of points is not a usable polygon, or null: fewer than 3 corners, a coordinate outside
 * 0–1, no area (all corners on one line), or edges that cross (a bow tie, whose inside is ambiguous).
 */
export function polygonProblem(polygon: readonly (readonly number[])[]): string | null {
  if (polygon.length < 3) return `needs at least 3 corners, got ${polygon.length}`;
  for (const [i, p] of polygon.entries()) {
    if (p.length !== 2 || !p.every((v) => Number.isFinite(v) && v >= 0 && v <= 1)) {
      return `corner ${i} must be [x, y] with both in 0–1, got ${JSON.stringify(p)}`;
    }
  }
  const points = polygon as Polygon;
  if (Math.abs(doubleArea(points)) < 1e-9) return 'has no area (its corners are on one line)';
  const n = points.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      // Neighbouring edges share a corner; only edges that are not adjacent may not touch.
      if (j === i + 1 || (i === 0 && j === n - 1)) continue;
      if (segmentsCross(points[i]!, points[(i + 1) % n]!, points[j]!, points[(j + 1) % n]!))
        return `edges ${i} and ${j} cross`;
    }
  }
  return null;
}
