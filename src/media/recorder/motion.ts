import { inAnyPolygon, movingArea } from '../../detect/geometry.js';
import type { Box } from '../../detect/types.js';
import type { Polygon } from '../../domain/polygon.js';

// Software motion detection for cameras without their own events: ffmpeg decodes the sub stream
// to a few small grey frames a second (raw `gray`, width × height bytes each) and each frame is
// compared with the one before. Built to run for many cameras on a small board: one pass over the
// pixels per frame and no allocation once constructed.

export interface MotionOptions {
  width: number;
  height: number;
  /** per-pixel change that counts (0–255), default 25 */
  pixelDelta?: number;
  /** fraction of pixels that must change, e.g. 0.02 */
  threshold: number;
  /** consecutive moving frames before 'start' (default 2) */
  minFrames?: number;
  /** no motion this long → 'stop' (default 5000) */
  quietMs?: number;
  /** Polygons (0–1 coordinates) where changes are ignored: a street, a clock overlay (cameras[].motion_mask). */
  mask?: readonly Polygon[];
  /** The grid of cells the moving area is told in (default 16 × 9); each cell holds whole pixels or parts. */
  grid?: { cols: number; rows: number };
}

/** A cell counts as moving when at least this fraction of its unmasked pixels changed. */
const CELL_FRACTION = 0.1;

/** Differences of two grey values, −255…255, as histogram indexes 0…510. */
const DIFF_OFFSET = 255;

export class MotionDetector {
  private readonly pixels: number;
  private readonly pixelDelta: number;
  private readonly threshold: number;
  private readonly minFrames: number;
  private readonly quietMs: number;
  private readonly previous: Uint8Array;
  private readonly histogram = new Uint32Array(2 * DIFF_OFFSET + 1);
  /** Per pixel: its change from the previous frame (histogram index), for the second pass. */
  private readonly diffs: Uint16Array;
  /** Per pixel: 1 when masked (never counts). */
  private readonly masked: Uint8Array;
  private readonly unmaskedPixels: number;
  /** Per pixel: its grid cell. */
  private readonly cellOf: Uint16Array;
  private readonly cols: number;
  private readonly rows: number;
  /** Per cell: unmasked pixels, changed pixels of the last frame, and whether it moved since the streak began. */
  private readonly cellPixels: Uint32Array;
  private readonly cellChanged: Uint32Array;
  private readonly cellsMoved: boolean[];
  private hasPrevious = false;
  private movingFrames = 0;
  private moving = false;
  private lastMotionAt = 0;
  private score = 0;

  constructor(o: MotionOptions) {
    positiveInteger('width', o.width);
    positiveInteger('height', o.height);
    this.pixels = o.width * o.height;
    this.pixelDelta = o.pixelDelta ?? 25;
    if (!(Number.isInteger(this.pixelDelta) && this.pixelDelta >= 1 && this.pixelDelta <= 255)) {
      throw new RangeError(`pixelDelta must be an integer within 1..255, got ${o.pixelDelta}`);
    }
    this.threshold = o.threshold;
    if (!(this.threshold > 0 && this.threshold <= 1))
      throw new RangeError(`threshold must be a fraction within (0, 1], got ${o.threshold}`);
    this.minFrames = o.minFrames ?? 2;
    positiveInteger('minFrames', this.minFrames);
    this.quietMs = o.quietMs ?? 5000;
    if (!(Number.isFinite(this.quietMs) && this.quietMs >= 0))
      throw new RangeError(`quietMs must be a finite number ≥ 0, got ${o.quietMs}`);
    this.previous = new Uint8Array(this.pixels);
    this.diffs = new Uint16Array(this.pixels);
    this.cols = o.grid?.cols ?? 16;
    this.rows = o.grid?.rows ?? 9;
    positiveInteger('grid cols', this.cols);
    positiveInteger('grid rows', this.rows);
    this.masked = new Uint8Array(this.pixels);
    this.cellOf = new Uint16Array(this.pixels);
    this.cellPixels = new Uint32Array(this.cols * this.rows);
    this.cellChanged = new Uint32Array(this.cols * this.rows);
    this.cellsMoved = new Array<boolean>(this.cols * this.rows).fill(false);
    let unmasked = 0;
    for (let y = 0; y < o.height; y++) {
      for (let x = 0; x < o.width; x++) {
        const i = y * o.width + x;
        const point = [(x + 0.5) / o.width, (y + 0.5) / o.height] as const;
        const cell =
          Math.min(this.rows - 1, Math.floor((y * this.rows) / o.height)) * this.cols +
          Math.min(this.cols - 1, Math.floor((x * this.cols) / o.width));
        this.cellOf[i] = cell;
        if (o.mask && o.mask.length > 0 && inAnyPolygon(point, o.mask)) {
          this.masked[i] = 1;
          continue;
        }
        this.cellPixels[cell]!++;
        unmasked++;
      }
    }
    this.unmaskedPixels = unmasked;
  }

