import { createHash } from 'node:crypto';
import { DeviceUnavailableError } from '../../domain/errors.js';
import type { StillInputFormat } from './decode.js';
import { StillError } from './errors.js';
import type { KeyframePicture } from './keyframe-picture.js';

// The current picture of a camera, as the snapshot endpoint serves it: one decode serves every
// request for the same (device, width) for cacheMs: requests while it runs wait for it
// (coalesced), requests after it get the cached JPEG. Decodes are bounded by DecodeSlots (in the
// decode function given). The picture is the relay's cached keyframe; when the relay has none, the
// camera's own snapshot. A keyframe decoded before gives the picture it gave then (cameras with a
// GOP longer than a page's refresh period; the ETag stays, so the page gets 304).

export interface SnapshotSources {
  /** What the device has to make a picture from; neither: DeviceUnavailableError. */
  has(deviceId: string): { stream: boolean; cameraSnapshot: boolean };
  /** The relay's keyframe for a picture this wide (null: full size); null when none came in time. */
  keyframe(deviceId: string, width: number | null): Promise<KeyframePicture | null>;
  /** The camera's own JPEG (its ONVIF snapshot URI); throws when it cannot be had. */
  cameraJpeg(deviceId: string): Promise<Buffer>;
}

export interface Snapshot {
  jpeg: Buffer;
  /** A strong ETag: a hash of the JPEG. */
  etag: string;
  source: 'relay' | 'camera';
}

export interface SnapshotStats {
  /** Pictures decoded by ffmpeg, by what they were. */
  decodes: { keyframe: number; camera_jpeg: number };
  cameraFetches: number;
  cacheHits: number;
  /** Pictures not decoded again: the relay's keyframe was the one decoded last time. */
  reused: number;
  /** Requests that joined a decode already running. */
  coalesced: number;
  /** Pictures being made now. */
  inFlight: number;
  failures: Record<'relay' | 'camera' | 'unavailable', number>;
}

export interface SnapshotsOptions {
  sources: SnapshotSources;
  /**
   * Decodes one picture; `group` names pictures that give JPEGs of one size (batched, or one
   * long-lived decoder); `standalone`: a keyframe a long-lived decoder can take (KeyframePicture).
   */
  decode: (
    format: StillInputFormat,
    input: Buffer,
    width: number | null,
    group: string,
    standalone: boolean,
    quality?: number,
  ) => Promise<Buffer>;
  cacheMs: number;
  /** Pictures kept at most (each device and width is one); default 256. */
  maxCached?: number;
  /** Bytes of pictures kept at most; default 32 MiB (a Pi's memory, full-size 4K JPEGs). */
  maxCachedBytes?: number;
  now?: () => number;
  /** Told why the relay's picture failed before the camera's was tried. */
  onRelayFailure?: (deviceId: string, err: Error) => void;
}

const etagOf = (jpeg: Buffer): string => `"${createHash('sha256').update(jpeg).digest('base64url').slice(0, 27)}"`;
const digestOf = (keyframe: Buffer): string => createHash('sha256').update(keyframe).digest('base64url');

interface Cached {
  snapshot: Snapshot;
  at: number;
  /** Digest of the keyframe it was decoded from (null: the camera's JPEG). */
  keyframe: string | null;
}

export class Snapshots {
  readonly stats: SnapshotStats = {
    decodes: { keyframe: 0, camera_jpeg: 0 },
    cameraFetches: 0,
    cacheHits: 0,
    reused: 0,
    coalesced: 0,
    inFlight: 0,
    failures: { relay: 0, camera: 0, unavailable: 0 },
  };
  /** Pictures by device and width; kept past cacheMs (until room is needed) for their keyframe. */
  private readonly cache = new Map<string, Cached>();
  private readonly running = new Map<string, Promise<Snapshot>>();
  private readonly maxCached: number;
  private readonly maxCachedBytes: number;
  private cachedBytes = 0;
  private readonly now: () => number;

