import { unlink } from 'node:fs/promises';
import path from 'node:path';
import type { IndexedFootageFile } from '../../store/footage.js';

// Continuous footage kept within its limits, oldest first: an age (retain_days), a size (max_bytes)
// and the disk's free space (min_free_bytes), whichever bites first. Only footage files go: event
// clips live in recording.storage_dir under their own retention, and nothing here touches them. A
// row goes before its file, so a crash in between leaves a file the next reconcile indexes again
// (and the next pass removes), never a row without its file.

export interface FootageRetentionStore {
  oldestFootage(limit: number, endedBefore?: number): IndexedFootageFile[];
  removeFootage(ids: readonly number[]): void;
  footageBytes(): number;
}

export interface FootageLimits {
  retainDays: number;
  maxBytes: number | null;
  minFreeBytes: number;
}

const BATCH = 64;
const DAY_MS = 86_400_000;

async function removeFiles(
  root: string,
  store: FootageRetentionStore,
  files: readonly IndexedFootageFile[],
): Promise<void> {
  store.removeFootage(files.map((f) => f.id));
  for (const f of files) {
    await unlink(path.join(root, f.name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}

/** Removes the oldest footage until every limit holds; the number of files removed. */
export async function applyFootageRetention(
  root: string,
  store: FootageRetentionStore,
  limits: FootageLimits,
  now: number,
  free: () => Promise<number>,
): Promise<number> {
  let removed = 0;
  for (;;) {
    const old = store.oldestFootage(BATCH, now - limits.retainDays * DAY_MS);
    if (old.length === 0) break;
    await removeFiles(root, store, old);
    removed += old.length;
  }
  while (limits.maxBytes !== null && store.footageBytes() > limits.maxBytes) {
    const excess = store.footageBytes() - limits.maxBytes;
    const batch = takeBytes(store.oldestFootage(BATCH), excess);
    if (batch.length === 0) break;
    await removeFiles(root, store, batch);
    removed += batch.length;
  }
  for (let short = limits.minFreeBytes - (await free()); short > 0; short = limits.minFreeBytes - (await free())) {
    const batch = takeBytes(store.oldestFootage(BATCH), short);
    if (batch.length === 0) break;
    await removeFiles(root, store, batch);
    removed += batch.length;
  }
  return removed;
}

/** The oldest files that add up to at least `bytes` (all of them when they do not). */
function takeBytes(files: readonly IndexedFootageFile[], bytes: number): IndexedFootageFile[] {
  const out: IndexedFootageFile[] = [];
  let sum = 0;
  for (const f of files) {
    if (sum >= bytes) break;
    out.push(f);
    sum += f.bytes;
  }
  return out;
}
