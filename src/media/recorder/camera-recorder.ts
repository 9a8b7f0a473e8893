import path from 'node:path';
import type { BaseLogger } from 'pino';
import type { DetectionOutcome } from '../../detect/motion-check.js';
import type { Box } from '../../detect/types.js';
import { EVENT_TYPE_LABELS } from '../../domain/event-labels.js';
import { newId } from '../../domain/ids.js';
import { timeSince } from '../../domain/stopwatch.js';
import type { DetectedObject, EventType } from '../../domain/types.js';
import type { InFlightClip, NewRecording, PartOutcome } from '../../store/store.js';
import { audioModeFor, removeClip, writeClip, writeThumbnail, writeThumbnailJpeg } from './clip-writer.js';
import { EpisodeTracker, type ClipCut } from './episodes.js';
import { bootTime } from './recovery.js';
import { Segmenter, type ClipFootage, type RecorderStream } from './segmenter.js';

// One camera's recording: the segmenter keeps the last seconds in RAM; events become episodes
// (EpisodeTracker); each episode gets one alert at once, and each of its clip parts is assembled
// from the segments once the footage up to its end is there. Nothing reaches the storage
// directory without an event.

/**
 * What the recorder writes to the store (a subset of Store, so tests can see it). Each episode is
 * journalled (open_episodes) so a restart after a crash knows what was being recorded: a row with
 * the alert, one update when a part's assembly begins, and its removal with the last part's row.
 */
export interface RecorderStore {
  openEpisode(
    a: {
      id: string;
      deviceId: string;
      type: EventType;
      message: string;
      createdAt: number;
      detections?: DetectedObject[];
    },
    e: { segmentDir: string; bootAt: number; fromAt: number },
  ): unknown;
  setAlertType(id: string, type: EventType, message: string, now?: number, detections?: DetectedObject[]): void;
  beginClip(alertId: string, clip: InFlightClip): void;
  saveRecording(r: NewRecording, now?: number, part?: PartOutcome): unknown;
  settleEpisodePart(alertId: string, part: PartOutcome): void;
}

export interface CameraRecorderOptions {
  deviceId: string;
  deviceName: () => string;
  ffmpegPath: string;
  /** This camera's RAM directory for segments. */
  segmentDir: string;
  storageDir: string;
  /** The camera's main stream through the relay (see Segmenter). */
  acquire: () => Promise<RecorderStream>;
  store: RecorderStore;
  logger: BaseLogger;
  preRollMs: number;
  postRollMs: number;
  maxClipMs: number;
  /** Runs clip assembly one at a time across cameras (an SD card writes one thing well). */
  serialize: <T>(job: () => Promise<T>) => Promise<T>;
  /** Longest wait for the footage of a clip's end before writing what there is (a dead camera). */
  footageWaitMs?: number;
  now?: () => number;
  /** When the machine booted (ms): a restart on another boot knows its RAM segments are gone. */
  bootAt?: number;
  /** The object detector for motion starts (docs/detection.md), or null: none. */
  detection?: RecorderDetection | null;
}

export interface RecorderDetection {
  /** Whether this camera's motion is checked now (detection mode, and whether the camera reports people itself). */
  wanted: () => boolean;
  /** Checks a motion start; never rejects. `where` tells where the picture moved (null: ONVIF motion, no where). */
  check: (where: (() => Box | null) | null) => Promise<DetectionOutcome>;
  /**
   * Looks again with no motion, when an outcome's recheckAt asks (a person standing still in a
   * loitering zone makes none); never rejects. Confirmed only for a loitering alert.
   */
  recheck: () => Promise<DetectionOutcome>;
  /** Motion in which nothing was found: kept as a motion event, or dropped (no alert, no clip). */
  unconfirmed: 'keep' | 'drop';
  /** Longest an alert waits for its check; then it is created as motion and a later finding upgrades it. */
  maxWaitMs: number;
}

