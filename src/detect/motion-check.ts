import type { BaseLogger } from 'pino';
import type { DetectedObject, EventType } from '../domain/types.js';
import { drawBox } from './annotate.js';
import { judgeCheck, type CheckRules } from './confirm.js';
import type { CheckRequest } from './detector-pool.js';
import { CheckDroppedError, DetectorUnavailableError } from './errors.js';
import type { Box, Category, Frame, RawDetection } from './types.js';

// One motion start checked by the detector: frames from the camera (through the relay), the pool,
// the confirmation rules, and a thumbnail of the best frame with its boxes drawn. What the recorder
// does with the answer (the alert's type, dropping unconfirmed motion) is the recorder's business.

/**
 * How a check ended: `confirmed` (a person or vehicle: `type`), `unconfirmed` (looked at, nothing
 * found: plain motion), or `unchecked` (dropped from the full queue, no frames, no detector: the
 * event stays motion and is never dropped, since nobody looked).
 */
export type CheckResult = 'confirmed' | 'unconfirmed' | 'unchecked';

export interface DetectionOutcome {
  result: CheckResult;
  type: EventType;
  /** The confirmed objects in the best frame (empty unless confirmed), boxes in 0–1 of the frame. */
  detections: DetectedObject[];
  /** That frame as a JPEG with the boxes drawn, or null. */
  thumbnail: Buffer | null;
  /** Why a check was not made (unchecked), for the log. */
  reason: string | null;
}

/** Counted per outcome in /metrics: what happened to each motion start looked at. */
export type CheckCount = Category | 'motion' | 'dropped' | 'no_frames' | 'failed' | 'unavailable';

export interface MotionCheckerOptions {
  /** The pool (or any detector behind the same call). */
  detector: { check(request: CheckRequest): Promise<RawDetection[][]> };
  /** A few frames of the camera now (grabFrames through the relay). */
  grab: (deviceId: string) => Promise<Frame[]>;
  /** The camera's rules: labels, min_score, threshold, zones. */
  rules: (deviceId: string) => CheckRules;
  /** An RGB frame as a thumbnail JPEG. */
  encode: (frame: Frame) => Promise<Buffer>;
  logger: BaseLogger;
  count?: (what: CheckCount) => void;
  /**
   * Most checks holding frames at once (being grabbed, queued or running): frames are taken only
   * when there is room, so memory is bounded even when every camera moves at once. Beyond it a
   * motion start is dropped at once (counted), before any frame is decoded. Unbounded by default.
   */
  maxInFlight?: number;
}

const COLOURS: Record<Category, [number, number, number]> = { human: [255, 48, 48], vehicle: [255, 200, 0] };

export class MotionChecker {
  private inFlight = 0;

  constructor(private readonly opts: MotionCheckerOptions) {}

  /** Checks holding frames now. */
  get checking(): number {
    return this.inFlight;
  }

  /** Checks a motion start; never rejects (a failure is an `unchecked` outcome). */
  async check(deviceId: string, where: (() => Box | null) | null): Promise<DetectionOutcome> {
    if (this.inFlight >= (this.opts.maxInFlight ?? Number.POSITIVE_INFINITY)) {
      return this.unchecked(deviceId, 'dropped', `${this.inFlight} checks are under way already (detection.queue_size + threads)`);
    }
    this.inFlight++;
    try {
      return await this.run(deviceId, where);
    } finally {
      this.inFlight--;
    }
  }

  private unchecked(deviceId: string, what: CheckCount, reason: string): DetectionOutcome {
    this.opts.count?.(what);
    this.opts.logger.info({ device: deviceId, reason }, 'motion not checked by the detector: it stays motion');
    return { result: 'unchecked', type: 'motion', detections: [], thumbnail: null, reason };
  }

  private async run(deviceId: string, where: (() => Box | null) | null): Promise<DetectionOutcome> {
    const unchecked = (what: CheckCount, reason: string) => this.unchecked(deviceId, what, reason);
    let frames: Frame[];
    try {
      frames = await this.opts.grab(deviceId);
    } catch (err) {
      return unchecked('no_frames', (err as Error).message);
    }
    let raw: RawDetection[][];
    try {
      // The area asked now, after the frames: it grew while they were taken.
      raw = await this.opts.detector.check({ camera: deviceId, frames, motion: where?.() ?? null });
    } catch (err) {
      const what: CheckCount = err instanceof CheckDroppedError ? 'dropped' : err instanceof DetectorUnavailableError ? 'unavailable' : 'failed';
      return unchecked(what, (err as Error).message);
    }
    const verdict = judgeCheck(raw, this.opts.rules(deviceId));
    if (verdict.type === null || verdict.bestFrame === null) {
      this.opts.count?.('motion');
      this.opts.logger.debug({ device: deviceId, medians: verdict.medians }, 'motion checked: no person or vehicle');
      return { result: 'unconfirmed', type: 'motion', detections: [], thumbnail: null, reason: null };
    }
    this.opts.count?.(verdict.type);
    const detections = verdict.detections.map((d) => ({ label: d.label, score: round(d.score, 3), box: roundBox(d.box) }));
    let picture = frames[verdict.bestFrame]!;
    const thickness = Math.max(2, Math.round(picture.width / 320));
    for (const d of verdict.detections) picture = drawBox(picture, d.box, COLOURS[d.category], thickness);
    const thumbnail = await this.opts.encode(picture).catch((err: Error) => {
      this.opts.logger.warn({ device: deviceId, err: err.message }, 'the detection thumbnail could not be made');
      return null;
    });
    this.opts.logger.info({ device: deviceId, type: verdict.type, medians: verdict.medians, detections }, 'motion checked');
    return { result: 'confirmed', type: verdict.type, detections, thumbnail, reason: null };
  }
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function roundBox(b: Box): Box {
  return { x: round(b.x, 4), y: round(b.y, 4), w: round(b.w, 4), h: round(b.h, 4) };
}
