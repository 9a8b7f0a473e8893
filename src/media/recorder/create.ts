import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { BaseLogger, Logger } from 'pino';
import type { Registry } from 'prom-client';
import { collectedGauge } from '../../metrics/collected-gauge.js';
import type { Config } from '../../config/schema.js';
import type { EventBus } from '../../domain/bus.js';
import type { StreamProfile } from '../../domain/types.js';
import type { RecorderStore } from './camera-recorder.js';
import { Recorders, type RecordersDetection, type RecordersOptions } from './recorders.js';
import { recoverEpisodes, type RecoveryStore } from './recovery.js';
import type { RecorderStream } from './segmenter.js';
import { cleanStorage, Retention, type StorageStore } from './storage.js';

export interface RecordingStorage {
  /** Where clips and thumbnails are kept (recording.storage_dir, else data_dir/recordings). */
  storageDir: string;
  /** The RAM directory the recorders' segments go to. */
  segmentRoot: string;
  retention: Retention;
}

/**
 * The clips' storage, made consistent before any recorder runs: the episodes a crash interrupted
 * get what clip can still be had (a whole clip file, or the footage left in RAM) and their alerts
 * say what is missing; then files and rows are matched (a half clip, a clip without its row go);
 * then retention runs once and keeps running. Segments go to RAM: recording.segment_dir, else
 * systemd's RuntimeDirectory, else /dev/shm (never the SD card).
 */
export async function openRecordingStorage(
  config: Config,
  /** `logger`: the gateway's, for the recorder's and retention's lines. */
  deps: { store: RecoveryStore & StorageStore; gatewayId: string; env: NodeJS.ProcessEnv; logger: Logger },
  defer: (undo: () => unknown) => void,
): Promise<RecordingStorage> {
  const r = config.recording;
  const storageDir = r.storage_dir ?? path.join(config.gateway.data_dir, 'recordings');
  mkdirSync(storageDir, { recursive: true, mode: 0o700 });
  const runtimeDir = deps.env.RUNTIME_DIRECTORY;
  const segmentRoot =
    r.segment_dir ?? (runtimeDir ? path.join(runtimeDir, 'segments') : `/dev/shm/edge-gateway-${deps.gatewayId}`);
  const logger = deps.logger.child({ part: 'recorder' });
  await recoverEpisodes({
    store: deps.store,
    storageDir,
    segmentRoot,
    ffmpegPath: config.ffmpeg.path,
    maxClipMs: r.max_clip_s * 1000,
    logger,
  });
  await cleanStorage(storageDir, deps.store, logger);
  const retention = new Retention({
    storageDir,
    store: deps.store,
    logger: deps.logger.child({ part: 'retention' }),
    maxAgeDays: r.retention.max_age_days,
    maxBytes: r.retention.max_bytes,
    minFreeBytes: r.retention.min_free_bytes,
  });
  defer(() => retention.close());
  await retention.check(true);
  return { storageDir, segmentRoot, retention };
}

/** What the recorders need of the cameras: their streams and whether they report events themselves. */
export interface RecordedCameras {
  streamSource(deviceId: string, profile: StreamProfile): unknown;
  hasEventSubscription(deviceId: string): boolean;
}

/** What the recorders need of the store: their journal and clips, and the devices' names and states. */
export type RecordedStore = RecorderStore & {
  listCameras(): Array<{ deviceId: string }>;
  getDevice(deviceId: string): { status: string; name: string } | null;
};

/**
 * One recorder per online camera (config recording.*): each reads the main stream from the relay's
 * shared session into RAM segments and turns events into clips; motion is watched (through the
 * relay's `localUrl`) on the sub stream where there is one.
 */
export function createRecorders(
  config: Config,
  storage: RecordingStorage,
  deps: {
    store: RecordedStore;
    /** Cameras going online and offline, and their events. */
    bus: EventBus;
    cameras: RecordedCameras;
    /** Where a camera's software motion is ignored (cameras[].motion_mask, or the app's). */
    motionMask: NonNullable<RecordersOptions['motion']['mask']>;
    /** Whether the camera's events are recorded (its recording setting is not off). */
    recordsEvents: (deviceId: string) => boolean;
    /** The relay: its URL for this box's readers (motion), and its shared camera sessions. */
    relay: {
      localUrl(deviceId: string, profile: StreamProfile): string;
      streams: { acquire(deviceId: string, profile: StreamProfile): Promise<RecorderStream> };
    };
    detection: RecordersDetection | null;
    registry: Registry;
    logger: BaseLogger;
  },
  defer: (undo: () => unknown) => void,
): Recorders {
  const r = config.recording;
  const { cameras, relay, store } = deps;
  const hasStream = (deviceId: string, profile: StreamProfile) => cameras.streamSource(deviceId, profile) !== null;
  const recorders = new Recorders({
    store,
    deviceName: (deviceId) => store.getDevice(deviceId)?.name ?? deviceId,
    hasStream: (deviceId) => deps.recordsEvents(deviceId) && hasStream(deviceId, 'main'),
    acquire: (deviceId) => relay.streams.acquire(deviceId, 'main'),
    ffmpegPath: config.ffmpeg.path,
    segmentRoot: storage.segmentRoot,
    storageDir: storage.storageDir,
    preRollMs: r.pre_roll_s * 1000,
    postRollMs: r.post_roll_s * 1000,
    maxClipMs: r.max_clip_s * 1000,
    logger: deps.logger,
    afterClip: () => void storage.retention.check(),
    motion: {
      ...r.motion,
      hasOwnEvents: (deviceId) => cameras.hasEventSubscription(deviceId),
      inputUrl: (deviceId) => relay.localUrl(deviceId, hasStream(deviceId, 'sub') ? 'sub' : 'main'),
      mask: deps.motionMask,
    },
    detection: deps.detection,
  });
  defer(() => recorders.stop());
  collectedGauge(
    deps.registry,
    'edge_gateway_recorder_ram_bytes',
    "Footage the recorders hold in RAM segments (each camera's pre-roll and what its pending clips need)",
    () => recorders.ramBytes(),
  );
  deps.bus.on('device.status', (e) => recorders.deviceStatus(e.deviceId, e.status === 'online', e.at));
  deps.bus.on('camera.event', (e) => recorders.event(e.deviceId, e.kind, e.phase, e.at));
  deps.bus.on('device.removed', (e) => recorders.forget(e.deviceId));
  // The owner changed the camera's settings: recording off stops its recorder, on starts it; a new
  // mask restarts its software motion detection with it.
  deps.bus.on('camera.settings', (e) => {
    const online = store.getDevice(e.deviceId)?.status === 'online';
    if (e.fields.includes('recording'))
      recorders.deviceStatus(e.deviceId, online && deps.recordsEvents(e.deviceId), e.at);
    if (e.fields.includes('motion_mask')) recorders.motionMaskChanged(e.deviceId);
  });
  // Cameras online at the last stop: the manager reports a change only, so these start here.
  for (const camera of store.listCameras())
    if (store.getDevice(camera.deviceId)?.status === 'online')
      recorders.deviceStatus(camera.deviceId, true, Date.now());
  return recorders;
}
