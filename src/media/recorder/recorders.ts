import { rmdirSync } from 'node:fs';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import type { DetectionOutcome } from '../../detect/motion-check.js';
import type { Box } from '../../detect/types.js';
import type { Polygon } from '../../domain/polygon.js';
import type { EventType } from '../../domain/types.js';
import { CameraRecorder, type CameraRecorderOptions, type RecorderStore } from './camera-recorder.js';
import { MotionWatcher } from './motion-watcher.js';
import type { RecorderStream } from './segmenter.js';

// The recorder part: one CameraRecorder per online camera with a main stream, started and
// stopped as cameras come and go; events routed to them; clip assembly one at a time.

export interface RecordersOptions {
  store: RecorderStore;
  deviceName: (deviceId: string) => string;
  /** Whether the device has a main stream the relay can open. */
  hasStream: (deviceId: string) => boolean;
  /** The device's main stream through the relay; rejects while it cannot be opened. */
  acquire: (deviceId: string) => Promise<RecorderStream>;
  ffmpegPath: string;
  /** RAM directory; each camera gets a folder inside. */
  segmentRoot: string;
  storageDir: string;
  preRollMs: number;
  postRollMs: number;
  maxClipMs: number;
  logger: BaseLogger;
  /** Called after each clip write attempt (retention checks free space then). */
  afterClip?: () => void;
  motion: {
    mode: 'auto' | 'on' | 'off';
    threshold: number;
    fps: number;
    /** Whether the camera's own event subscription is open (auto mode watches those without). */
    hasOwnEvents: (deviceId: string) => boolean;
    /** A relay URL (recorder ticket) of the stream to watch: the sub stream where there is one. */
    inputUrl: (deviceId: string) => string;
    /** How often auto mode looks again (a camera's subscription comes up within seconds of adoption). */
    checkMs?: number;
    /** Where a camera's software motion is ignored (cameras[].motion_mask). */
    mask?: (deviceId: string) => readonly Polygon[];
  };
  /** The object detector for motion starts (docs/detection.md); absent: none. */
  detection?: RecordersDetection | null;
}

export interface RecordersDetection {
  /**
   * Whether a camera's motion is checked: its detection mode, and for `auto`, whether the camera
   * has reported human or vehicle events itself since the gateway started.
   */
  wanted: (deviceId: string, reportsObjects: boolean) => boolean;
  check: (deviceId: string, where: (() => Box | null) | null) => Promise<DetectionOutcome>;
  /** Looks again with no motion when an outcome's recheckAt asks (loitering). */
  recheck: (deviceId: string) => Promise<DetectionOutcome>;
  unconfirmed: 'keep' | 'drop';
  maxWaitMs: number;
}

export class Recorders {
  private readonly recorders = new Map<string, CameraRecorder>();
  private readonly watchers = new Map<string, MotionWatcher>();
  /** Recorders of cameras that went offline, still writing their last clip. */
  private readonly stopping = new Set<Promise<void>>();
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly motionCheck: NodeJS.Timeout | null;
  /** Cameras that sent human or vehicle events of their own (detection auto leaves them alone). */
  private readonly reportsObjects = new Set<string>();

  constructor(private readonly opts: RecordersOptions) {
    this.motionCheck =
      opts.motion.mode === 'off' ? null : setInterval(() => this.checkMotionWatchers(), opts.motion.checkMs ?? 15_000);
    this.motionCheck?.unref();
  }

  /** Software motion detection runs where it is wanted: every camera (on) or those without events (auto). */
  private checkMotionWatchers(): void {
    for (const deviceId of this.recorders.keys()) {
      const wanted =
        this.opts.motion.mode === 'on' ||
        (this.opts.motion.mode === 'auto' && !this.opts.motion.hasOwnEvents(deviceId));
      const watcher = this.watchers.get(deviceId);
      if (wanted && !watcher) {
        this.opts.logger.info({ device: deviceId, mode: this.opts.motion.mode }, 'software motion detection on');
        this.watchers.set(
          deviceId,
          new MotionWatcher({
            deviceId,
            ffmpegPath: this.opts.ffmpegPath,
            inputUrl: () => this.opts.motion.inputUrl(deviceId),
            onMotion: (phase, at, where) => this.event(deviceId, 'motion', phase, at, where),
            logger: this.opts.logger,
            mask: this.opts.motion.mask?.(deviceId) ?? [],
            threshold: this.opts.motion.threshold,
            fps: this.opts.motion.fps,
          }),
        );
      } else if (!wanted && watcher) {
        this.opts.logger.info({ device: deviceId, reason: 'the camera sends events' }, 'software motion detection off');
        watcher.stop();
        this.watchers.delete(deviceId);
      }
    }
  }