  constructor(private readonly opts: SnapshotsOptions) {
    this.maxCached = opts.maxCached ?? 256;
    this.maxCachedBytes = opts.maxCachedBytes ?? 32 * 1024 * 1024;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The device's current picture, `width` pixels wide (null: as the camera sends it); `quality`,
   * ffmpeg's JPEG quantiser, when not the snapshots' own (a push notification's small picture).
   */
  get(deviceId: string, width: number | null, quality?: number): Promise<Snapshot> {
    const key = `${deviceId}/${width ?? 'full'}${quality === undefined ? '' : `/q${quality}`}`;
    const cached = this.cache.get(key);
    if (cached && this.now() - cached.at < this.opts.cacheMs) {
      this.stats.cacheHits++;
      return Promise.resolve(cached.snapshot);
    }
    const running = this.running.get(key);
    if (running) {
      this.stats.coalesced++;
      return running;
    }
    const made = this.make(deviceId, width, key, quality)
      .then((made) => {
        this.remember(key, made.snapshot, made.keyframe);
        return made.snapshot;
      })
      .finally(() => {
        this.running.delete(key);
        this.stats.inFlight = this.running.size;
      });
    this.running.set(key, made);
    this.stats.inFlight = this.running.size;
    return made;
  }

  private remember(key: string, snapshot: Snapshot, keyframe: string | null): void {
    this.forget(key);
    for (const k of this.cache.keys()) {
      const full = this.cache.size >= this.maxCached || this.cachedBytes + snapshot.jpeg.length > this.maxCachedBytes;
      if (!full) break;
      this.forget(k); // oldest first (insertion order), to make room
    }
    this.cache.set(key, { snapshot, at: this.now(), keyframe });
    this.cachedBytes += snapshot.jpeg.length;
  }

  private forget(key: string): void {
    const entry = this.cache.get(key);
    if (!entry) return;
    this.cache.delete(key);
    this.cachedBytes -= entry.snapshot.jpeg.length;
  }

  private async make(
    deviceId: string,
    width: number | null,
    key: string,
    quality: number | undefined,
  ): Promise<{ snapshot: Snapshot; keyframe: string | null }> {
    const has = this.opts.sources.has(deviceId);
    if (!has.stream && !has.cameraSnapshot)
      throw new DeviceUnavailableError(`device ${deviceId} has no video stream and no snapshot address (yet)`);
    let relayProblem: Error | null = null;
    if (has.stream) {
      try {
        const picture = await this.opts.sources.keyframe(deviceId, width);
        if (picture) {
          const keyframe = digestOf(picture.annexB);
          const before = this.cache.get(key);
          if (before?.keyframe === keyframe) {
            this.stats.reused++;
            return { snapshot: before.snapshot, keyframe };
          }
          const format = picture.codec === 'H264' ? 'h264' : 'hevc';
          this.stats.decodes.keyframe++;
          const jpeg = await this.opts.decode(
            format,
            picture.annexB,
            width,
            `${picture.width ?? '?'}x${picture.height ?? '?'}/${picture.sps}`,
            picture.standalone,
            quality,
          );
          return { snapshot: { jpeg, etag: etagOf(jpeg), source: 'relay' }, keyframe };
        }
      } catch (err) {
        if (!(err instanceof StillError)) throw err; // busy, or a bug: not the camera's business
        this.stats.failures.relay++;
        relayProblem = err;
        this.opts.onRelayFailure?.(deviceId, err);
      }
    }
    if (!has.cameraSnapshot) {
      this.stats.failures.unavailable++;
      throw relayProblem ?? new StillError('unavailable', `no picture from device ${deviceId}'s stream yet`);
    }
    return { snapshot: await this.fromCamera(deviceId, width, quality), keyframe: null };
  }

  private async fromCamera(deviceId: string, width: number | null, quality: number | undefined): Promise<Snapshot> {
    let original: Buffer;
    try {
      this.stats.cameraFetches++;
      original = await this.opts.sources.cameraJpeg(deviceId);
    } catch (err) {
      this.stats.failures.camera++;
      throw new StillError(
        'camera_snapshot_failed',
        `the camera's snapshot could not be had: ${(err as Error).message}`,
      );
    }
    const jpeg =
      width === null && quality === undefined
        ? original
        : await (() => {
            this.stats.decodes.camera_jpeg++;
            // Not batched with others: a camera's JPEG may be of any size.
            return this.opts.decode('mjpeg', original, width, `camera:${deviceId}`, false, quality);
          })();
    return { jpeg, etag: etagOf(jpeg), source: 'camera' };
  }
}
