import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { StoreError } from './errors.js';
import { MIGRATIONS } from './migrations.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { OTHER_COMMITS_LOOK_MS, PageMemo } from './paging.js';

export const DATABASE_FILE = 'gateway.db';

/**
 * The most SQLite keeps of the database in this process's memory. better-sqlite3 builds SQLite with
 * a 16 MB page cache per connection, which fills as the database grows (events, alerts, the footage
 * index: megabytes an hour on a busy gateway) and so holds the RSS growing for hours, on a 2 GB Pi
 * whose memory the recorder needs. The queries read recent rows through indexes; what is not
 * cached here the kernel's page cache serves, which gives memory back under pressure.
 */
export const PAGE_CACHE_BYTES = 4 * 2 ** 20;

/**
 * The one SQLite connection that every aggregate of the store shares, with the two ways to change
 * it: `run` (one write) and `transaction`. Both keep the list pages' memo true to the data.
 */
export class Connection {
  readonly pages: PageMemo;
  private readonly rollbackListeners: Array<() => void> = [];
  private readonly userVersion: Database.Statement<[], number>;
  private readonly pageCount: Database.Statement<[], number>;
  private readonly pageSize: Database.Statement<[], number>;
  private readonly cacheSize: Database.Statement<[], number>;
  /** Whether this connection has changed the database (what another process then has to see). */
  private wrote = false;

  private constructor(
    readonly db: Database.Database,
    readonly file: string,
  ) {
    const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.pages = new PageMemo(() => mustExist(dataVersion.get(), 'PRAGMA data_version'));
    this.userVersion = db.prepare<[], number>('PRAGMA user_version').pluck();
    this.pageCount = db.prepare<[], number>('PRAGMA page_count').pluck();
    this.pageSize = db.prepare<[], number>('PRAGMA page_size').pluck();
    this.cacheSize = db.prepare<[], number>('PRAGMA cache_size').pluck();
  }

  static open(dataDir: string): Connection {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(dataDir, DATABASE_FILE);
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      // FULL in WAL mode fsyncs each commit: commits are rare (events, not frames) and a power cut must
      // not lose an alert whose clip is already on disk.
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
      // Negative: a size in KiB rather than a count of pages.
      db.pragma(`cache_size = -${PAGE_CACHE_BYTES / 1024}`);
      migrate(db);
    } catch (err) {
      db.close();
      throw new StoreError(`cannot open ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return new Connection(db, file);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Closes, then resolves once a daemon running on the same database is sure to see this
   * connection's changes in every request that reaches it afterwards: it looks for other processes'
   * commits at most OTHER_COMMITS_LOOK_MS apart (PageMemo). For the management commands, whose
   * `users remove` must refuse the user's tokens from the moment it returns.
   */
  async closeWhenVisible(): Promise<void> {
    this.close();
    if (!this.wrote) return;
    // Measured, not trusted to one timer: Node's timers may fire up to a millisecond early.
    const closedAt = performance.now();
    while (performance.now() - closedAt < 2 * OTHER_COMMITS_LOOK_MS) await sleep(OTHER_COMMITS_LOOK_MS);
  }

  get schemaVersion(): number {
    return mustExist(this.userVersion.get(), 'PRAGMA user_version');
  }

  /** The most of the database SQLite keeps in memory, as the connection has it (PRAGMA cache_size). */
  get pageCacheLimitBytes(): number {
    const cacheSize = mustExist(this.cacheSize.get(), 'PRAGMA cache_size');
    // Negative: KiB; positive: pages.
    return cacheSize < 0 ? -cacheSize * 1024 : cacheSize * mustExist(this.pageSize.get(), 'PRAGMA page_size');
  }

  /** The database's size in bytes (its pages; the write-ahead log not counted). */
  databaseBytes(): number {
    return mustExist(this.pageCount.get(), 'PRAGMA page_count') * mustExist(this.pageSize.get(), 'PRAGMA page_size');
  }

  /** Every write goes through here, so no memoised page outlives a change. */
  run<P extends unknown[]>(statement: Database.Statement<P, unknown>, ...params: P): Database.RunResult {
    this.wrote = true;
    this.pages.clear();
    return statement.run(...params);
  }

  /** Runs fn in one transaction: all its writes land together or none do. */
  transaction<T>(fn: () => T): T {
    this.wrote = true;
    try {
      return this.db.transaction(fn)();
    } catch (err) {
      if (!this.db.inTransaction) for (const listener of this.rollbackListeners) listener();
      throw err;
    } finally {
      // A page read inside a transaction that rolled back would show rows that never existed.
      this.pages.clear();
    }
  }

  /** Told after an outermost transaction rolled back (what was counted during it may be gone). */
  onRollback(listener: () => void): void {
    this.rollbackListeners.push(listener);
  }
}

/**
 * A row that must be there: one a statement always gives (COUNT, a pragma), or one written in the
 * same transaction. Missing, the database is not what this code expects.
 */
export function mustExist<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new StoreError(`${what}: no row where one must be`);
  return value;
}

function migrate(db: Database.Database): void {
  const current = mustExist(db.prepare<[], number>('PRAGMA user_version').pluck().get(), 'PRAGMA user_version');
  if (current > MIGRATIONS.length) {
    throw new StoreError(
      `database schema ${current} is newer than this gateway knows (${MIGRATIONS.length}); upgrade the gateway`,
    );
  }
  for (const [v, sql] of MIGRATIONS.entries()) {
    if (v < current) continue;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
