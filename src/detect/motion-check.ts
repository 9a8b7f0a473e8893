import type { BaseLogger } from 'pino';
import { startStopwatch, type Mark, type Stopwatch } from '../domain/stopwatch.js';
import type { DetectedObject, EventType } from '../domain/types.js';
import { drawBox } from './annotate.js';
import { bestFramesSoFar, judgeSoFar, keptOf, type CheckRules, type Verdict } from './confirm.js';
import type { CheckAnswer, CheckRequest } from './detector-pool.js';
import { CheckDroppedError, DetectorUnavailableError } from './errors.js';
import { planRegions } from './regions.js';
import { SceneMemories } from './scene-memory.js';
import { observe, type JudgedObject, type SceneJudgement, type SceneRules } from './stationary.js';
import type { Box, Category, Detection, Frame, FrameSource, RawDetection } from './types.js';

// One motion start checked by the detector: frames from the camera (through the relay), the pool,
// the confirmation rules, what the camera's checks remember (stationary objects, loitering:
// stationary.ts), and a thumbnail of the best frame with its boxes drawn. What the recorder does
// with the answer (the alert's type, dropping unconfirmed motion) is the recorder's business.

/**
 * How a check ended: `confirmed` (a person or vehicle that alerts: `type`), `quiet` (people or
 * vehicles found, none of which alerts: stationary ones, a person not yet loitering long enough;
 * plain motion, the objects listed), `unconfirmed` (looked at, nothing found: plain motion), or
 * `unchecked` (dropped from the full queue, no frames, no detector: the event stays motion and is
 * never dropped, since nobody looked).
 */
export type CheckResult = 'confirmed' | 'quiet' | 'unconfirmed' | 'unchecked';

export interface DetectionOutcome {
  result: CheckResult;
  type: EventType;
  /**
   * The confirmed objects (each category's in its best frame; empty when none), boxes in 0–1 of the
   * frame, `stationary` marking those found where they were before.
   */
  detections: DetectedObject[];
  /** That frame as a JPEG with the boxes drawn (null when none): made after the answer, which does not wait for it. */
  thumbnail: Promise<Buffer | null>;
  /** Why a check was not made (unchecked), for the log. */
  reason: string | null;
  /** When each stage of the check ended (epoch ms, in order), for the log's latency timeline. */
  timeline: Mark[];
  /** A person has stayed a loitering zone's loitering_s: the alert is for that. */
  loitering: boolean;
  /** When to look again, with no motion (MotionChecker.check's recheck), to follow loitering; null: no need. */
  recheckAt: number | null;
}

/** Counted per outcome in /metrics: what happened to each motion start looked at. */
export type CheckCount = Category | 'quiet' | 'motion' | 'dropped' | 'no_frames' | 'failed' | 'unavailable';

export interface MotionCheckerOptions {
  /**
   * The pool (or any detector behind the same call), and its model's input side once known: where
   * a check looks (regions.ts), so that an object outside it is not taken for gone.
   */
  detector: { check(request: CheckRequest): Promise<CheckAnswer>; readonly inputSize?: number | null };
  /** The camera's frames from now on, as they come (relayFrames). */
  frames: (deviceId: string) => Promise<FrameSource>;
  /** Frames the rule is over (3 by default); fewer are looked at when they settle it. */
  frameCount?: number;
  /** The camera's rules: labels, min_score, threshold, zones; stationary objects and loitering (absent: off). */
  rules: (deviceId: string) => CheckRules & Partial<Omit<SceneRules, 'zones'>>;
  /** What each camera's checks remember (stationary objects, loitering); absent: in RAM only. */
  scene?: Pick<SceneMemories, 'judge'>;
  /** An RGB frame as a thumbnail JPEG. */
  encode: (frame: Frame) => Promise<Buffer>;
  /**
   * A looked-at frame that may become the thumbnail is kept scaled down to at least this width
   * (the thumbnail's: boxes are drawn in 0–1 of the frame, whatever its size), by the detector's
   * thread; absent: kept whole.
   */
  keptWidth?: number;
  logger: BaseLogger;
  /** `recheck`: a look no motion asked for (check's opts). */
  count?: (what: CheckCount, recheck: boolean) => void;
  /**
   * Most checks holding frames at once (being taken, queued or running): frames are taken only
   * when there is room, so memory is bounded even when every camera moves at once. Beyond it a
   * motion start is dropped at once (counted), before any frame is decoded. Unbounded by default.
   */
  maxInFlight?: number;
  now?: () => number;
}

const COLOURS: Record<Category, [number, number, number]> = { human: [255, 48, 48], vehicle: [255, 200, 0] };
/** A stationary object's box: seen, but not what the alert is about. */
const STATIONARY_COLOUR: [number, number, number] = [160, 160, 160];

/** One check's options: a recheck is a look that no motion asked for, to follow loitering (it alerts only for that). */
export interface CheckOptions {
  recheck?: boolean;
}

export class MotionChecker {
  private inFlight = 0;
  private heldBytes = 0;
  private readonly now: () => number;
  private readonly scene: Pick<SceneMemories, 'judge'>;