/** An episode whose motion start is being checked: its alert waits for the answer (at most maxWaitMs). */
interface Pending {
  /** The episode's type from the camera's events meanwhile (a camera's own human event upgrades it). */
  type: EventType;
  at: number;
  fromAt: number;
  decided: Promise<void>;
  /** Decides with the check's outcome, or with none (took too long, or the recorder stops): motion. */
  settle: (outcome: DetectionOutcome | null) => void;
}

/**
 * What the check of an episode found, for its recordings and thumbnail: `motion` when it found
 * only objects that make no alert (stationary), listed all the same.
 */
interface Finding {
  type: EventType;
  /** A person stayed a loitering zone's loitering_s. */
  loitering: boolean;
  detections: DetectedObject[];
  /** The detector's boxed picture, made after its answer (DetectionOutcome.thumbnail). */
  thumbnail: Promise<Buffer | null> | null;
}

/** What the recorder keeps of one episode, from its first start until its last part is written (or dropped). */
interface Episode {
  /**
   * Its alert, and the alert's type so that a late finding only ever makes it more specific; null until written (or
   * when writing it failed).
   */
  alert: { id: string; type: EventType } | null;
  /** While its alert waits for the detector. */
  pending: Pending | null;
  /** What the detector found in it. */
  finding: Finding | null;
  /** The detector looked and found nothing, with unconfirmed: drop: none of its parts is written. */
  dropped: boolean;
}

const SPECIFICITY: Record<EventType, number> = { motion: 0, vehicle: 1, human: 2 };
const moreSpecific = (a: EventType, b: EventType): EventType => (SPECIFICITY[b] > SPECIFICITY[a] ? b : a);

const NO_FOOTAGE = 'no footage of the event: the camera stream was down';
const STREAM_ENDED = 'the camera stream ended before the event did: the clip ends there';

const messageOf = (type: EventType, name: string) => `${EVENT_TYPE_LABELS[type]} detected by ${name}`;
// The detector's findings name the place, as the people watching say it: "Person detected at Front door".
const foundMessageOf = (type: EventType, name: string) => `${EVENT_TYPE_LABELS[type]} detected at ${name}`;
const findingMessageOf = (f: Finding, name: string) =>
  f.loitering ? `${EVENT_TYPE_LABELS.human} loitering at ${name}` : foundMessageOf(f.type, name);

/** What a check that looked found (objects that alert, or only ones that do not); null: nothing, or nobody looked. */
function findingOf(outcome: DetectionOutcome | null): Finding | null {
  if (!outcome || (outcome.result !== 'confirmed' && outcome.result !== 'quiet')) return null;
  const { type, loitering, detections, thumbnail } = outcome;
  return { type, loitering, detections, thumbnail };
}

/** The finding that says more: the more specific type, else the newer (`b`). */
const moreTelling = (a: Finding | null, b: Finding | null): Finding | null =>
  a === null || (b !== null && SPECIFICITY[b.type] >= SPECIFICITY[a.type]) ? b : a;

