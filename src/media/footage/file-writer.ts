import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

// One footage file being written: its writes are queued in order on libuv's threads (the event loop
// never waits on the disk) and counted until done, so the camera writer can bound what a slow disk
// holds in memory. finish() fsyncs before it resolves: a file is indexed only once it is on disk.

export interface FootageFileWriter {
  append(bytes: Buffer): void;
  /** Bytes appended and not yet written. */
  readonly pendingBytes: number;
  /** Waits for the writes, fsyncs and closes; the file's size. Rejects with the first write's error. */
  finish(): Promise<number>;
  /** Closes without waiting for the disk to keep anything (the disk failed, or the gateway stops in a hurry). */
  abandon(): Promise<void>;
}

/**
 * Opens `name` for writing; `onFail` hears of the first error at once (the disk went away, filled up, turned
 * read-only).
 */
export type OpenFootageFile = (name: string, onFail: (err: Error) => void) => FootageFileWriter;

/**
 * Files under `root`, made with their folders (never `root` itself) once `check` passed (the footage
 * directory is still on its disk); a file that exists already is an error (EEXIST).
 */
export function footageFileOpener(root: string, check: () => Promise<void>): OpenFootageFile {
  return (name, onFail) => new DiskFileWriter(path.join(root, name), check, onFail);
}

class DiskFileWriter implements FootageFileWriter {
  pendingBytes = 0;
  private size = 0;
  private failure: Error | null = null;
  private chain: Promise<FileHandle | null>;

  constructor(
    file: string,
    check: () => Promise<void>,
    private readonly onFail: (err: Error) => void,
  ) {
    this.chain = check()
      .then(() => mkdir(path.dirname(file), { recursive: true, mode: 0o700 }))
      .then(() => open(file, 'wx', 0o600))
      .catch((err: unknown) => this.fail(err));
  }

  append(bytes: Buffer): void {
    this.pendingBytes += bytes.length;
    this.chain = this.chain.then(async (handle) => {
      try {
        if (handle && !this.failure) {
          await handle.write(bytes, 0, bytes.length);
          this.size += bytes.length;
        }
      } catch (err) {
        this.fail(err);
      } finally {
        this.pendingBytes -= bytes.length;
      }
      return handle;
    });
  }

  async finish(): Promise<number> {
    const handle = await this.chain;
    try {
      if (handle && !this.failure) await handle.datasync();
    } catch (err) {
      this.fail(err);
    } finally {
      await handle?.close().catch(() => undefined);
    }
    if (this.failure) throw this.failure;
    return this.size;
  }

  async abandon(): Promise<void> {
    const handle = await this.chain;
    await handle?.close().catch(() => undefined);
  }

  private fail(err: unknown): null {
    if (this.failure) return null;
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.onFail(this.failure);
    return null;
  }
}
