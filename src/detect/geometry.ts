import type { Point, Polygon } from '../domain/polygon.js';
import type { Box } from './types.js';

/** Even-odd rule (ray cast to the right); a point exactly on an edge may fall either way. */
export function pointInPolygon([px, py]: Point, polygon: Polygon): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i]!;
    const [xj, yj] = polygon[j]!;
    if (yi > py !== yj > py && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

export function inAnyPolygon(point: Point, polygons: readonly Polygon[]): boolean {
  return polygons.some((p) => pointInPolygon(point, p));
}

/** Where an object stands: the middle of its box's bottom edge (the porch, not the wall behind it). */
export function bottomCentre(box: Box): Point {
  return [box.x + box.w / 2, box.y + box.h];
}

/**
 * Whether an object counts for a camera with required zones: no required zone means everywhere;
 * otherwise its bottom centre must be inside one of them.
 */
export function inRequiredZones(
  box: Box,
  zones: Readonly<Record<string, Polygon>>,
  required: readonly string[],
): boolean {
  if (required.length === 0) return true;
  const point = bottomCentre(box);
  return required.some((name) => {
    const zone = zones[name];
    return zone !== undefined && pointInPolygon(point, zone);
  });
}

/** Which cells of a cols × rows motion grid are masked: those whose centre is inside a mask polygon. */
export function maskedCells(cols: number, rows: number, masks: readonly Polygon[]): boolean[] {
  const out: boolean[] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out.push(inAnyPolygon([(c + 0.5) / cols, (r + 0.5) / rows], masks));
  }
  return out;
}

/**
 * The moving area of a cols × rows motion grid (row by row, true = changed) as a 0–1 box around the
 * changed cells that are not masked, or null when none is left: what planRegions() crops around.
 */
export function movingArea(
  cols: number,
  rows: number,
  changed: readonly boolean[],
  masked: readonly boolean[] = [],
): Box | null {
  let [c1, r1, c2, r2] = [cols, rows, -1, -1];
  for (let i = 0; i < cols * rows; i++) {
    if (!changed[i] || masked[i]) continue;
    const [c, r] = [i % cols, Math.floor(i / cols)];
    [c1, r1, c2, r2] = [Math.min(c1, c), Math.min(r1, r), Math.max(c2, c), Math.max(r2, r)];
  }
  if (c2 < 0) return null;
  return { x: c1 / cols, y: r1 / rows, w: (c2 - c1 + 1) / cols, h: (r2 - r1 + 1) / rows };
}
