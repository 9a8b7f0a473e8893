import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { BaseLogger } from 'pino';
import type { Config } from '../config/schema.js';
import type { EventBus } from '../domain/bus.js';
import type { Polygon } from '../domain/polygon.js';
import { encodeJpeg } from './annotate.js';
import type { CheckRules } from './confirm.js';
import { DetectorPool, type PoolState } from './detector-pool.js';
import { MotionChecker, type CheckCount, type DetectionOutcome } from './motion-check.js';
import { Decoders, relayFrames, type FrameStream } from './relay-frames.js';
import { SceneMemories, type RememberedObjectStore } from './scene-memory.js';
import type { SceneRules } from './stationary.js';
import type { Box } from './types.js';

// The detector as the daemon runs it: the pool (model loaded once per thread), the checker that
// feeds it frames from the relay, the per-camera rules from the config, and its /metrics series.

type Mode = 'auto' | 'on' | 'off';

/** A camera's detection settings, as the config file's cameras[] entry spells them (the app's as well). */
export interface CameraDetectionSettings {
  detection: Mode;
  zones: Readonly<Record<string, Polygon>>;
  required_zones: readonly string[];
  /** Zones where an object alerts even when it has not moved. */
  alert_on_stationary_zones: readonly string[];
  /** Seconds a person stays in each of these zones before its one alert. */
  loitering_zones: Readonly<Record<string, number>>;
}

/**
 * Whether a camera's motion goes to the detector. detection.mode off turns it off everywhere (no
 * model is loaded); otherwise the camera's own mode wins unless it is auto, and auto means: unless
 * the camera reports human or vehicle events itself.
 */
export function detectionWanted(global: Mode, camera: Mode, reportsObjects: boolean): boolean {
  if (global === 'off') return false;
  const mode = camera === 'auto' ? global : camera;
  return mode === 'on' || (mode === 'auto' && !reportsObjects);
}

/** The detector's state for /healthz: `failed` when the model could not be loaded (see the log). */
export type DetectorHealth = 'off' | 'loading' | 'ready' | 'failed';

export interface DetectionServiceOptions {
  config: Config['detection'];
  ffmpegPath: string;
  /** The relay's stream the frames are taken from (the camera's main stream: the most pixels). */
  frameStream: (deviceId: string) => Promise<FrameStream>;
  camera: (deviceId: string) => CameraDetectionSettings | null;
  /** Where each camera's remembered objects are kept across restarts (the Store); absent: RAM only. */
  remembered?: RememberedObjectStore;
  /** A removed device's scene memory leaves RAM (device.removed). */
  bus: Pick<EventBus, 'on'>;
  registry: Registry;
  logger: BaseLogger;
  /** The worker script (tests of the source tree point at the built one). */
  workerUrl?: URL;
  /** A person or vehicle confirmed, with its boxed thumbnail (Home Assistant's last-detection image). */
  onConfirmed?: (deviceId: string, thumbnail: Buffer) => void;
}

/**
 * The detector as the recorder asks it about each motion start. The recorder declares what it needs
 * (RecordersDetection, src/media/recorder/recorders.ts) and main.ts passes this to it: detect sits
 * below the recorder and does not import it, so this shape is checked where the two meet.
 */
export interface MotionStartChecks {
  /**
   * Whether a camera's motion is checked: its detection mode, and for `auto`, whether the camera
   * has reported human or vehicle events itself since the gateway started.
   */
  wanted: (deviceId: string, reportsObjects: boolean) => boolean;
  check: (deviceId: string, where: (() => Box | null) | null) => Promise<DetectionOutcome>;
  /**
   * Looks at a camera again with no motion, when an outcome's recheckAt asks (loitering: a person
   * standing still makes no motion); its outcome is confirmed only for a loitering alert.
   */
  recheck: (deviceId: string) => Promise<DetectionOutcome>;
  unconfirmed: 'keep' | 'drop';
  maxWaitMs: number;
}

export interface DetectionService {
  recorders: MotionStartChecks;
  health(): DetectorHealth;
  close(): Promise<void>;
}

/** The detection thumbnail's width, and the width the checks keep their looked-at frames at. */
export const THUMBNAIL_WIDTH = 640;
// Frames wider than this are scaled down while decoded: crops are at least the model's 512 px, so a
// 4K picture would cost memory (3 frames × 25 MB a check) without finding anyone a 1280 px one misses.
const FRAME_MAX_WIDTH = 1280;
const HEALTH: Record<PoolState, DetectorHealth> = {
  loading: 'loading',
  ready: 'ready',
  error: 'failed',
  closed: 'off',
};

