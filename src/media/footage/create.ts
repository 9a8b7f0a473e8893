import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { CameraConfig } from '../../config/cameras.js';
import type { Config } from '../../config/schema.js';
import type { EventBus } from '../../domain/bus.js';
import type { StreamProfile } from '../../domain/types.js';
import type { IndexedFootageFile } from '../../store/footage.js';
import type { TicketSigner } from '../ticket.js';
import { describeDisk } from './disk.js';
import { FootageFrames, type DecodePicture } from './frames.js';
import { registerFootageMetrics } from './metrics.js';
import {
  FootageRecorder,
  type FootageErrorCause,
  type FootageStatus,
  type FootageStore,
  type FootageStreams,
} from './service.js';

/** What continuous recording needs of the cameras: which streams each has. */
export interface FootageCameras {
  streamSource(deviceId: string, profile: StreamProfile): unknown;
}

/**
 * The profile a camera's continuous footage is kept from: cameras[].continuous_profile, else
 * recording.continuous.profile; the other one when the camera lacks it; null when the camera's
 * continuous recording is off or it has no stream.
 */
export function continuousProfile(
  config: Config,
  camera: Pick<CameraConfig, 'continuous' | 'continuous_profile'> | null,
  has: (profile: StreamProfile) => boolean,
): StreamProfile | null {
  if (camera?.continuous === 'off') return null;
  const wanted: StreamProfile = camera?.continuous_profile ?? config.recording.continuous.profile;
  if (has(wanted)) return wanted;
  const other: StreamProfile = wanted === 'sub' ? 'main' : 'sub';
  return has(other) ? other : null;
}

/** Continuous recording as the API reads it: the files' directory, the status, pictures, playback tickets. */
export interface Footage {
  root: string;
  status(): FootageStatus;
  /** Why the footage disk takes no writes now; null while it does (FootageRecorder.diskProblem). */
  diskProblem(): FootageErrorCause | null;
  frames: FootageFrames;
  tickets: Pick<TicketSigner, 'issueFootage' | 'verifyFootage'>;
  /** recording.playback_ttl_s */
  playbackTtlS: number;
}

/**
 * Continuous recording (config recording.continuous), or null when it is off: the footage disk
 * checked (refused on the system disk unless allowed: the daemon does not start), its index made to
 * agree with it, then one writer per online camera as cameras go online and offline.
 */
export async function createFootage(
  config: Config,
  deps: {
    store: FootageStore & {
      listCameras(): Array<{ deviceId: string }>;
      getDevice(deviceId: string): { status: string } | null;
      footageIn(deviceId: string, startMs: number, endMs: number): IndexedFootageFile[];
    };
    streams: FootageStreams;
    cameras: FootageCameras;
    /** The camera's continuous and continuous_profile in effect (the file's, or the app's recording setting). */
    cameraConfig: (deviceId: string) => Pick<CameraConfig, 'continuous' | 'continuous_profile'> | null;
    /** The directories of the system's own disk: the root file system and data_dir. */
    systemDirs: readonly string[];
    /** Decodes the pictures of moments of footage (the snapshots' decoders). */
    decode: DecodePicture;
    /** Footage tickets, for playback addresses. */
    tickets: Pick<TicketSigner, 'issueFootage' | 'verifyFootage'>;
    bus: EventBus;
    registry: Registry;
    logger: BaseLogger;
  },
  defer: (undo: () => unknown) => void,
): Promise<Footage | null> {
  const c = config.recording.continuous;
  if (!c.enabled || c.storage_dir === null) return null;
  let recorder: FootageRecorder | null = null;
  const observeFlush = registerFootageMetrics(deps.registry, () => {
    if (!recorder) throw new Error('footage metrics read before the recorder opened');
    return recorder.stats();
  });
  recorder = await FootageRecorder.open({
    root: c.storage_dir,
    systemDirs: deps.systemDirs,
    allowOnSystemDisk: c.allow_on_system_disk,
    profileOf: (deviceId) =>
      continuousProfile(config, deps.cameraConfig(deviceId), (p) => deps.cameras.streamSource(deviceId, p) !== null),
    streams: deps.streams,
    store: deps.store,
    fileS: c.file_s,
    flushS: c.flush_s,
    maxPendingBytes: c.max_pending_bytes,
    limits: { retainDays: c.retain_days, maxBytes: c.max_bytes, minFreeBytes: c.min_free_bytes },
    logger: deps.logger,
    onFlush: observeFlush,
  });
  const opened = recorder;
  defer(() => opened.close());
  const status = opened.status();
  deps.logger.info(
    {
      storageDir: c.storage_dir,
      disk: status.disk.source
        ? describeDisk({ device: status.disk.device, source: status.disk.source, mountPoint: status.disk.mountPoint })
        : status.disk.device,
      recording: status.recording,
      reason: status.reason,
    },
    'continuous recording: footage disk',
  );
  deps.bus.on('device.status', (e) => opened.deviceStatus(e.deviceId, e.status === 'online'));
  deps.bus.on('device.removed', (e) => opened.forget(e.deviceId));
  // The owner changed the camera's recording: its footage stops or starts now (stopped, then
  // started again with what is set now).
  deps.bus.on('camera.settings', (e) => {
    if (!e.fields.includes('recording')) return;
    opened.deviceStatus(e.deviceId, false);
    if (deps.store.getDevice(e.deviceId)?.status === 'online') opened.deviceStatus(e.deviceId, true);
  });
  // Cameras online at the last stop: the manager reports a change only, so these start here.
  for (const camera of deps.store.listCameras())
    if (deps.store.getDevice(camera.deviceId)?.status === 'online') opened.deviceStatus(camera.deviceId, true);
  const frames = new FootageFrames({
    root: opened.root,
    files: (deviceId, startMs, endMs) => deps.store.footageIn(deviceId, startMs, endMs),
    decode: deps.decode,
  });
  const playbackTtlS = config.recording.playback_ttl_s;
  return {
    root: opened.root,
    status: () => opened.status(),
    diskProblem: () => opened.diskProblem(),
    frames,
    tickets: deps.tickets,
    playbackTtlS,
  };
}
