// Masks and zones as the gateway takes them: polygons in 0–1 coordinates of the picture (0,0
// top-left). The rules are src/domain/polygon.ts's and SETTING_LIMITS', copied because the bundle
// may hold no file of src/ (test/web/polygon.test.ts keeps the two alike), so that the editor
// refuses what the API would refuse before anything is sent. Pure, so tests run it without a browser.

/** [x, y] in 0–1 coordinates of the picture. */
export type Point = readonly [number, number];
export type Polygon = readonly Point[];

/** SETTING_LIMITS and ZONE_NAME_PATTERN of src/domain/camera-settings.ts. */
export const LIMITS = { corners: 64, polygons: 32, zones: 32, loiteringS: 3600 } as const;
export const ZONE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The software motion detector's grid and the frames it compares (src/media/recorder/motion.ts,
 * motion-watcher.ts): not told by the API, so the documented defaults. A pixel is masked when its
 * centre is inside a mask polygon; a cell of the grid moves when enough of its unmasked pixels change.
 */
export const MOTION_GRID = { cols: 16, rows: 9 } as const;
export const MOTION_FRAME = { width: 160, height: 90 } as const;

/** What is wrong with a polygon, to be told in the API's words or in the editor's. */
export type Fault =
  | { kind: 'few'; corners: number }
  | { kind: 'range'; corner: number; value: readonly number[] }
  | { kind: 'flat' }
  /** Edge i runs from corner i to the next (the last to the first). */
  | { kind: 'cross'; edges: readonly [number, number]; corners: number };

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

/** Why a list of points is not a usable polygon, or null: src/domain/polygon.ts's checks, in its order. */
export function polygonFault(polygon: readonly (readonly number[])[]): Fault | null {
  if (polygon.length < 3) return { kind: 'few', corners: polygon.length };
  for (const [i, p] of polygon.entries()) {
    if (p.length !== 2 || !p.every((v) => Number.isFinite(v) && v >= 0 && v <= 1))
      return { kind: 'range', corner: i, value: p };
  }
  const points = polygon as Polygon;
  if (Math.abs(doubleArea(points)) < 1e-9) return { kind: 'flat' };
  const n = points.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      // Neighbouring edges share a corner; only edges that are not adjacent may not touch.
      if (j === i + 1 || (i === 0 && j === n - 1)) continue;
      if (segmentsCross(points[i]!, points[(i + 1) % n]!, points[j]!, points[(j + 1) % n]!))
        return { kind: 'cross', edges: [i, j], corners: n };
    }
  }
  return null;
}

/** The fault in the API's words (polygonProblem of src/domain/polygon.ts, word for word). */
export function polygonProblem(polygon: readonly (readonly number[])[]): string | null {
  const fault = polygonFault(polygon);
  if (fault === null) return null;
  if (fault.kind === 'few') return `needs at least 3 corners, got ${fault.corners}`;
  if (fault.kind === 'range')
    return `corner ${fault.corner} must be [x, y] with both in 0–1, got ${JSON.stringify(fault.value)}`;
  if (fault.kind === 'flat') return 'has no area (its corners are on one line)';
  return `edges ${fault.edges[0]} and ${fault.edges[1]} cross`;
}

/** The fault for the person drawing: corners counted from 1, as the editor labels them. */
export function faultText(fault: Fault): string {
  const n = (i: number) => i + 1;
  if (fault.kind === 'few') return `It needs at least 3 corners (it has ${fault.corners}).`;
  if (fault.kind === 'range') return `Corner ${n(fault.corner)} is outside the picture.`;
  if (fault.kind === 'flat') return 'It has no area: its corners are on one line.';
  const [i, j] = fault.edges;
  const next = (k: number) => n((k + 1) % fault.corners);
  return `Its edges cross (corner ${n(i)} to ${next(i)} and corner ${n(j)} to ${next(j)}): drag a corner so they do not.`;
}

/** Even-odd rule (ray cast to the right), as src/detect/geometry.ts decides what a mask covers. */
export function pointInPolygon([px, py]: Point, polygon: Polygon): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i]!;
    const [xj, yj] = polygon[j]!;
    if (yi > py !== yj > py && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/**
 * How much of each cell of the motion grid the mask covers (0–1, row by row): the share of the
 * cell's pixels, in the frames the detector compares, whose centre is inside a mask polygon. A cell
 * covered whole never counts as moving; one covered in part counts by its other pixels.
 */
export function maskedShares(mask: readonly Polygon[]): number[] {
  const { width, height } = MOTION_FRAME;
  const { cols, rows } = MOTION_GRID;
  const masked = new Uint8Array(width * height);
  for (const polygon of mask) {
    if (polygon.length < 3) continue;
    // Only the pixels within the polygon's bounds can be inside it.
    const xs = polygon.map((p) => p[0]);
    const ys = polygon.map((p) => p[1]);
    const x0 = Math.max(0, Math.floor(Math.min(...xs) * width));
    const x1 = Math.min(width - 1, Math.ceil(Math.max(...xs) * width));
    const y0 = Math.max(0, Math.floor(Math.min(...ys) * height));
    const y1 = Math.min(height - 1, Math.ceil(Math.max(...ys) * height));
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const i = y * width + x;
        if (!masked[i] && pointInPolygon([(x + 0.5) / width, (y + 0.5) / height], polygon)) masked[i] = 1;
      }
    }
  }
  const counts = new Array<number>(cols * rows).fill(0);
  const sizes = new Array<number>(cols * rows).fill(0);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const cell =
        Math.min(rows - 1, Math.floor((y * rows) / height)) * cols + Math.min(cols - 1, Math.floor((x * cols) / width));
      sizes[cell]!++;
      if (masked[y * width + x]) counts[cell]!++;
    }
  }
  return counts.map((c, i) => c / sizes[i]!);
}

/** A coordinate kept inside the picture and to four decimals (a tenth of a pixel of a 4K picture). */
export function clampPoint(x: number, y: number): Point {
  const fit = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 10_000) / 10_000;
  return [fit(x), fit(y)];
}

/** The polygon with corner `i` moved to `to`. */
export function movedCorner(polygon: Polygon, i: number, to: Point): Point[] {
  return polygon.map((p, k) => (k === i ? clampPoint(to[0], to[1]) : p));
}

/** The polygon with a corner added between corner `i` and the next, halfway along that edge. */
export function withMidpoint(polygon: Polygon, i: number): Point[] {
  const a = polygon[i]!;
  const b = polygon[(i + 1) % polygon.length]!;
  const out = [...polygon];
  out.splice(i + 1, 0, clampPoint((a[0] + b[0]) / 2, (a[1] + b[1]) / 2));
  return out;
}

export function withoutCorner(polygon: Polygon, i: number): Point[] {
  return polygon.filter((_, k) => k !== i);
}

/** A square a third of the picture's height across, centred: a start for those who do not draw with a pointer. */
export function startSquare(aspect: number): Point[] {
  const h = 1 / 3;
  const w = Math.min(0.9, h / aspect);
  const [x0, y0] = [0.5 - w / 2, 0.5 - h / 2];
  return [clampPoint(x0, y0), clampPoint(x0 + w, y0), clampPoint(x0 + w, y0 + h), clampPoint(x0, y0 + h)];
}
