import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { StreamProfile } from '../../domain/types.js';
import { fetchCameraSnapshot, type CameraSnapshotSource } from '../../onvif/snapshot.js';
import { decodeStill, decodeStills, type StillInputFormat } from './decode.js';
import { DecodeBatches } from './decode-batches.js';
import { DecodeSlots } from './decode-slots.js';
import { LiveDecoder } from './live-decoder.js';
import { LiveDecoders } from './live-decoders.js';
import { liveFirst } from './live-first.js';
import { registerSnapshotMetrics } from './metrics.js';
import { awaitKeyframe, cachedPicture, snapshotProfiles, type KeyframeStreams } from './relay-keyframe.js';
import { Snapshots } from './snapshots.js';

// The snapshot service as main.ts builds it: the relay's streams and the camera manager as its
// sources, the config's bounds, its series in /metrics.

export interface SnapshotConfig {
  max_concurrent_decodes: number;
  max_queued_decodes: number;
  decode_timeout_ms: number;
  cache_ms: number;
  keyframe_wait_ms: number;
  camera_timeout_ms: number;
  sub_max_width: number;
  batch_window_ms: number;
  max_decoders: number;
  decoder_idle_s: number;
}

/** Most pictures decoded in one ffmpeg run. */
const MAX_BATCH = 16;

export interface SnapshotCameras {
  streamSource(deviceId: string, profile: StreamProfile): { url: string } | null;
  snapshotSource(deviceId: string): CameraSnapshotSource | null;
}

/** Largest camera JPEG fetched (a 4K camera's snapshot is 1–2 MB). */
const MAX_CAMERA_JPEG_BYTES = 8 * 1024 * 1024;
/** Largest JPEG a long-lived decoder may write (a 3840-wide JPEG stays well under 4 MB). */
const MAX_LIVE_JPEG_BYTES = 8 * 1024 * 1024;

/**
 * Decodes one picture (Annex B H.264/H.265, or a JPEG) to a JPEG this wide (null: as it is), within the snapshots'
 * bounds.
 */
export type DecodeStill = (format: StillInputFormat, input: Buffer, width: number | null) => Promise<Buffer>;

/** A JPEG made smaller: this wide, with ffmpeg's quantiser `quality` (2 best … 31 smallest). */
export type ShrinkJpeg = (jpeg: Buffer, width: number, quality: number) => Promise<Buffer>;

export function createSnapshots(
  config: SnapshotConfig,
  deps: {
    ffmpegPath: string;
    streams: KeyframeStreams;
    cameras: SnapshotCameras;
    registry: Registry;
    logger: BaseLogger;
  },
): { snapshots: Snapshots; decode: DecodeStill; shrink: ShrinkJpeg; stop: () => void } {
  const { streams, cameras } = deps;
  const slots = new DecodeSlots(config.max_concurrent_decodes, config.max_queued_decodes);
  const live = new LiveDecoders({
    max: config.max_decoders,
    idleMs: config.decoder_idle_s * 1000,
    start: (format, width, quality) =>
      new LiveDecoder({
        ffmpegPath: deps.ffmpegPath,
        format,
        width,
        quality,
        timeoutMs: config.decode_timeout_ms,
        maxOutputBytes: MAX_LIVE_JPEG_BYTES,
      }),
  });
  const batches = new DecodeBatches(
    slots,
    (format, inputs, width, quality) =>
      decodeStills(format, inputs, width, {
        ffmpegPath: deps.ffmpegPath,
        timeoutMs: config.decode_timeout_ms,
        quality,
      }),
    config.batch_window_ms,
    MAX_BATCH,
  );
  // The camera manager answers the main stream for 'sub' when a camera has none: then only main.
  const hasSub = (deviceId: string) => {
    const sub = cameras.streamSource(deviceId, 'sub');
    return sub !== null && sub.url !== cameras.streamSource(deviceId, 'main')?.url;
  };
  const decode = liveFirst({ live: config.max_decoders > 0 ? live : null, slots, batches, logger: deps.logger });
  const snapshots = new Snapshots({
    cacheMs: config.cache_ms,
    decode,
    onRelayFailure: (deviceId, err) =>
      deps.logger.debug({ deviceId, err: err.message }, 'no picture from the relay; asking the camera'),
    sources: {
      has: (deviceId) => ({
        stream: cameras.streamSource(deviceId, 'main') !== null,
        cameraSnapshot: cameras.snapshotSource(deviceId) !== null,
      }),
      keyframe: async (deviceId, width) => {
        const profiles = snapshotProfiles(width, hasSub(deviceId), config.sub_max_width);
        const cached = cachedPicture(streams, deviceId, profiles, width);
        if (cached.picture || config.keyframe_wait_ms === 0) return cached.picture ?? cached.narrower;
        // A sub picture too narrow means the main stream is not open: open it rather than upscale.
        const open = cached.narrower ? 'main' : (profiles[0] ?? 'main');
        try {
          return (await awaitKeyframe(streams, deviceId, open, config.keyframe_wait_ms)) ?? cached.narrower;
        } catch (err) {
          // The camera's stream cannot be had now (StreamUnavailableError and the like): its own
          // snapshot may still answer.
          deps.logger.debug({ deviceId, err: (err as Error).message }, 'snapshot: the relay could not open the stream');
          return cached.narrower;
        }
      },
      cameraJpeg: async (deviceId) => {
        const source = cameras.snapshotSource(deviceId);
        if (!source) throw new Error('the camera has no snapshot address');
        return fetchCameraSnapshot(source, { timeoutMs: config.camera_timeout_ms, maxBytes: MAX_CAMERA_JPEG_BYTES });
      },
    },
  });
  registerSnapshotMetrics(deps.registry, {
    snapshots: () => snapshots.stats,
    slots: () => slots.stats,
    batches: () => batches.stats,
    live: () => live.stats,
  });
  // Other pictures (footage frames) share the decoders and their bounds, in batches of their own.
  const decodeStillLive: DecodeStill = (format, input, width) =>
    decode(format, input, width, `still/${format}/${width ?? 'full'}`, false);
  // Pictures made smaller (a push notification's): one short ffmpeg run each, within the same slots.
  const shrink: ShrinkJpeg = (jpeg, width, quality) =>
    slots.run(() =>
      decodeStill('mjpeg', jpeg, width, { ffmpegPath: deps.ffmpegPath, timeoutMs: config.decode_timeout_ms, quality }),
    );
  return { snapshots, decode: decodeStillLive, shrink, stop: () => live.stop() };
}
