import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

function writeTemp(file: string, data: string | Buffer, mode: number): string {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/** The code of a failed file operation (ENOENT, EEXIST, …); undefined for anything else thrown. */
function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates `file` with `data` unless it exists, atomically: a reader never sees a half-written file,
 * and when two processes race (daemon and `edge-gateway token`) both end up with the winner's content.
 * Returns the file's content.
 */
export function createOnce(file: string, make: () => string | Buffer, mode = 0o600): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw err;
  }
  const tmp = writeTemp(file, make(), mode);
  try {
    linkSync(tmp, file);
    fsyncDir(path.dirname(file));
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
  return readFileSync(file);
}

/** Replaces `file` atomically (temp file, fsync, rename), so a power cut leaves old or new, never half. */
export function replaceFile(file: string, data: string | Buffer, mode = 0o600): void {
  const tmp = writeTemp(file, data, mode);
  try {
    renameSync(tmp, file);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
  fsyncDir(path.dirname(file));
}

/**
 * Makes a finished temporary file permanent under its final name: its data reaches the disk
 * (fsync), then the rename, then the directory entry (fsync of the directory). A power cut at any
 * point leaves the final name absent or complete. Async: a clip's fsync can take a while on an SD
 * card and must not stall the event loop (the relay runs on it).
 */
export async function commitFile(tmp: string, file: string): Promise<void> {
  const handle = await fsp.open(tmp, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(tmp, file);
  const dir = await fsp.open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
