import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { removeClip, thumbnailNameOf } from './clip-writer.js';
import { planRetention } from './retention.js';

// The storage directory's upkeep: at start, what a crash left (temporary files, clips whose row was
// never written, rows whose clip is gone); while running, retention (oldest clips first, file and
// row together) by age, total size and free space.

export interface StorageStore {
  listRecordingFiles(): Array<{ id: string; startedAt: number; sizeBytes: number; fileName: string }>;
  deleteRecording(id: string): void;
}

export interface Cleanup {
  temporaryFiles: number;
  orphanFiles: number;
  missingClips: number;
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(full)));
    else out.push(full);
  }
  return out;
}

/** Makes the directory and the rows agree after a crash or a power cut (run before recording). */
export async function cleanStorage(storageDir: string, store: StorageStore, logger: BaseLogger): Promise<Cleanup> {
  const rows = store.listRecordingFiles();
  const wanted = new Set<string>();
  for (const r of rows) {
    wanted.add(r.fileName);
    wanted.add(thumbnailNameOf(r.fileName));
  }
  const result: Cleanup = { temporaryFiles: 0, orphanFiles: 0, missingClips: 0 };
  const present = new Set<string>();
  for (const file of await walk(storageDir)) {
    const rel = path.relative(storageDir, file).split(path.sep).join('/');
    if (path.basename(file).endsWith('.tmp')) {
      await fsp.rm(file, { force: true });
      result.temporaryFiles++;
    } else if (/\.(mp4|jpg)$/.test(file) && !wanted.has(rel)) {
      // Renamed into place, then the daemon died before its row was committed.
      await fsp.rm(file, { force: true });
      result.orphanFiles++;
    } else {
      present.add(rel);
    }
  }
  for (const r of rows) {
    if (present.has(r.fileName)) continue;
    store.deleteRecording(r.id);
    result.missingClips++;
  }
  if (result.temporaryFiles || result.orphanFiles || result.missingClips)
    logger.warn(result, 'storage: cleaned what an interrupted run left');
  return result;
}

export interface RetentionOptions {
  storageDir: string;
  store: StorageStore;
  logger: BaseLogger;
  maxAgeDays: number;
  maxBytes: number | null;
  minFreeBytes: number;
  /** How often the whole plan runs; the free-space floor is checked more often. */
  intervalMs?: number;
  freeCheckMs?: number;
  /** Free bytes of the file system (statfs; replaced in tests). */
  freeBytes?: (dir: string) => Promise<number>;
  now?: () => number;
}

export async function statfsFreeBytes(dir: string): Promise<number> {
  const s = await fsp.statfs(dir);
  return s.bavail * s.bsize;
}

export class Retention {
  private readonly timers: NodeJS.Timeout[] = [];
  private running: Promise<number> | null = null;
  private lastFullAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: RetentionOptions) {
    this.timers.push(setInterval(() => void this.check(), opts.freeCheckMs ?? 30_000));
    for (const t of this.timers) t.unref();
  }

  /**
   * Runs the plan when the interval has passed or free space is below the floor; returns how many
   * clips it removed. Never throws (a full disk must not bring the daemon down).
   */
  check(force = false): Promise<number> {
    this.running ??= this.run(force).finally(() => (this.running = null));
    return this.running;
  }

  private async run(force: boolean): Promise<number> {
    const now = (this.opts.now ?? Date.now)();
    try {
      const free = await (this.opts.freeBytes ?? statfsFreeBytes)(this.opts.storageDir);
      const due = force || free < this.opts.minFreeBytes || now - this.lastFullAt >= (this.opts.intervalMs ?? 600_000);
      if (!due) return 0;
      this.lastFullAt = now;
      const rows = this.opts.store.listRecordingFiles();
      const plan = planRetention({
        clips: rows,
        now,
        maxAgeDays: this.opts.maxAgeDays,
        maxBytes: this.opts.maxBytes,
        freeBytes: free,
        minFreeBytes: this.opts.minFreeBytes,
        // Clips being written have no row yet, so nothing listed here is busy.
        busy: new Set(),
      });
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const { id, reason } of plan.remove) {
        const row = byId.get(id);
        if (!row) continue;
        // Row first: the API never offers a clip whose file is already gone.
        this.opts.store.deleteRecording(id);
        await removeClip(this.opts.storageDir, row.fileName);
        this.opts.logger.info({ recording: id, reason }, 'retention: clip removed');
      }
      if (plan.shortfallBytes > 0)
        this.opts.logger.warn(
          { shortfallBytes: plan.shortfallBytes },
          'retention: storage is below its free-space floor with nothing left to remove',
        );
      return plan.remove.length;
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message }, 'retention failed');
      return 0;
    }
  }

  close(): void {
    for (const t of this.timers) clearInterval(t);
  }
}
