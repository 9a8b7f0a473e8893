import { open, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { backoffMs } from '../../domain/backoff.js';
import type { StreamProfile } from '../../domain/types.js';
import type { FootageFile, FootageTotals } from '../../store/footage.js';
import type { StreamHandle } from '../relay/streams.js';
import { CameraFootage } from './camera-footage.js';
import { describeDisk, diskOf, freeBytes, type DiskOf } from './disk.js';
import { FootageDiskError } from './errors.js';
import { footageFileOpener } from './file-writer.js';
import { reconcileFootage, type ReconcileStore } from './reconcile.js';
import { applyFootageRetention, type FootageLimits, type FootageRetentionStore } from './retention.js';

// Continuous recording (config recording.continuous): one CameraFootage per online camera that
// records around the clock, reading the relay's shared camera session (the camera still sees one
// session per profile), its files indexed in batches. The footage disk is watched as a whole: the
// first write that fails (the disk was unplugged, failed, turned read-only or filled up) stops every
// camera's footage; the disk is then probed with backoff, and when it takes writes again the index is
// made to agree with it and recording resumes. Event clips, live view and the API never wait on it.

export type FootageStore = ReconcileStore & FootageRetentionStore & { footageTotals(): FootageTotals[] };

/** What continuous recording needs of the relay: a camera profile's shared stream. */
export interface FootageStreams {
  acquire(
    deviceId: string,
    profile: StreamProfile,
  ): Promise<Pick<StreamHandle, 'sdp' | 'startOfNextReader' | 'attach'>>;
}

export interface FootageRecorderOptions {
  /** recording.continuous.storage_dir: never made here (an unmounted disk must not become a folder on the SD card). */
  root: string;
  /** The gateway's own disks (the root file system, data_dir): footage on them is refused unless allowed. */
  systemDirs: readonly string[];
  allowOnSystemDisk: boolean;
  /** Which profile of a camera is kept; null when the camera keeps none. */
  profileOf(deviceId: string): StreamProfile | null;
  streams: FootageStreams;
  store: FootageStore;
  fileS: number;
  /** Index rows are committed this often (one transaction for every camera's files). */
  flushS: number;
  /** Per camera: bytes waiting for the disk at most. */
  maxPendingBytes: number;
  limits: FootageLimits;
  logger: BaseLogger;
  now?: () => number;
  random?: () => number;
  /** Longest wait between two probes of a failed disk (ms). */
  maxProbeBackoffMs?: number;
  /** Told how long each commit of index rows took (s). */
  onFlush?: (seconds: number) => void;
}

export interface CameraFootageStatus {
  deviceId: string;
  profile: StreamProfile | null;
  recording: boolean;
  /** Why not, while it is not. */
  reason: string | null;
  files: number;
  bytes: number;
  oldestMs: number | null;
  newestMs: number | null;
}

export interface FootageStatus {
  recording: boolean;
  /** Why the footage disk is not being written, while it is not. */
  reason: string | null;
  disk: { device: string; source: string | null; mountPoint: string | null; freeBytes: number | null };
  cameras: CameraFootageStatus[];
}

export interface FootageStats {
  cameras: number;
  /** RTP payload bytes the writers read from the camera streams. */
  bytesReceived: number;
  bytesWritten: number;
  filesWritten: number;
  droppedFragments: number;
  /** New runs because the media time and the gateway's clock parted (each starts a file). */
  resyncs: number;
  /** The most any camera's footage is dated late: its media time ahead of the gateway's clock (ms). */
  aheadMs: number;
  pendingRows: number;
  errors: Record<FootageErrorCause, number>;
  oldestMs: number | null;
}

export type FootageErrorCause = 'disk_missing' | 'disk_full' | 'read_only' | 'io' | 'other';

interface CameraSlot {
  deviceId: string;
  profile: StreamProfile | null;
  online: boolean;
  footage: CameraFootage | null;
  detach: (() => void) | null;
  retry: NodeJS.Timeout | null;
  attempt: number;
  reason: string | null;
}

/**
 * Index rows held at most while the database refuses them (each a file already on disk, with its
 * fragment table: 0.5–5 KB a row, up to 50 MB here). Ten hours of 16 cameras at the default
 * file_s; the oldest go first, and the disk's next reconciliation (at the start, or when the disk
 * comes back) indexes their files from their boxes.
 */
const MAX_PENDING_ROWS = 10_000;
const PROBE_FILE = '.edge-gateway-probe';
const RESYNC_MS = 2000;

export function errorCause(err: unknown): FootageErrorCause {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT' || code === 'ENODEV' || code === 'ENXIO' || err instanceof FootageDiskError)
    return 'disk_missing';
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'disk_full';
  if (code === 'EROFS') return 'read_only';
  if (code === 'EIO') return 'io';
  return 'other';
}

export class FootageRecorder {
  private readonly slots = new Map<string, CameraSlot>();
  private failure: string | null = null;
  /** What kind of failure `failure` is. */
  private failureCause: FootageErrorCause | null = null;
  private disk: DiskOf | null = null;
  private lastFree: number | null = null;
  private pendingRows: FootageFile[] = [];
  private readonly flushTimer: NodeJS.Timeout;
  private probeTimer: NodeJS.Timeout | null = null;
  private probeAttempt = 0;
  private closed = false;
  private maintaining: Promise<void> | null = null;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly counters = {
    bytesReceived: 0,
    bytesWritten: 0,
    filesWritten: 0,
    droppedFragments: 0,
    resyncs: 0,
    errors: { disk_missing: 0, disk_full: 0, read_only: 0, io: 0, other: 0 } as Record<FootageErrorCause, number>,
  };

  /** The footage directory (recording.continuous.storage_dir). */
  get root(): string {
    return this.opts.root;
  }

  private constructor(private readonly opts: FootageRecorderOptions) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.flushTimer = setInterval(() => void this.maintain(), opts.flushS * 1000);
    this.flushTimer.unref();
  }

  /**
   * Checks the footage disk (refused on the system disk unless allowed: a FootageDiskError naming the
   * key and the device), makes the index agree with it and applies retention. A disk that is absent
   * now is not fatal: recording waits for it, and says so in its status.
   */
  static async open(opts: FootageRecorderOptions): Promise<FootageRecorder> {
    const recorder = new FootageRecorder(opts);
    try {
      await recorder.checkDisk();
      await recorder.prepareDisk();
    } catch (err) {
      if (err instanceof FootageDiskError && err.code === 'footage_on_system_disk') {
        recorder.stopTimers();
        throw err;
      }
      recorder.diskFailed(err);
    }
    return recorder;
  }

  deviceStatus(deviceId: string, online: boolean): void {
    let slot = this.slots.get(deviceId);
    if (!slot) {
      if (!online) return;
      slot = { deviceId, profile: null, online, footage: null, detach: null, retry: null, attempt: 0, reason: null };
      this.slots.set(deviceId, slot);
    }
    slot.online = online;
    if (!online) {
      slot.reason = 'the camera is offline';
      void this.teardown(slot, 'stop');
    } else if (!slot.footage && !slot.retry) {
      void this.start(slot);
    }
  }

  /** The device was removed (it went offline first: its footage stopped, its retry was cleared): its slot goes. */
  forget(deviceId: string): void {
    if (this.slots.get(deviceId)?.online === false) this.slots.delete(deviceId);
  }

  status(): FootageStatus {
    const totals = new Map(this.opts.store.footageTotals().map((t) => [t.deviceId, t]));
    const ids = new Set([...this.slots.keys(), ...totals.keys()]);
    const cameras = [...ids].sort().map((deviceId): CameraFootageStatus => {
      const slot = this.slots.get(deviceId);
      const t = totals.get(deviceId);
      const recording = this.failure === null && !!slot?.footage;
      return {
        deviceId,
        profile: slot?.profile ?? this.opts.profileOf(deviceId),
        recording,
        reason: recording ? null : (this.failure ?? slot?.reason ?? 'the camera is not connected'),
        files: t?.files ?? 0,
        bytes: t?.bytes ?? 0,
        oldestMs: t?.oldestMs ?? null,
        newestMs: t?.newestMs ?? null,
      };
    });
    const disk = this.disk;
    return {
      recording: this.failure === null,
      reason: this.failure,
      disk: {
        device: disk?.device ?? 'unknown',
        source: disk?.source ?? null,
        mountPoint: disk?.mountPoint ?? null,
        freeBytes: this.lastFree,
      },
      cameras,
    };
  }

  /** Why the footage disk takes no writes now (errorCause), null while it does. */
  diskProblem(): FootageErrorCause | null {
    return this.failure === null ? null : this.failureCause;
  }

  stats(): FootageStats {
    let received = this.counters.bytesReceived;
    let bytes = this.counters.bytesWritten;
    let dropped = this.counters.droppedFragments;
    let resyncs = this.counters.resyncs;
    let aheadMs = 0;
    let cameras = 0;
    for (const slot of this.slots.values()) {
      if (!slot.footage) continue;
      cameras++;
      received += slot.footage.stats.received;
      bytes += slot.footage.stats.bytes;
      dropped += slot.footage.stats.droppedFragments;
      resyncs += slot.footage.stats.resyncs;
      aheadMs = Math.max(aheadMs, slot.footage.stats.aheadMs);
    }
    const oldest = this.opts.store.oldestFootage(1)[0]?.startMs ?? null;
    return {
      cameras,
      bytesReceived: received,
      bytesWritten: bytes,
      filesWritten: this.counters.filesWritten,
      droppedFragments: dropped,
      resyncs,
      aheadMs,
      pendingRows: this.pendingRows.length,
      errors: { ...this.counters.errors },
      oldestMs: oldest,
    };
  }

  /** Stops every camera's footage (their last group of pictures written), then commits the index. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopTimers();
    await Promise.all([...this.slots.values()].map((slot) => this.teardown(slot, 'stop')));
    await this.maintaining;
    this.flush();
  }

  private stopTimers(): void {
    clearInterval(this.flushTimer);
    if (this.probeTimer) clearTimeout(this.probeTimer);
    for (const slot of this.slots.values()) if (slot.retry) clearTimeout(slot.retry);
  }

  private async start(slot: CameraSlot): Promise<void> {
    if (this.closed || this.failure !== null || !slot.online || slot.footage) return;
    const profile = this.opts.profileOf(slot.deviceId);
    slot.profile = profile;
    if (!profile) {
      slot.reason = 'continuous recording is off for this camera';
      return;
    }
    try {
      const handle = await this.opts.streams.acquire(slot.deviceId, profile);
      if (this.closed || this.failure !== null || !slot.online || slot.footage) return;
      const footage = new CameraFootage(handle.sdp, {
        deviceId: slot.deviceId,
        profile,
        fileS: this.opts.fileS,
        maxPendingBytes: this.opts.maxPendingBytes,
        resyncMs: RESYNC_MS,
        open: footageFileOpener(this.opts.root, () => this.checkDevice()),
        onFile: (file) => this.fileWritten(file),
        onDiskError: (err) => this.diskFailed(err),
        onEnded: (reason) => this.ended(slot, footage, reason),
        wallClock: this.now,
      });
      footage.setStarts(handle.startOfNextReader());
      slot.detach = handle.attach(footage);
      slot.footage = footage;
      slot.reason = null;
      slot.attempt = 0;
      this.opts.logger.info({ deviceId: slot.deviceId, profile }, 'continuous recording started');
    } catch (err) {
      slot.reason = `the camera stream could not be had: ${err instanceof Error ? err.message : String(err)}`;
      this.retry(slot);
    }
  }

  private retry(slot: CameraSlot): void {
    if (this.closed || !slot.online || slot.retry) return;
    const wait = Math.max(1000, backoffMs(slot.attempt++, 30_000, this.random));
    slot.retry = setTimeout(() => {
      slot.retry = null;
      void this.start(slot);
    }, wait);
    slot.retry.unref();
  }

  private ended(slot: CameraSlot, footage: CameraFootage, reason: string): void {
    if (slot.footage !== footage || reason === 'stopped') return;
    slot.reason = `the camera stream ended: ${reason}`;
    this.opts.logger.info({ deviceId: slot.deviceId, reason }, 'continuous recording interrupted');
    void this.teardown(slot, 'stop').then(() => this.retry(slot));
  }

  private async teardown(slot: CameraSlot, how: 'stop' | 'abandon'): Promise<void> {
    const footage = slot.footage;
    slot.detach?.();
    slot.detach = null;
    slot.footage = null;
    if (slot.retry && (how === 'abandon' || !slot.online || this.closed)) {
      clearTimeout(slot.retry);
      slot.retry = null;
    }
    if (!footage) return;
    this.counters.bytesReceived += footage.stats.received;
    this.counters.bytesWritten += footage.stats.bytes;
    this.counters.droppedFragments += footage.stats.droppedFragments;
    this.counters.resyncs += footage.stats.resyncs;
    await (how === 'stop' ? footage.stop() : footage.abandon());
  }

  private fileWritten(file: FootageFile): void {
    this.counters.filesWritten++;
    if (this.pendingRows.length >= MAX_PENDING_ROWS) this.pendingRows.shift();
    this.pendingRows.push(file);
  }

  /** Commits the rows waiting (one transaction); kept for the next try when the database refuses. */
  private flush(): void {
    if (this.pendingRows.length === 0) return;
    const started = performance.now();
    try {
      this.opts.store.insertFootage(this.pendingRows);
      this.pendingRows = [];
      this.opts.onFlush?.((performance.now() - started) / 1000);
    } catch (err) {
      this.opts.logger.error(
        { err: err instanceof Error ? err.message : String(err), rows: this.pendingRows.length },
        'footage index rows could not be written; retried at the next flush',
      );
    }
  }

  /** Every flushS: the index rows, then retention and the disk's free space. */
  private maintain(): Promise<void> {
    this.flush();
    if (this.maintaining || this.failure !== null) return this.maintaining ?? Promise.resolve();
    this.maintaining = this.applyRetention()
      .catch((err: unknown) => this.diskFailed(err))
      .finally(() => {
        this.maintaining = null;
      });
    return this.maintaining;
  }

  private async applyRetention(): Promise<void> {
    const free = async (): Promise<number> => (this.lastFree = await freeBytes(this.opts.root));
    await applyFootageRetention(this.opts.root, this.opts.store, this.opts.limits, this.now(), free);
  }

  /** The footage directory is there, on the disk it should be. */
  private async checkDisk(): Promise<void> {
    try {
      await stat(this.opts.root);
    } catch (err) {
      throw new FootageDiskError(
        'footage_dir_missing',
        `recording.continuous.storage_dir ${this.opts.root} is missing: is the disk mounted? (${(err as Error).message})`,
      );
    }
    const disk = await diskOf(this.opts.root);
    this.disk = disk;
    if (this.opts.allowOnSystemDisk) return;
    for (const dir of this.opts.systemDirs) {
      const system = await diskOf(dir);
      if (system.device === disk.device) {
        throw new FootageDiskError(
          'footage_on_system_disk',
          `recording.continuous.storage_dir ${this.opts.root} is on the system disk ${describeDisk(disk)}, as ${dir} is: continuous footage would wear it out. ` +
            'Mount a second disk there, or set recording.continuous.allow_on_system_disk: true',
        );
      }
    }
  }

  /** Before each new file: the footage directory is still on its disk (not an empty mount point left behind). */
  private async checkDevice(): Promise<void> {
    const expected = this.disk?.device;
    const now = await diskOf(this.opts.root);
    if (expected !== undefined && now.device !== expected)
      throw new FootageDiskError(
        'footage_dir_missing',
        `recording.continuous.storage_dir ${this.opts.root} is no longer on ${describeDisk(this.disk as DiskOf)}: is the disk mounted?`,
      );
  }

  /** The disk takes writes (a probe file written, fsynced, removed); the index agrees; retention ran. */
  private async prepareDisk(): Promise<void> {
    await this.applyRetention();
    const probe = path.join(this.opts.root, PROBE_FILE);
    const handle = await open(probe, 'w', 0o600);
    try {
      await handle.write(Buffer.from('probe'));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await unlink(probe);
    const free = await freeBytes(this.opts.root);
    this.lastFree = free;
    if (free < this.opts.limits.minFreeBytes)
      throw Object.assign(
        new Error(`${free} bytes free, below recording.continuous.min_free_bytes, with no footage left to remove`),
        { code: 'ENOSPC' },
      );
    this.flush();
    await reconcileFootage(this.opts.root, this.opts.store, this.opts.logger);
  }

  private diskFailed(err: unknown): void {
    if (this.closed) return;
    const message = err instanceof Error ? err.message : String(err);
    if (this.failure !== null) return;
    const cause = errorCause(err);
    this.counters.errors[cause]++;
    this.failure = `the footage disk failed (${cause}): ${message}`;
    this.failureCause = cause;
    this.opts.logger.error({ cause, err: message }, 'continuous recording stopped: the footage disk failed; retrying');
    for (const slot of this.slots.values()) void this.teardown(slot, 'abandon');
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.closed || this.probeTimer) return;
    const wait = Math.max(500, backoffMs(this.probeAttempt++, this.opts.maxProbeBackoffMs ?? 60_000, this.random));
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      void this.probe();
    }, wait);
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    try {
      await this.checkDisk();
      await this.prepareDisk();
    } catch (err) {
      this.failureCause = errorCause(err);
      this.failure = `the footage disk is not usable (${this.failureCause}): ${err instanceof Error ? err.message : String(err)}`;
      this.scheduleProbe();
      return;
    }
    this.opts.logger.info(
      { disk: this.disk && describeDisk(this.disk) },
      'the footage disk is back: continuous recording resumes',
    );
    this.failure = null;
    this.probeAttempt = 0;
    for (const slot of this.slots.values()) if (slot.online) void this.start(slot);
  }
}
