import type Database from 'better-sqlite3';
import type { Page, PageKey } from '../domain/types.js';

const MAX_CACHED_PAGES = 64;

export interface ListOptions {
  limit: number;
  after: PageKey | null;
}

/**
 * How long one look for other connections' commits (a read of PRAGMA data_version) serves later
 * reads. A look is a read transaction, two fcntl locks: ~20 µs here, a fifth of an API request's
 * whole cost when every request made one, and still ~1 µs a request at 10,000 requests a second
 * with one look every 5 ms. The daemon is the only process that writes its database while it runs,
 * apart from the management commands (`edge-gateway users remove`, `clients remove`); they close
 * with `Store.closeWhenVisible`, which returns only after twice this long, so a request that reaches
 * the daemon after such a command returned finds a look made after its commit. 40 ms is nothing to
 * wait at the end of a command a person types.
 */
export const OTHER_COMMITS_LOOK_MS = 20;

/** One WHERE clause and its bound value (undefined: the clause binds nothing). */
export type ListFilter = [clause: string, value: unknown];

/**
 * Builds a newest-first keyset query: WHERE filters AND (key < after) ORDER BY key DESC, id DESC.
 * Keyset rather than OFFSET so pages stay stable while new rows arrive and cost the same deep in the list.
 */
function keysetQuery(
  table: string,
  keyColumn: string,
  filters: readonly ListFilter[],
  opts: ListOptions,
): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [clause, value] of filters) {
    where.push(clause);
    if (value !== undefined) params.push(value);
  }
  if (opts.after) {
    where.push(`(${keyColumn} < ? OR (${keyColumn} = ? AND id < ?))`);
    params.push(opts.after.at, opts.after.at, opts.after.id);
  }
  const sql =
    `SELECT * FROM ${table}` +
    (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY ${keyColumn} DESC, id DESC LIMIT ?`;
  params.push(opts.limit + 1);
  return { sql, params };
}

/**
 * A page's key in the memo: its filters (clause and value), limit and starting point, which decide
 * its query exactly. Made without the query's SQL text, which a page served from the memo never needs.
 */
function pageKey(filters: readonly ListFilter[], opts: ListOptions): string {
  return JSON.stringify([opts.limit, opts.after?.at ?? null, opts.after?.id ?? null, filters]);
}

function page<R, T>(rows: R[], limit: number, map: (r: R) => T, key: (t: T) => PageKey): Page<T> {
  const items = rows.slice(0, limit).map(map);
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last ? key(last) : null };
}

/**
 * The memo of list pages shared by every list of one connection, and of other reads memoised the
 * same way (`alsoForget`: the revocation answers). List pages are read far more often than written
 * (apps poll; devices and alerts change rarely), and turning SQLite rows into objects costs ~3 µs a
 * row on a Pi-class CPU. Pages are memoised until the next write: the connection's writes clear the
 * memo directly, other connections' show in data_version. Every page of every list is in one map,
 * keyed by its list and its query, so a clear can never miss one.
 */
export class PageMemo {
  /** Every kept page by `list\0query`, oldest first. */
  private readonly pages = new Map<string, unknown>();
  private readonly others: Array<{ clear(): void }> = [];
  private dataVersion = -1;
  /** now() (ms) just before data_version was last read. */
  private lookedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly readDataVersion: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Another memo of reads, cleared whenever the pages are. */
  alsoForget(memo: { clear(): void }): void {
    this.others.push(memo);
  }

  get size(): number {
    return this.pages.size;
  }

  clear(): void {
    this.pages.clear();
    for (const memo of this.others) memo.clear();
  }

  /**
   * Forgets everything memoised when another connection has committed since the last look, looking
   * at most once every OTHER_COMMITS_LOOK_MS. This connection's own writes clear the memo at once.
   */
  forgetIfChangedElsewhere(): void {
    const lookedAt = this.now();
    if (lookedAt - this.lookedAt < OTHER_COMMITS_LOOK_MS) return;
    const dataVersion = this.readDataVersion();
    this.lookedAt = lookedAt;
    if (dataVersion !== this.dataVersion) {
      this.clear();
      this.dataVersion = dataVersion;
    }
  }

  /** The page kept for this list and query, if any (the caller knows its type: one list, one type). */
  get<T>(list: string, query: string): T | undefined {
    return this.pages.get(`${list}\0${query}`) as T | undefined;
  }

  /** Keeps a page, giving up the oldest kept page when full. */
  keep(list: string, query: string, page: unknown): void {
    if (this.pages.size >= MAX_CACHED_PAGES) {
      for (const oldest of this.pages.keys()) {
        this.pages.delete(oldest);
        break;
      }
    }
    this.pages.set(`${list}\0${query}`, page);
  }
}

/** One table's newest-first list, paged by keyset and memoised in the connection's PageMemo. */
export class PagedList<Row, Item> {
  // Prepared once per distinct SQL text; the set is finite (the combinations of this list's filters).
  private readonly statements = new Map<string, Database.Statement<unknown[], Row>>();

  constructor(
    private readonly db: Database.Database,
    private readonly memo: PageMemo,
    private readonly shape: {
      table: string;
      keyColumn: string;
      toItem: (r: Row) => Item;
      keyOf: (item: Item) => PageKey;
    },
  ) {}

  page(filters: readonly ListFilter[], opts: ListOptions): Page<Item> {
    this.memo.forgetIfChangedElsewhere();
    const cacheKey = pageKey(filters, opts);
    const hit = this.memo.get<Page<Item>>(this.shape.table, cacheKey);
    if (hit) return hit;
    const q = keysetQuery(this.shape.table, this.shape.keyColumn, filters, opts);
    const result = page(this.statement(q.sql).all(...q.params), opts.limit, this.shape.toItem, this.shape.keyOf);
    this.memo.keep(this.shape.table, cacheKey, result);
    return result;
  }

  private statement(sql: string): Database.Statement<unknown[], Row> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown[], Row>(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }
}
