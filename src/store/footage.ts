import type Database from 'better-sqlite3';
import type { StreamProfile } from '../domain/types.js';
import type { Connection } from './connection.js';

// The index of continuous footage: one row per file on the footage disk. Rows come in batches, one
// transaction per flush (media/footage/index-batch.ts), each written after its file was fsynced; a
// row lost with an unfinished batch is found again from its file at the next start
// (media/footage/reconcile.ts), which also drops the rows of files the disk no longer has.

/** A file's longest span: the writer closes one at the first keyframe after file_s (at most 10 min). */
export const MAX_FOOTAGE_FILE_MS = 900_000;

export interface FootageFile {
  deviceId: string;
  profile: StreamProfile;
  /** Path under the footage directory. */
  name: string;
  /** Wall clock of the first sample and of the end of the last, ms since the epoch. */
  startMs: number;
  endMs: number;
  /** Wall clock of decode time 0 (every fragment's tfdt counts from it), ms, fractional. */
  zeroMs: number;
  bytes: number;
  initBytes: number;
  /** media/footage/fragment-table.ts */
  fragments: Buffer;
}

export interface IndexedFootageFile extends FootageFile {
  id: number;
}

export interface FootageTotals {
  deviceId: string;
  files: number;
  bytes: number;
  oldestMs: number;
  newestMs: number;
}

interface FileRow {
  id: number;
  device_id: string;
  profile: StreamProfile;
  name: string;
  start_ms: number;
  end_ms: number;
  zero_ms: number;
  bytes: number;
  init_bytes: number;
  fragments: Buffer;
}

function fromRow(r: FileRow): IndexedFootageFile {
  return {
    id: r.id,
    deviceId: r.device_id,
    profile: r.profile,
    name: r.name,
    startMs: r.start_ms,
    endMs: r.end_ms,
    zeroMs: r.zero_ms,
    bytes: r.bytes,
    initBytes: r.init_bytes,
    fragments: r.fragments,
  };
}

function prepare(db: Database.Database) {
  return {
    insert: db.prepare<[string, string, string, number, number, number, number, number, Buffer]>(
      'INSERT OR IGNORE INTO footage_files (device_id, profile, name, start_ms, end_ms, zero_ms, bytes, init_bytes, fragments) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    overlapping: db.prepare<[string, number, number, number], FileRow>(
      'SELECT * FROM footage_files WHERE device_id = ? AND start_ms > ? AND start_ms < ? AND end_ms > ? ORDER BY start_ms, id',
    ),
    oldest: db.prepare<[number], FileRow>('SELECT * FROM footage_files ORDER BY start_ms, id LIMIT ?'),
    olderThan: db.prepare<[number, number], FileRow>(
      'SELECT * FROM footage_files WHERE end_ms < ? ORDER BY start_ms, id LIMIT ?',
    ),
    byId: db.prepare<[number], FileRow>('SELECT * FROM footage_files WHERE id = ?'),
    remove: db.prepare<[number]>('DELETE FROM footage_files WHERE id = ?'),
    removeName: db.prepare<[string]>('DELETE FROM footage_files WHERE name = ?'),
    totals: db.prepare<[], { device_id: string; files: number; bytes: number; oldest: number; newest: number }>(
      'SELECT device_id, count(*) AS files, sum(bytes) AS bytes, min(start_ms) AS oldest, max(end_ms) AS newest FROM footage_files GROUP BY device_id ORDER BY device_id',
    ),
    names: db.prepare<[], string>('SELECT name FROM footage_files').pluck(),
    byteSum: db.prepare<[], number>('SELECT coalesce(sum(bytes), 0) FROM footage_files').pluck(),
  };
}

export class FootageRecords {
  private readonly sql: ReturnType<typeof prepare>;

  constructor(private readonly conn: Connection) {
    this.sql = prepare(conn.db);
  }

  /** Adds the rows in one transaction; a name already indexed is left as it is. */
  insertFootage(files: readonly FootageFile[]): void {
    if (files.length === 0) return;
    this.conn.transaction(() => {
      for (const f of files)
        this.conn.run(
          this.sql.insert,
          f.deviceId,
          f.profile,
          f.name,
          f.startMs,
          f.endMs,
          f.zeroMs,
          f.bytes,
          f.initBytes,
          f.fragments,
        );
    });
  }

  /** A device's files that overlap [startMs, endMs), in time order. */
  footageIn(deviceId: string, startMs: number, endMs: number): IndexedFootageFile[] {
    return this.sql.overlapping.all(deviceId, startMs - MAX_FOOTAGE_FILE_MS, endMs, startMs).map(fromRow);
  }

  footageFile(id: number): IndexedFootageFile | null {
    const row = this.sql.byId.get(id);
    return row ? fromRow(row) : null;
  }

  /** The oldest files of all devices, oldest first; with `endedBefore`, only those that ended before it. */
  oldestFootage(limit: number, endedBefore?: number): IndexedFootageFile[] {
    const rows = endedBefore === undefined ? this.sql.oldest.all(limit) : this.sql.olderThan.all(endedBefore, limit);
    return rows.map(fromRow);
  }

  removeFootage(ids: readonly number[]): void {
    if (ids.length === 0) return;
    this.conn.transaction(() => {
      for (const id of ids) this.conn.run(this.sql.remove, id);
    });
  }

  removeFootageNamed(names: readonly string[]): void {
    if (names.length === 0) return;
    this.conn.transaction(() => {
      for (const name of names) this.conn.run(this.sql.removeName, name);
    });
  }

  footageNames(): Set<string> {
    return new Set(this.sql.names.all());
  }

  footageBytes(): number {
    return this.sql.byteSum.get() ?? 0;
  }

  footageTotals(): FootageTotals[] {
    return this.sql.totals
      .all()
      .map((r) => ({ deviceId: r.device_id, files: r.files, bytes: r.bytes, oldestMs: r.oldest, newestMs: r.newest }));
  }
}