export class CameraRecorder {
  private readonly segmenter: Segmenter;
  private readonly tracker: EpisodeTracker;
  private readonly episodes = new Map<number, Episode>();
  /** Cuts not yet written (queued or being written): their segments must stay. */
  private readonly unwritten = new Set<ClipCut>();
  private queue: Promise<void> = Promise.resolve();
  private readonly ticker: NodeJS.Timeout;
  /** A tick at the moment the tracker's next part is due (the periodic one comes up to 250 ms later). */
  private dueTimer: NodeJS.Timeout | null = null;
  private dueAt: number | null = null;
  private readonly now: () => number;
  private stopped = false;
  /** The next look with no motion (loitering), when an outcome asked for one. */
  private recheckTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: CameraRecorderOptions) {
    this.now = opts.now ?? Date.now;
    this.tracker = new EpisodeTracker({
      preRollMs: opts.preRollMs,
      postRollMs: opts.postRollMs,
      maxClipMs: opts.maxClipMs,
    });
    this.segmenter = new Segmenter({
      deviceId: opts.deviceId,
      dir: opts.segmentDir,
      acquire: opts.acquire,
      logger: opts.logger,
    });
    this.ticker = setInterval(() => this.tick(), 250);
    this.ticker.unref();
  }

  /** `where` (a software motion start) tells where the picture moved, for the detector's crops. */
  event(kind: EventType, phase: 'start' | 'stop', at: number, where?: () => Box | null): void {
    if (this.stopped) return;
    this.opts.logger.debug({ device: this.opts.deviceId, kind, phase, at }, 'recorder: event');
    for (const change of this.tracker.event({ kind, phase, at })) {
      if (change.type === 'opened') {
        const fromAt = this.tracker.current?.from ?? change.at;
        const detection = this.opts.detection;
        const episode: Episode = { alert: null, pending: null, finding: null, dropped: false };
        this.episodes.set(change.episode, episode);
        if (change.eventType === 'motion' && detection?.wanted())
          this.check(detection, change.episode, episode, change.at, fromAt, where ?? null);
        else this.openAlert(episode, change.eventType, change.at, fromAt, null);
      } else {
        const episode = this.episodes.get(change.episode);
        const waiting = episode?.pending;
        if (waiting) waiting.type = moreSpecific(waiting.type, change.eventType);
        const alert = episode?.alert;
        if (alert) alert.type = change.eventType;
        if (alert)
          this.opts.store.setAlertType(alert.id, change.eventType, messageOf(change.eventType, this.opts.deviceName()));
      }
    }
    this.tick();
  }

  /** The episode's alert (and its crash journal row); a failure loses the alert, never the clip. */
  private openAlert(episode: Episode, type: EventType, at: number, fromAt: number, finding: Finding | null): void {
    const id = newId('alr');
    const name = this.opts.deviceName();
    const found = finding !== null && finding.type !== 'motion' && SPECIFICITY[finding.type] >= SPECIFICITY[type];
    try {
      this.opts.store.openEpisode(
        {
          id,
          deviceId: this.opts.deviceId,
          type,
          message: found ? findingMessageOf(finding, name) : messageOf(type, name),
          createdAt: at,
          ...(finding ? { detections: finding.detections } : {}),
        },
        { segmentDir: this.opts.segmentDir, bootAt: this.opts.bootAt ?? bootTime(), fromAt },
      );
      episode.alert = { id, type };
    } catch (err) {
      // The clip is still recorded (a full disk may have room by then), only without its alert.
      this.opts.logger.error(
        { device: this.opts.deviceId, err: (err as Error).message },
        'the alert of an event could not be written',
      );
    }
  }

  /**
   * A motion start goes to the detector; the alert waits for the answer, at most maxWaitMs (then
   * it is created as motion, and a person found later upgrades it). The clip never waits longer:
   * its writing waits for the same decision, and the footage stays in RAM meanwhile.
   */
  private check(
    detection: RecorderDetection,
    episodeId: number,
    episode: Episode,
    at: number,
    fromAt: number,
    where: (() => Box | null) | null,
  ): void {
    let decide!: () => void;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    const settle = (outcome: DetectionOutcome | null) => {
      if (episode.pending !== waiting) return this.lateFinding(episodeId, outcome);
      clearTimeout(timer);
      episode.pending = null;
      decide();
      this.planRecheck(outcome);
      // A loitering alert that came while this check ran (loiteringFound) is kept unless this says as much.
      const finding = moreTelling(episode.finding, findingOf(outcome));
      episode.finding = finding;
      const quiet = outcome?.result === 'unconfirmed' || outcome?.result === 'quiet';
      if (
        quiet &&
        detection.unconfirmed === 'drop' &&
        moreSpecific(waiting.type, finding?.type ?? 'motion') === 'motion'
      ) {
        episode.dropped = true;
        this.opts.logger.info(
          { device: this.opts.deviceId, episode: episodeId },
          outcome?.result === 'quiet'
            ? 'motion with only objects that make no alert dropped (detection.unconfirmed: drop)'
            : 'motion without a person or vehicle dropped (detection.unconfirmed: drop)',
        );
        return;
      }
      const type = moreSpecific(waiting.type, finding?.type ?? 'motion');
      this.openAlert(episode, type, waiting.at, waiting.fromAt, finding);
      this.logTimeline(episodeId, type, waiting.at, outcome);
    };
    const waiting: Pending = { type: 'motion', at, fromAt, decided, settle };
    episode.pending = waiting;
    const timer = setTimeout(() => settle(null), detection.maxWaitMs);
    timer.unref();
    void detection.check(where).then(settle, () => settle(null));
  }

  /**
   * Where the time from motion start to alert went (ms after the motion start, per stage): the
   * latency goal of docs/detection.md is checked against these lines (bench/detect-latency.ts).
   */
  private logTimeline(episode: number, type: EventType, at: number, outcome: DetectionOutcome | null): void {
    const ms = timeSince(at, [...(outcome?.timeline ?? []), ['alert_written', this.now()]]);
    this.opts.logger.info(
      { device: this.opts.deviceId, episode, type, result: outcome?.result ?? 'timed_out', ms },
      'motion check timeline',
    );
  }

  /**
   * A finding after the alert was made as motion (the check took longer than maxWaitMs, or a look
   * again found someone loitering during the episode): it upgrades the alert.
   */
  private lateFinding(episode: number, outcome: DetectionOutcome | null): void {
    this.planRecheck(outcome);
    if (!outcome || outcome.result !== 'confirmed') return;
    const finding = findingOf(outcome)!;
    // No episode: its last part is written already, and the alert with it.
    const open = this.episodes.get(episode);
    const alert = open?.alert;
    if (!open || !alert || moreSpecific(alert.type, outcome.type) !== outcome.type) return;
    alert.type = outcome.type;
    open.finding = finding;
    this.opts.store.setAlertType(
      alert.id,
      outcome.type,
      findingMessageOf(finding, this.opts.deviceName()),
      undefined,
      outcome.detections,
    );
  }

  /**
   * Looks again when the outcome asks (recheckAt), replacing any look planned: the newest check
   * knows best who is in view. An outcome of a check that did not look leaves the plan as it is.
   */
  private planRecheck(outcome: DetectionOutcome | null): void {
    const detection = this.opts.detection;
    if (!detection || !outcome || outcome.result === 'unchecked') return;
    if (this.recheckTimer) clearTimeout(this.recheckTimer);
    this.recheckTimer = null;
    if (outcome.recheckAt === null || this.stopped) return;
    this.recheckTimer = setTimeout(() => this.recheck(detection), Math.max(0, outcome.recheckAt - this.now()));
    this.recheckTimer.unref();
  }

  private recheck(detection: RecorderDetection): void {
    this.recheckTimer = null;
    if (this.stopped || !detection.wanted()) return;
    void detection.recheck().then((outcome) => {
      if (this.stopped) return;
      this.planRecheck(outcome);
      if (outcome.result === 'confirmed') this.loiteringFound(outcome);
    });
  }

  /**
   * A look with no motion found someone loitering: an alert of its own, with a clip of the moments
   * around it (pre- and post-roll), or, during an episode, that episode's alert tells of it.
   */
  private loiteringFound(outcome: DetectionOutcome): void {
    const finding = findingOf(outcome)!;
    const during = this.tracker.current?.episode;
    if (during !== undefined) {
      const open = this.episodes.get(during);
      // Its alert, still waiting for its own check, is written with this (check's settle).
      if (open?.pending) open.finding = moreTelling(open.finding, finding);
      else this.lateFinding(during, outcome);
      return;
    }
    const at = this.now();
    for (const change of this.tracker.event({ kind: outcome.type, phase: 'start', at })) {
      if (change.type !== 'opened') continue;
      const episode: Episode = { alert: null, pending: null, finding, dropped: false };
      this.episodes.set(change.episode, episode);
      this.openAlert(episode, outcome.type, change.at, this.tracker.current?.from ?? change.at, finding);
    }
    this.tracker.event({ kind: outcome.type, phase: 'stop', at });
    this.tick();
  }

  /** Bytes of footage held in RAM segments now (Segmenter.ramBytes). */
  get ramBytes(): number {
    return this.segmenter.ramBytes;
  }

  /** The camera went offline: the open episode ends now with what was received. */
  cameraLost(at: number): void {
    this.enqueue(this.tracker.abort(at));
  }

  private tick(): void {
    if (this.stopped) return;
    const now = this.now();
    this.enqueue(this.tracker.tick(now));
    // Keep the pre-roll plus a margin for one long GOP, and whatever a pending clip needs: the open
    // episode's part not yet handed out and the parts handed out but not yet written.
    let keepFrom = this.tracker.pendingFrom;
    for (const cut of this.unwritten) keepFrom = keepFrom === null ? cut.from : Math.min(keepFrom, cut.from);
    this.segmenter.prune(now - this.opts.preRollMs - 10_000, keepFrom);
    this.armDue();
  }

  private armDue(): void {
    const due = this.tracker.nextDueAt();
    if (due === this.dueAt) return;
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimer = null;
    this.dueAt = due;
    if (due === null) return;
    this.dueTimer = setTimeout(
      () => {
        this.dueTimer = null;
        this.dueAt = null;
        this.tick();
      },
      Math.max(0, due - this.now()),
    );
    this.dueTimer.unref();
  }

  private enqueue(cuts: ClipCut[]): void {
    for (const cut of cuts) {
      this.unwritten.add(cut);
      this.queue = this.queue.then(() => this.write(cut)).finally(() => this.unwritten.delete(cut));
    }
  }

  private async write(cut: ClipCut): Promise<void> {
    // A clip waits for its episode's check at most maxWaitMs (the alert must exist first).
    await this.episodes.get(cut.episode)?.pending?.decided;
    const episode = this.episodes.get(cut.episode);
    // From here a late finding no longer upgrades the alert: its last part is being written.
    if (cut.final) this.episodes.delete(cut.episode);
    const finding = episode?.finding ?? null;
    if (episode?.dropped) {
      this.opts.logger.debug(
        { device: this.opts.deviceId, episode: cut.episode, part: cut.part },
        'clip of dropped motion not written',
      );
      return;
    }
    const alertId = episode?.alert?.id ?? null;
    const part = { final: cut.final, nextFrom: cut.to };
    /** The part ends without a clip: the alert learns why (and the episode moves on). */
    const settle = (note: string | null) => this.settlePart(alertId, { ...part, note });
    // A sliver after a part already written (a stop reported late) is no clip worth a file.
    if (cut.part > 0 && cut.to - cut.from < 1000) return settle(null);
    const where = { device: this.opts.deviceId, episode: cut.episode, part: cut.part };
    const log = this.opts.logger;
    const footage = await this.segmenter.footageFor(cut.from, cut.to, this.opts.footageWaitMs ?? 8000);
    if (!footage) {
      log.warn({ ...where, from: cut.from, to: cut.to }, 'no footage for the event (the camera stream was down)');
      return settle(NO_FOOTAGE);
    }
    try {
      await this.assemble(cut, footage, { finding, alertId, part, settle, where });
    } finally {
      footage.release();
    }
  }

  /** The clip of a part from its footage, its row, then its thumbnail; a failure settles the part with why. */
  private async assemble(
    cut: ClipCut,
    { selection, audio }: Pick<ClipFootage, 'selection' | 'audio'>,
    ctx: {
      finding: Finding | null;
      alertId: string | null;
      part: { final: boolean; nextFrom: number };
      settle: (note: string | null) => void;
      where: { device: string; episode: number; part: number };
    },
  ): Promise<void> {
    const { finding, alertId, part, settle, where } = ctx;
    const log = this.opts.logger;
    const endAt = Math.min(cut.to, selection.endAt);
    log.debug(
      { ...where, from: cut.from, to: cut.to, startAt: selection.startAt, segments: selection.segments.length, endAt },
      'clip footage chosen',
    );
    const durationS = (endAt - selection.startAt) / 1000;
    const id = newId('rec');
    const fileName = `${this.opts.deviceId}/${id}.mp4`;
    const files = selection.segments.map((s) => ({ path: this.segmenter.file(s.file), durationS: s.durationS }));
    const first = files[0];
    if (durationS <= 0 || !first) return settle(NO_FOOTAGE);
    // What the detector found is the episode's, from its start: every part is listed under it.
    const eventType = moreSpecific(cut.eventType, finding?.type ?? 'motion');
    try {
      if (alertId)
        this.opts.store.beginClip(alertId, {
          id,
          startedAt: Math.round(selection.startAt),
          endedAt: Math.round(endAt),
          to: cut.to,
          eventType,
          final: cut.final,
        });
    } catch (err) {
      // Only the crash journal is behind; the clip is still written.
      log.error({ ...where, err: (err as Error).message }, 'the start of a clip could not be journalled');
    }
    try {
      // Footage that ended before the part (the stream died) is taken whole: a segment's listed end
      // is its last frame's start, so a cut at it would drop that frame, and nothing follows it.
      const cutS = endAt < cut.to ? durationS + 1 : durationS;
      const written = await this.opts.serialize(() =>
        writeClip({
          ffmpegPath: this.opts.ffmpegPath,
          scratchDir: path.dirname(first.path),
          segments: files,
          durationS: cutS,
          audio: audioModeFor(audio),
          storageDir: this.opts.storageDir,
          fileName,
        }),
      );
      try {
        const recording = {
          id,
          deviceId: this.opts.deviceId,
          eventType,
          startedAt: Math.round(selection.startAt),
          endedAt: Math.round(endAt),
          sizeBytes: written.sizeBytes,
          fileName,
          alertId,
        };
        this.opts.store.saveRecording({ ...recording, detections: finding?.detections ?? [] }, undefined, {
          ...part,
          // The footage stopped short of the part's end (the stream died and did not come back in time).
          note: endAt < cut.to - 1000 ? STREAM_ENDED : null,
        });
      } catch (err) {
        // No row (a full disk fails SQLite too): the clip must not stay behind unlisted.
        await removeClip(this.opts.storageDir, fileName);
        throw err;
      }
      log.info(
        { ...where, recording: id, seconds: Math.round(durationS * 10) / 10, bytes: written.sizeBytes },
        'clip recorded',
      );
      await this.thumbnail(
        fileName,
        cut.part === 0 ? finding : null,
        (cut.triggeredAt - selection.startAt) / 1000,
        durationS,
      );
    } catch (err) {
      log.error({ ...where, err: (err as Error).message }, 'clip could not be written');
      settle(`the clip could not be written: ${(err as Error).message}`.slice(0, 300));
    }
  }

  private settlePart(alertId: string | null, outcome: { final: boolean; nextFrom: number; note: string | null }): void {
    if (!alertId) return;
    try {
      this.opts.store.settleEpisodePart(alertId, outcome);
    } catch (err) {
      this.opts.logger.error(
        { device: this.opts.deviceId, alert: alertId, err: (err as Error).message },
        'the recording status of an alert could not be written',
      );
    }
  }

  /** The clip's thumbnail: what the detector found, its box drawn (`finding`), else a frame of its own at atS. */
  private async thumbnail(
    fileName: string,
    finding: Pick<Finding, 'thumbnail'> | null,
    atS: number,
    durationS: number,
  ): Promise<void> {
    const boxed = finding ? await finding.thumbnail : null;
    if (boxed) {
      await writeThumbnailJpeg(this.opts.storageDir, fileName, boxed);
      return;
    }
    await writeThumbnail({
      ffmpegPath: this.opts.ffmpegPath,
      storageDir: this.opts.storageDir,
      fileName,
      atS,
      durationS,
    });
  }

  /** Ends the open episode now, writes what is pending, stops reading the stream and frees the RAM. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    // Checks still running are not waited for: their episodes' alerts are made as motion now.
    for (const episode of [...this.episodes.values()]) episode.pending?.settle(null);
    this.enqueue(this.tracker.abort(this.now()));
    this.stopped = true;
    clearInterval(this.ticker);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    if (this.recheckTimer) clearTimeout(this.recheckTimer);
    await this.segmenter.stop();
    await this.queue;
    this.segmenter.removeFiles();
  }
}
