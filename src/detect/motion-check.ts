import type { BaseLogger } from 'pino';
import { startStopwatch, type Mark, type Stopwatch } from '../domain/stopwatch.js';
import type { DetectedObject, EventType } from '../domain/types.js';
import { drawBox } from './annotate.js';
import { judgeSoFar, type CheckRules, type Verdict } from './confirm.js';
import type { CheckRequest } from './detector-pool.js';
import { CheckDroppedError, DetectorUnavailableError } from './errors.js';
import type { Box, Category, Frame, FrameSource, RawDetection } from './types.js';

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
  /** That frame as a JPEG with the boxes drawn (null when none): made after the answer, which does not wait for it. */
  thumbnail: Promise<Buffer | null>;
  /** Why a check was not made (unchecked), for the log. */
  reason: string | null;
  /** When each stage of the check ended (epoch ms, in order), for the log's latency timeline. */
  timeline: Mark[];
}

/** Counted per outcome in /metrics: what happened to each motion start looked at. */
export type CheckCount = Category | 'motion' | 'dropped' | 'no_frames' | 'failed' | 'unavailable';

export interface MotionCheckerOptions {
  /** The pool (or any detector behind the same call). */
  detector: { check(request: CheckRequest): Promise<RawDetection[][]> };
  /** The camera's frames from now on, as they come (relayFrames). */
  frames: (deviceId: string) => Promise<FrameSource>;
  /** Frames the rule is over (3 by default); fewer are looked at when they settle it. */
  frameCount?: number;
  /** The camera's rules: labels, min_score, threshold, zones. */
  rules: (deviceId: string) => CheckRules;
  /** An RGB frame as a thumbnail JPEG. */
  encode: (frame: Frame) => Promise<Buffer>;
  logger: BaseLogger;
  count?: (what: CheckCount) => void;
  /**
   * Most checks holding frames at once (being taken, queued or running): frames are taken only
   * when there is room, so memory is bounded even when every camera moves at once. Beyond it a
   * motion start is dropped at once (counted), before any frame is decoded. Unbounded by default.
   */
  maxInFlight?: number;
  now?: () => number;
}

const COLOURS: Record<Category, [number, number, number]> = { human: [255, 48, 48], vehicle: [255, 200, 0] };

export class MotionChecker {
  private inFlight = 0;
  private heldBytes = 0;
  private readonly now: () => number;

