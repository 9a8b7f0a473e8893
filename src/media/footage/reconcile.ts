import { readdir, stat, truncate, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import type { FootageFile } from '../../store/footage.js';
import { parseFootageFileName } from './file-name.js';
import { encodeFragmentTable } from './fragment-table.js';
import { readFootageFile } from './read-file.js';

// The index made to agree with the footage disk, before continuous recording starts (at start-up and
// when the disk comes back): a file the index lacks (written before a crash, its row in a batch that
// never committed) is read back from its boxes and indexed, its torn tail cut off, or removed when it
// holds no whole fragment; a row whose file is gone (another disk, files removed by hand) goes.
// Files with names this gateway does not write are left alone.

export interface ReconcileStore {
  footageNames(): Set<string>;
  insertFootage(files: readonly FootageFile[]): void;
  removeFootageNamed(names: readonly string[]): void;
}

export interface Reconciled {
  /** Files found on disk and indexed. */
  indexed: number;
  /** Files with no whole fragment, removed. */
  removed: number;
  /** Rows whose file was gone, dropped. */
  dropped: number;
}

const TICKS_PER_MS = 90;

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}

/** Names (device/day/file) of the footage files under root. */
async function filesOnDisk(root: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (const device of await subdirs(root)) {
    for (const day of await subdirs(path.join(root, device))) {
      for (const file of await readdir(path.join(root, device, day))) {
        const name = `${device}/${day}/${file}`;
        if (parseFootageFileName(name)) names.add(name);
      }
    }
  }
  return names;
}

/** The index row of a file the index lacks; null when it holds nothing whole (it is removed). */
async function recoverFile(root: string, name: string): Promise<FootageFile | null> {
  const id = parseFootageFileName(name);
  if (!id) return null;
  const file = path.join(root, name);
  const layout = await readFootageFile(file);
  if (!layout) {
    await unlink(file);
    return null;
  }
  if ((await stat(file)).size > layout.wholeBytes) await truncate(file, layout.wholeBytes);
  const ticks = layout.fragments.reduce((sum, f) => sum + f.duration, 0);
  return {
    deviceId: id.deviceId,
    profile: id.profile,
    name,
    startMs: id.startMs,
    endMs: id.startMs + Math.round(ticks / TICKS_PER_MS),
    zeroMs: id.startMs - layout.firstDecodeTime / TICKS_PER_MS,
    bytes: layout.wholeBytes,
    initBytes: layout.initBytes,
    fragments: encodeFragmentTable(layout.fragments),
  };
}

export async function reconcileFootage(root: string, store: ReconcileStore, logger: BaseLogger): Promise<Reconciled> {
  const onDisk = await filesOnDisk(root);
  const indexed = store.footageNames();
  const gone = [...indexed].filter((n) => !onDisk.has(n));
  store.removeFootageNamed(gone);
  const found: FootageFile[] = [];
  let removed = 0;
  for (const name of onDisk) {
    if (indexed.has(name)) continue;
    const row = await recoverFile(root, name);
    if (row) found.push(row);
    else removed++;
  }
  store.insertFootage(found);
  const result = { indexed: found.length, removed, dropped: gone.length };
  if (found.length + removed + gone.length > 0) logger.info(result, 'footage index made to agree with the disk');
  return result;
}