/** Starts the detector (null with detection.mode off). Returns at once; the model loads in the background. */
export function startDetection(opts: DetectionServiceOptions): DetectionService | null {
  const c = opts.config;
  if (c.mode === 'off') return null;
  const runSeconds = new Histogram({
    name: 'edge_gateway_detection_run_seconds',
    help: 'Time a detector thread spent on one frame of a check (all its crops), queue wait excluded',
    buckets: [0.1, 0.25, 0.5, 1, 2, 4, 8, 16],
    registers: [opts.registry],
  });
  const pool = new DetectorPool({
    threads: c.threads,
    queueSize: c.queue_size,
    floorScore: Math.min(0.1, c.min_score),
    modelDir: c.model_dir,
    onRun: (s) => runSeconds.observe(s),
    ...(opts.workerUrl ? { workerUrl: opts.workerUrl } : {}),
  });
  const checks = new Counter({
    name: 'edge_gateway_detection_checks_total',
    help: 'Motion starts given to the detector, by result: human, vehicle, quiet (only objects that do not alert: stationary, not loitering long enough), motion (nothing found), dropped (queue full), no_frames, failed, unavailable (no model)',
    labelNames: ['result'],
    registers: [opts.registry],
  });
  const rechecks = new Counter({
    name: 'edge_gateway_detection_rechecks_total',
    help: 'Looks again with no motion, to follow a person who may be loitering, by result (as edge_gateway_detection_checks_total; human: a loitering alert)',
    labelNames: ['result'],
    registers: [opts.registry],
  });
  new Gauge({
    name: 'edge_gateway_detection_queued',
    help: 'Checks waiting for a free detector thread (at most detection.queue_size)',
    registers: [opts.registry],
    collect() {
      this.set(pool.stats().queued);
    },
  });
  new Gauge({
    name: 'edge_gateway_detection_in_flight',
    help: 'Checks holding frames: being taken from the camera, queued or running (at most detection.queue_size + threads)',
    registers: [opts.registry],
    collect() {
      this.set(checker.checking);
    },
  });
  new Gauge({
    name: 'edge_gateway_detection_frame_bytes',
    help: 'Bytes of decoded frames the checks in flight hold (each its frame for the detector, up to 1280 px wide RGB, and at most two kept for its thumbnail at 640 px)',
    registers: [opts.registry],
    collect() {
      this.set(checker.frameBytes);
    },
  });
  new Gauge({
    name: 'edge_gateway_detection_worker_heap_bytes',
    help: "The detector threads' JavaScript heaps, summed, by kind (used: live objects; physical: the memory they hold), which the process's nodejs_heap series do not count",
    labelNames: ['kind'],
    registers: [opts.registry],
    async collect() {
      const heap = await pool.heapBytes();
      this.set({ kind: 'used' }, heap.used);
      this.set({ kind: 'physical' }, heap.physical);
    },
  });
  new Gauge({
    name: 'edge_gateway_detector_ready',
    help: '1 once the model is loaded, 0 while loading or when it failed to load (see /healthz and the log)',
    registers: [opts.registry],
    collect() {
      this.set(pool.state === 'ready' ? 1 : 0);
    },
  });
  const log = opts.logger;
  void pool.started().then((state) => {
    if (state === 'ready') log.info({ threads: c.threads }, 'object detector ready');
    else if (state === 'error')
      log.error(
        { err: pool.stats().error },
        'the object detector could not start: motion stays motion, recording goes on',
      );
  });
  const rules = (deviceId: string): CheckRules & SceneRules => {
    const cam = opts.camera(deviceId);
    return {
      labels: c.labels,
      minScore: c.min_score,
      threshold: c.threshold,
      zones: cam?.zones ?? {},
      requiredZones: cam?.required_zones ?? [],
      stationaryIou: c.stationary_iou,
      stationaryZones: cam?.alert_on_stationary_zones ?? [],
      loiteringZones: cam?.loitering_zones ?? {},
    };
  };
  const decoders = new Decoders(opts.ffmpegPath, FRAME_MAX_WIDTH);
  /** A person or vehicle that alerts: its picture to onConfirmed. */
  const told = async (deviceId: string, checked: Promise<DetectionOutcome>) => {
    const outcome = await checked;
    const onConfirmed = opts.onConfirmed;
    if (outcome.result === 'confirmed' && onConfirmed)
      void outcome.thumbnail.then((jpeg) => jpeg && onConfirmed(deviceId, jpeg));
    return outcome;
  };
  const scene = new SceneMemories(opts.remembered ?? null, log);
  opts.bus.on('device.removed', (e) => scene.forget(e.deviceId));
  const checker = new MotionChecker({
    detector: pool,
    frames: async (deviceId) => relayFrames(await opts.frameStream(deviceId), decoders),
    rules,
    scene,
    encode: (frame) => encodeJpeg(frame, { ffmpegPath: opts.ffmpegPath, width: THUMBNAIL_WIDTH }),
    keptWidth: THUMBNAIL_WIDTH,
    logger: log,
    count: (what: CheckCount, recheck: boolean) => (recheck ? rechecks : checks).inc({ result: what }),
    maxInFlight: c.queue_size + c.threads,
  });
  return {
    recorders: {
      wanted: (deviceId, reportsObjects) =>
        pool.state !== 'error' && detectionWanted(c.mode, opts.camera(deviceId)?.detection ?? 'auto', reportsObjects),
      check: (deviceId, where) => told(deviceId, checker.check(deviceId, where)),
      recheck: (deviceId) => told(deviceId, checker.check(deviceId, null, { recheck: true })),
      unconfirmed: c.unconfirmed,
      maxWaitMs: c.max_wait_s * 1000,
    },
    health: () => HEALTH[pool.state],
    close: () => {
      decoders.close();
      return pool.close();
    },
  };
}