  /** Bytes of footage every camera's recorder holds in RAM segments now. */
  ramBytes(): number {
    let bytes = 0;
    for (const r of this.recorders.values()) bytes += r.ramBytes;
    return bytes;
  }

  /** Starts or stops a camera's recorder for its new status. */
  deviceStatus(deviceId: string, online: boolean, at: number): void {
    if (this.closed) return;
    const current = this.recorders.get(deviceId);
    if (online && !current && this.opts.hasStream(deviceId)) {
      this.recorders.set(deviceId, this.create(deviceId));
      if (this.opts.motion.mode === 'on') this.checkMotionWatchers();
    } else if (!online && current) {
      this.watchers.get(deviceId)?.stop();
      this.watchers.delete(deviceId);
      // The open episode ends now with what was received; the recorder stops once it is written.
      current.cameraLost(at);
      this.recorders.delete(deviceId);
      const stopping = current.stop().finally(() => this.stopping.delete(stopping));
      this.stopping.add(stopping);
    }
  }

  /** The camera's motion mask changed: its software motion detection starts again, with the new one. */
  motionMaskChanged(deviceId: string): void {
    const watcher = this.watchers.get(deviceId);
    if (!watcher) return;
    watcher.stop();
    this.watchers.delete(deviceId);
    this.checkMotionWatchers();
  }

  event(deviceId: string, kind: EventType, phase: 'start' | 'stop', at: number, where?: () => Box | null): void {
    if (kind !== 'motion') this.reportsObjects.add(deviceId);
    this.recorders.get(deviceId)?.event(kind, phase, at, where);
  }

  /** The device was removed (it went offline first, so its recorder is stopping): what is kept of it goes. */
  forget(deviceId: string): void {
    this.reportsObjects.delete(deviceId);
  }

  get(deviceId: string): CameraRecorder | undefined {
    return this.recorders.get(deviceId);
  }

  private create(deviceId: string): CameraRecorder {
    return new CameraRecorder({
      deviceId,
      deviceName: () => this.opts.deviceName(deviceId),
      ffmpegPath: this.opts.ffmpegPath,
      segmentDir: path.join(this.opts.segmentRoot, deviceId),
      storageDir: this.opts.storageDir,
      acquire: () => this.opts.acquire(deviceId),
      store: this.opts.store,
      logger: this.opts.logger,
      preRollMs: this.opts.preRollMs,
      postRollMs: this.opts.postRollMs,
      maxClipMs: this.opts.maxClipMs,
      detection: this.detectionFor(deviceId),
      serialize: (job) => {
        const result = this.chain.then(job);
        this.chain = result.catch(() => undefined).finally(() => this.opts.afterClip?.());
        return result;
      },
    });
  }

  private detectionFor(deviceId: string): CameraRecorderOptions['detection'] {
    const d = this.opts.detection;
    if (!d) return null;
    return {
      wanted: () => d.wanted(deviceId, this.reportsObjects.has(deviceId)),
      check: (where) => d.check(deviceId, where),
      recheck: () => d.recheck(deviceId),
      unconfirmed: d.unconfirmed,
      maxWaitMs: d.maxWaitMs,
    };
  }

  /** Ends every open episode, writes what is pending and stops all ffmpeg children. */
  async stop(): Promise<void> {
    this.closed = true;
    if (this.motionCheck) clearInterval(this.motionCheck);
    for (const w of this.watchers.values()) w.stop();
    this.watchers.clear();
    const all = [...this.recorders.values()];
    this.recorders.clear();
    await Promise.all([...all.map((r) => r.stop()), ...this.stopping]);
    // The RAM directory itself, when nothing else is in it (each camera's folder is gone by now).
    try {
      rmdirSync(this.opts.segmentRoot);
    } catch {
      // not empty, or never made
    }
  }
}
