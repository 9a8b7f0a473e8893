import type { Box } from './types.js';

/** A square part of a frame, in pixels, wholly inside it. */
export interface Region {
  x: number;
  y: number;
  size: number;
}

export interface RegionPlanOptions {
  /** The model's input side: a moving area smaller than this is looked at unscaled in a square this big. */
  inputSize: number;
  /** Fraction of the moving area's size added on every side, so that a person half in it is whole. */
  margin?: number;
}

/**
 * Where to look in a width × height frame. With a moving area (0–1 box from the motion detector):
 * squares around it, at least the model's input size so small objects keep their pixels, at most
 * the frame's short side. Without one (ONVIF motion says no where): the whole frame in squares of
 * its short side (two for 16:9, overlapping). Squares, because the model's input is square and
 * stretching would distort people.
 */
export function planRegions(width: number, height: number, motion: Box | null, opts: RegionPlanOptions): Region[] {
  const short = Math.min(width, height);
  if (!(short >= 1)) return [];
  let area = { x: 0, y: 0, w: width, h: height };
  let side = short;
  if (motion !== null) {
    const margin = opts.margin ?? 0.25;
    const mx = motion.w * width * margin;
    const my = motion.h * height * margin;
    const x1 = clamp(motion.x * width - mx, 0, width);
    const y1 = clamp(motion.y * height - my, 0, height);
    const x2 = clamp((motion.x + motion.w) * width + mx, 0, width);
    const y2 = clamp((motion.y + motion.h) * height + my, 0, height);
    area = { x: x1, y: y1, w: Math.max(0, x2 - x1), h: Math.max(0, y2 - y1) };
    side = clamp(Math.max(area.w, area.h), Math.min(opts.inputSize, short), short);
  }
  side = Math.floor(side);
  const xs = cover(area.x, area.w, side, width);
  const ys = cover(area.y, area.h, side, height);
  return ys.flatMap((y) => xs.map((x) => ({ x, y, size: side })));
}

/** Start positions of squares of `side` covering [start, start + length), each inside [0, total). */
function cover(start: number, length: number, side: number, total: number): number[] {
  const last = total - side;
  const n = Math.max(1, Math.ceil(length / side));
  if (n === 1) return [Math.round(clamp(start + length / 2 - side / 2, 0, last))];
  const step = (length - side) / (n - 1);
  return Array.from({ length: n }, (_, i) => Math.round(clamp(start + i * step, 0, last)));
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/** A box in 0–1 coordinates of a region, in 0–1 coordinates of the whole frame. */
export function toFrameBox(region: Region, box: Box, width: number, height: number): Box {
  return {
    x: (region.x + box.x * region.size) / width,
    y: (region.y + box.y * region.size) / height,
    w: (box.w * region.size) / width,
    h: (box.h * region.size) / height,
  };
}