  constructor(private readonly opts: MotionCheckerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Checks holding frames now. */
  get checking(): number {
    return this.inFlight;
  }

  /**
   * Bytes of the decoded frames the checks hold now (taken from their sources, until the check and
   * its thumbnail are done). At most maxInFlight × frameCount frames of at most the decoder's width:
   * with the defaults, 17 × 3 × 2.8 MB (1280×720 RGB) ≈ 140 MB when every check waits.
   */
  get frameBytes(): number {
    return this.heldBytes;
  }

  /** Checks a motion start; never rejects (a failure is an `unchecked` outcome). */
  async check(deviceId: string, where: (() => Box | null) | null): Promise<DetectionOutcome> {
    const watch = startStopwatch(this.now);
    if (this.inFlight >= (this.opts.maxInFlight ?? Number.POSITIVE_INFINITY)) {
      return this.unchecked(
        deviceId,
        'dropped',
        `${this.inFlight} checks are under way already (detection.queue_size + threads)`,
        watch,
      );
    }
    this.inFlight++;
    const held = { bytes: 0 };
    const release = () => {
      this.inFlight--;
      this.heldBytes -= held.bytes;
    };
    let outcome: DetectionOutcome | null = null;
    try {
      outcome = await this.run(deviceId, where, watch, held);
      return outcome;
    } finally {
      // The best frame is held until its thumbnail is made.
      if (outcome) void outcome.thumbnail.finally(release);
      else release();
    }
  }

  private unchecked(deviceId: string, what: CheckCount, reason: string, watch: Stopwatch): DetectionOutcome {
    this.opts.count?.(what);
    this.opts.logger.info({ device: deviceId, reason }, 'motion not checked by the detector: it stays motion');
    const timeline = watch.marks();
    return { result: 'unchecked', type: 'motion', detections: [], thumbnail: NO_THUMBNAIL, reason, timeline };
  }

  /**
   * Each frame goes to the detector as soon as it comes (the next one is being taken meanwhile),
   * and the check ends as soon as the frames seen settle the confirmation rule (judgeSoFar): with
   * 3 frames, 2 that agree. The thumbnail is made after the answer, which does not wait for it.
   */
  private async run(
    deviceId: string,
    where: (() => Box | null) | null,
    watch: Stopwatch,
    held: { bytes: number },
  ): Promise<DetectionOutcome> {
    const unchecked = (what: CheckCount, reason: string) => this.unchecked(deviceId, what, reason, watch);
    const total = this.opts.frameCount ?? 3;
    const rules = this.opts.rules(deviceId);
    watch.mark('frames_requested');
    let source: FrameSource;
    try {
      source = await this.opts.frames(deviceId);
    } catch (err) {
      return unchecked('no_frames', (err as Error).message);
    }
    const frames: Frame[] = [];
    const raw: RawDetection[][] = [];
    let verdict: Verdict | null = null;
    try {
      while (verdict === null) {
        const frame = await source.next();
        if (!frame) break;
        frames.push(frame);
        held.bytes += frame.data.byteLength;
        this.heldBytes += frame.data.byteLength;
        watch.mark(`frame_${frames.length}`);
        try {
          // The area asked now: it grows while the frames are taken.
          const [found] = await this.opts.detector.check({
            camera: deviceId,
            frames: [frame],
            motion: where?.() ?? null,
          });
          raw.push(found ?? []);
        } catch (err) {
          const what: CheckCount =
            err instanceof CheckDroppedError
              ? 'dropped'
              : err instanceof DetectorUnavailableError
                ? 'unavailable'
                : 'failed';
          return unchecked(what, (err as Error).message);
        }
        watch.mark(`inference_${raw.length}`);
        verdict = judgeSoFar(raw, total, rules);
      }
    } finally {
      source.close();
    }
    if (verdict === null) {
      // The stream ended before the frames could settle the rule: nobody can tell, it stays motion.
      const why = source.ended ?? 'the stream gave no frame';
      return unchecked(
        'no_frames',
        frames.length === 0
          ? `no frame from the stream: ${why}`
          : `${frames.length} of ${total} frames, too few to decide: ${why}`,
      );
    }
    watch.mark('decided');
    if (verdict.type === null || verdict.bestFrame === null) {
      this.opts.count?.('motion');
      this.opts.logger.debug(
        { device: deviceId, medians: verdict.medians, frames: frames.length },
        'motion checked: no person or vehicle',
      );
      const timeline = watch.marks();
      return { result: 'unconfirmed', type: 'motion', detections: [], thumbnail: NO_THUMBNAIL, reason: null, timeline };
    }
    this.opts.count?.(verdict.type);
    const detections = verdict.detections.map((d) => ({
      label: d.label,
      score: round(d.score, 3),
      box: roundBox(d.box),
    }));
    this.opts.logger.info(
      { device: deviceId, type: verdict.type, medians: verdict.medians, frames: frames.length, detections },
      'motion checked',
    );
    return {
      result: 'confirmed',
      type: verdict.type,
      detections,
      thumbnail: this.thumbnail(deviceId, frames[verdict.bestFrame]!, verdict),
      reason: null,
      timeline: watch.marks(),
    };
  }

  private async thumbnail(deviceId: string, frame: Frame, verdict: Verdict): Promise<Buffer | null> {
    let picture = frame;
    const thickness = Math.max(2, Math.round(picture.width / 320));
    for (const d of verdict.detections) picture = drawBox(picture, d.box, COLOURS[d.category], thickness);
    return this.opts.encode(picture).catch((err: Error) => {
      this.opts.logger.warn({ device: deviceId, err: err.message }, 'the detection thumbnail could not be made');
      return null;
    });
  }
}

const NO_THUMBNAIL: Promise<Buffer | null> = Promise.resolve(null);

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function roundBox(b: Box): Box {
  return { x: round(b.x, 4), y: round(b.y, 4), w: round(b.w, 4), h: round(b.h, 4) };
}