  constructor(private readonly opts: MotionCheckerOptions) {
    this.now = opts.now ?? Date.now;
    this.scene = opts.scene ?? new SceneMemories(null, opts.logger);
  }

  /** Checks holding frames now. */
  get checking(): number {
    return this.inFlight;
  }

  /**
   * Bytes of the decoded frames the checks hold now (taken from their sources, until the check and
   * its thumbnail are done). Each check holds its frame waiting for (or in) the detector whole, and
   * of the frames looked at only those that may become its thumbnail (a category's best so far, at
   * most two), scaled down to keptWidth: with the defaults, 17 × (2.8 MB + 2 × 0.7 MB) ≈ 71 MB
   * (1280×720 RGB, kept at 640×360) when every check waits.
   */
  get frameBytes(): number {
    return this.heldBytes;
  }

  /** Checks a motion start (or looks again: `recheck`); never rejects (a failure is an `unchecked` outcome). */
  async check(deviceId: string, where: (() => Box | null) | null, opts: CheckOptions = {}): Promise<DetectionOutcome> {
    const watch = startStopwatch(this.now);
    const recheck = opts.recheck ?? false;
    if (this.inFlight >= (this.opts.maxInFlight ?? Number.POSITIVE_INFINITY)) {
      return this.unchecked(
        { deviceId, recheck },
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
      outcome = await this.run({ deviceId, recheck }, where, watch, held);
      return outcome;
    } finally {
      // The best frame is held until its thumbnail is made.
      if (outcome) void outcome.thumbnail.finally(release);
      else release();
    }
  }

  private unchecked(check: Check, what: CheckCount, reason: string, watch: Stopwatch): DetectionOutcome {
    this.opts.count?.(what, check.recheck);
    if (check.recheck) this.opts.logger.debug({ device: check.deviceId, reason }, 'loitering not looked at again');
    else
      this.opts.logger.info({ device: check.deviceId, reason }, 'motion not checked by the detector: it stays motion');
    return { ...NOTHING, result: 'unchecked', reason, timeline: watch.marks() };
  }

  /**
   * Each frame goes to the detector as soon as it comes (the next one is being taken meanwhile),
   * and the check ends as soon as the frames seen settle the confirmation rule (judgeSoFar): with
   * 3 frames, 2 that agree. The thumbnail is made after the answer, which does not wait for it.
   */
  private async run(
    check: Check,
    where: (() => Box | null) | null,
    watch: Stopwatch,
    held: { bytes: number },
  ): Promise<DetectionOutcome> {
    const unchecked = (what: CheckCount, reason: string) => this.unchecked(check, what, reason, watch);
    const total = this.opts.frameCount ?? 3;
    const rules = this.opts.rules(check.deviceId);
    watch.mark('frames_requested');
    let source: FrameSource;
    try {
      source = await this.opts.frames(check.deviceId);
    } catch (err) {
      return unchecked('no_frames', (err as Error).message);
    }
    // A frame is dropped (null) once it cannot become the thumbnail: see keepOnlyBest.
    const frames: (Frame | null)[] = [];
    const raw: RawDetection[][] = [];
    const kept: Detection[][] = [];
    let looked: Box | null | undefined;
    let verdict: Verdict | null = null;
    try {
      while (verdict === null) {
        const frame = await source.next();
        if (!frame) break;
        frames.push(frame);
        held.bytes += frame.data.byteLength;
        this.heldBytes += frame.data.byteLength;
        watch.mark(`frame_${frames.length}`);
        // The area asked now: it grows while the frames are taken.
        const motion = where?.() ?? null;
        looked = unionOf(looked, this.lookedAt(frame, motion));
        const keptWidth = this.opts.keptWidth;
        try {
          const answer = await this.opts.detector.check({
            camera: check.deviceId,
            frames: [frame],
            motion,
            ...(keptWidth === undefined ? {} : { keptWidth }),
          });
          const found = answer.found[0] ?? [];
          raw.push(found);
          kept.push(keptOf(found, rules));
          this.keepOnlyBest(frames, answer.kept[0] ?? frame, kept, held);
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
    const sceneRules: SceneRules = {
      stationaryIou: rules.stationaryIou ?? null,
      zones: rules.zones,
      stationaryZones: rules.stationaryZones ?? [],
      loiteringZones: rules.loiteringZones ?? {},
    };
    const seen = observe(raw, rules, verdict, looked ?? null);
    const judged = this.scene.judge(check.deviceId, seen, sceneRules, this.now(), { recheck: check.recheck });
    return this.outcome(check, frames, seen.bestFrame, verdict, judged, watch);
  }

  /**
   * Once the detector has looked at the newest frame: it is replaced by its scaled-down copy (the
   * detector's answer, keptWidth), and the frames that can no longer become the thumbnail are let
   * go, so that a check waiting for the detector holds one whole frame and at most two small ones.
   */
  private keepOnlyBest(
    frames: (Frame | null)[],
    newest: Frame,
    kept: readonly Detection[][],
    held: { bytes: number },
  ): void {
    const hold = (bytes: number) => {
      held.bytes += bytes;
      this.heldBytes += bytes;
    };
    const last = frames.length - 1;
    hold(newest.data.byteLength - (frames[last]?.data.byteLength ?? 0));
    frames[last] = newest;
    const best = bestFramesSoFar(kept);
    frames.forEach((frame, i) => {
      if (frame && !best.has(i)) {
        frames[i] = null;
        hold(-frame.data.byteLength);
      }
    });
  }

  /** The outcome of a check that looked: what alerts, what is listed, the thumbnail, the count and the log. */
  private outcome(
    check: Check,
    frames: readonly (Frame | null)[],
    bestFrame: Partial<Record<Category, number>>,
    verdict: Verdict,
    judged: SceneJudgement,
    watch: Stopwatch,
  ): DetectionOutcome {
    const { deviceId, recheck } = check;
    const detections = judged.objects.map((d) => ({
      label: d.label,
      score: round(d.score, 3),
      box: roundBox(d.box),
      ...(d.stationary ? { stationary: true as const } : {}),
    }));
    const loitering = judged.loitering.length > 0 && judged.type === 'human';
    const facts = { medians: verdict.medians, frames: frames.length, detections, recheck, loitering: judged.loitering };
    const shown = judged.type ?? judged.objects[0]?.category ?? null;
    const frameIndex = shown === null ? undefined : bestFrame[shown];
    const frame = frameIndex === undefined ? null : frames[frameIndex];
    const result: CheckResult = judged.type !== null ? 'confirmed' : detections.length > 0 ? 'quiet' : 'unconfirmed';
    this.opts.count?.(judged.type ?? (result === 'quiet' ? 'quiet' : 'motion'), recheck);
    if (result === 'confirmed')
      this.opts.logger.info({ device: deviceId, type: judged.type, ...facts }, 'motion checked');
    else
      this.opts.logger.debug(
        { device: deviceId, ...facts },
        result === 'quiet' ? 'motion checked: nothing that alerts' : 'motion checked: no person or vehicle',
      );
    return {
      result,
      type: judged.type ?? 'motion',
      detections,
      thumbnail: frame ? this.thumbnail(deviceId, frame, judged.objects) : NO_THUMBNAIL,
      reason: null,
      timeline: watch.marks(),
      loitering,
      recheckAt: judged.recheckAt,
    };
  }

  /**
   * Where the detector looks in this frame for this moving area (the regions it is cut into), 0–1,
   * or null for all of it (no area: tiles of the whole frame; the model's size not known yet).
   */
  private lookedAt(frame: Frame, motion: Box | null): Box | null {
    const inputSize = this.opts.detector.inputSize;
    if (motion === null || !inputSize) return null;
    const regions = planRegions(frame.width, frame.height, motion, { inputSize });
    if (regions.length === 0) return null;
    const x1 = Math.min(...regions.map((r) => r.x));
    const y1 = Math.min(...regions.map((r) => r.y));
    const x2 = Math.max(...regions.map((r) => r.x + r.size));
    const y2 = Math.max(...regions.map((r) => r.y + r.size));
    if (x1 <= 0 && y1 <= 0 && x2 >= frame.width && y2 >= frame.height) return null;
    return { x: x1 / frame.width, y: y1 / frame.height, w: (x2 - x1) / frame.width, h: (y2 - y1) / frame.height };
  }

  private async thumbnail(deviceId: string, frame: Frame, objects: readonly JudgedObject[]): Promise<Buffer | null> {
    let picture = frame;
    const thickness = Math.max(2, Math.round(picture.width / 320));
    // The stationary boxes first, so that what the alert is about is drawn over them.
    const order = [...objects].sort((a, b) => Number(a.alerts) - Number(b.alerts));
    for (const d of order)
      picture = drawBox(picture, d.box, d.stationary && !d.alerts ? STATIONARY_COLOUR : COLOURS[d.category], thickness);
    return this.opts.encode(picture).catch((err: Error) => {
      this.opts.logger.warn({ device: deviceId, err: err.message }, 'the detection thumbnail could not be made');
      return null;
    });
  }
}

/** Which camera a check is of, and whether motion asked for it. */
interface Check {
  deviceId: string;
  recheck: boolean;
}

/** The smallest box holding both (null: the whole frame; undefined: nothing yet). */
function unionOf(a: Box | null | undefined, b: Box | null): Box | null {
  if (a === undefined) return b;
  if (a === null || b === null) return null;
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, w: Math.max(a.x + a.w, b.x + b.w) - x, h: Math.max(a.y + a.h, b.y + b.h) - y };
}

const NO_THUMBNAIL: Promise<Buffer | null> = Promise.resolve(null);
const NOTHING: Omit<DetectionOutcome, 'result' | 'reason' | 'timeline'> = {
  type: 'motion',
  detections: [],
  thumbnail: NO_THUMBNAIL,
  loitering: false,
  recheckAt: null,
};

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

function roundBox(b: Box): Box {
  return { x: round(b.x, 4), y: round(b.y, 4), w: round(b.w, 4), h: round(b.h, 4) };
}