  /**
   * Where the picture moved, as a 0–1 box around the grid cells that changed since the current
   * streak of moving frames began (masked parts never count), or null: where the detector looks.
   */
  movingArea(): Box | null {
    return movingArea(this.cols, this.rows, this.cellsMoved);
  }

  /** the fraction of changed pixels of the last frame (for logs/tuning) */
  get lastScore(): number {
    return this.score;
  }

  /** Whether motion is under way (a 'start' not yet followed by a 'stop'). */
  get active(): boolean {
    return this.moving;
  }

  /**
   * Compares a frame (width × height grey bytes; only read during the call) with the previous
   * one. 'start' after minFrames consecutive frames over the threshold; 'stop' once no frame has
   * been over it for quietMs. `at` is the frame's time in ms.
   */
  push(frame: Uint8Array, at: number): 'start' | 'stop' | null {
    if (frame.length !== this.pixels) throw new RangeError(`a frame must be ${this.pixels} bytes, got ${frame.length}`);
    if (!Number.isFinite(at)) throw new RangeError(`frame time must be a finite number of ms, got ${at}`);
    if (!this.hasPrevious) {
      this.previous.set(frame);
      this.hasPrevious = true;
      this.score = 0;
      return null;
    }
    this.score = this.changedFraction(frame);
    const overThreshold = this.score >= this.threshold;
    if (!this.moving) {
      this.movingFrames = overThreshold ? this.movingFrames + 1 : 0;
      if (overThreshold) this.markMovedCells();
      else this.cellsMoved.fill(false);
      if (this.movingFrames < this.minFrames) return null;
      this.moving = true;
      this.lastMotionAt = at;
      return 'start';
    }
    if (overThreshold) {
      this.lastMotionAt = at;
      this.markMovedCells();
      return null;
    }
    if (at - this.lastMotionAt < this.quietMs) return null;
    this.moving = false;
    this.movingFrames = 0;
    this.cellsMoved.fill(false);
    return 'stop';
  }

  /** Forgets the previous frame and any motion under way (a new stream); the caller closes an active event itself. */
  reset(): void {
    this.hasPrevious = false;
    this.movingFrames = 0;
    this.moving = false;
    this.score = 0;
    this.cellsMoved.fill(false);
  }

  private markMovedCells(): void {
    for (let c = 0; c < this.cellChanged.length; c++) {
      if (this.cellPixels[c]! > 0 && this.cellChanged[c]! >= this.cellPixels[c]! * CELL_FRACTION)
        this.cellsMoved[c] = true;
    }
  }

  /** Also makes `frame` the previous frame, and counts each cell's changed pixels. */
  private changedFraction(frame: Uint8Array): number {
    const { histogram, previous, diffs, masked } = this;
    histogram.fill(0);
    for (let i = 0; i < frame.length; i++) {
      const value = frame[i]!;
      const diff = value - previous[i]! + DIFF_OFFSET;
      previous[i] = value;
      diffs[i] = diff;
      if (masked[i] === 0) histogram[diff]!++;
    }
    // Auto exposure, clouds and lights switching on shift the whole picture at once: the median
    // change is taken as that shift, and a pixel counts when it departs from it. Motion moves
    // fewer than half of the pixels, so it never becomes the median.
    let median = 0;
    for (let seen = 0, half = this.unmaskedPixels / 2; median < histogram.length; median++) {
      seen += histogram[median]!;
      if (seen >= half) break;
    }
    const low = median - this.pixelDelta;
    const high = median + this.pixelDelta;
    const cellChanged = this.cellChanged;
    cellChanged.fill(0);
    let changed = 0;
    for (let i = 0; i < diffs.length; i++) {
      const d = diffs[i]!;
      if (masked[i] === 1 || (d > low && d < high)) continue;
      changed++;
      cellChanged[this.cellOf[i]!]!++;
    }
    return this.unmaskedPixels === 0 ? 0 : changed / this.unmaskedPixels;
  }
}

/** Cuts ffmpeg's raw video byte stream into whole frames. */
export class GrayFrameSplitter {
  private readonly frame: Uint8Array;
  private filled = 0;

  constructor(frameBytes: number) {
    positiveInteger('frameBytes', frameBytes);
    this.frame = new Uint8Array(frameBytes);
  }

  /**
   * calls onFrame for each whole frame in the pushed bytes; chunks may split frames anywhere.
   * The frame passed to onFrame is one buffer reused for every frame: valid only during the call.
   */
  push(chunk: Buffer, onFrame: (frame: Uint8Array) => void): void {
    const frame = this.frame;
    let offset = 0;
    while (offset < chunk.length) {
      const n = Math.min(frame.length - this.filled, chunk.length - offset);
      chunk.copy(frame, this.filled, offset, offset + n);
      this.filled += n;
      offset += n;
      if (this.filled < frame.length) return;
      this.filled = 0;
      onFrame(frame);
    }
  }

  /** Drops a partial frame (the stream restarted: the next byte begins a frame). */
  reset(): void {
    this.filled = 0;
  }
}

function positiveInteger(name: string, value: number): void {
  if (!(Number.isInteger(value) && value > 0)) throw new RangeError(`${name} must be a positive integer, got ${value}`);
}
