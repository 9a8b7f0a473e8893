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
}

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
    if (!(this.threshold > 0 && this.threshold <= 1)) throw new RangeError(`threshold must be a fraction within (0, 1], got ${o.threshold}`);
    this.minFrames = o.minFrames ?? 2;
    positiveInteger('minFrames', this.minFrames);
    this.quietMs = o.quietMs ?? 5000;
    if (!(Number.isFinite(this.quietMs) && this.quietMs >= 0)) throw new RangeError(`quietMs must be a finite number ≥ 0, got ${o.quietMs}`);
    this.previous = new Uint8Array(this.pixels);
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
      if (this.movingFrames < this.minFrames) return null;
      this.moving = true;
      this.lastMotionAt = at;
      return 'start';
    }
    if (overThreshold) {
      this.lastMotionAt = at;
      return null;
    }
    if (at - this.lastMotionAt < this.quietMs) return null;
    this.moving = false;
    this.movingFrames = 0;
    return 'stop';
  }

  /** Forgets the previous frame and any motion under way (a new stream); the caller closes an active event itself. */
  reset(): void {
    this.hasPrevious = false;
    this.movingFrames = 0;
    this.moving = false;
    this.score = 0;
  }

  /** Also makes `frame` the previous frame. */
  private changedFraction(frame: Uint8Array): number {
    const histogram = this.histogram;
    const previous = this.previous;
    histogram.fill(0);
    for (let i = 0; i < frame.length; i++) {
      const value = frame[i]!;
      histogram[value - previous[i]! + DIFF_OFFSET]!++;
      previous[i] = value;
    }
    // Auto exposure, clouds and lights switching on shift the whole picture at once: the median
    // change is taken as that shift, and a pixel counts when it departs from it. Motion moves
    // fewer than half of the pixels, so it never becomes the median.
    let median = 0;
    for (let seen = 0, half = frame.length / 2; median < histogram.length; median++) {
      seen += histogram[median]!;
      if (seen >= half) break;
    }
    let unchanged = 0;
    const low = Math.max(0, median - this.pixelDelta + 1);
    const high = Math.min(histogram.length - 1, median + this.pixelDelta - 1);
    for (let d = low; d <= high; d++) unchanged += histogram[d]!;
    return (frame.length - unchanged) / frame.length;
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
