import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_CACHE_BYTES } from '../../src/store/connection.js';
import { registerStoreMetrics } from '../../src/store/metrics.js';
import { Store } from '../../src/store/store.js';
import { onlineCamera } from '../support/devices.js';
import { tempDir } from '../support/temp-dir.js';

// SQLite's page cache fills as the database grows, and held a gateway's memory growing for hours:
// better-sqlite3's default is 16 MB per connection. The pattern, in a process of its own so that
// nothing else moves its memory: a database far larger than the bound, written and read through
// once, against the anonymous memory the process holds (RssAnon: the page cache is malloc'd; the
// database file's own pages are the kernel's).

const ROOT = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The script: opens the database (the built store's Connection, or better-sqlite3 left as it is). */
const script = (opener: 'connection' | 'default') => `
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Connection } from ${JSON.stringify(path.join(ROOT, 'dist/store/connection.js'))};
const dir = process.argv[1];
const db = ${opener === 'connection' ? 'Connection.open(dir).db' : "new Database(path.join(dir, 'raw.db'))"};
const anonKiB = () => Number(/RssAnon:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, b BLOB)');
const before = anonKiB();
// 48 MB of rows, written and then read, in SQL alone (no JavaScript values to hold memory).
db.exec('WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 12000) INSERT INTO filler SELECT x, randomblob(4000) FROM n');
db.prepare('SELECT sum(length(b) + unicode(substr(b, 2000, 1))) FROM filler').get();
const grew = anonKiB() - before;
const pages = db.prepare('PRAGMA page_count').pluck().get() * db.prepare('PRAGMA page_size').pluck().get();
console.log(JSON.stringify({ grewBytes: grew * 1024, databaseBytes: pages }));
`;

function run(opener: 'connection' | 'default'): { grewBytes: number; databaseBytes: number } {
  const dir = tempDir('eg-page-cache-');
  dirs.push(dir);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script(opener), dir], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { grewBytes: number; databaseBytes: number };
}

describe('the store keeps a bounded share of the database in memory', () => {
  it('says its bound, smaller than SQLite would take, and the database size, in /metrics too', async () => {
    const dir = tempDir('eg-page-cache-');
    dirs.push(dir);
    const store = Store.open(dir);
    expect(store.pageCacheLimitBytes).toBe(PAGE_CACHE_BYTES);
    expect(PAGE_CACHE_BYTES).toBeLessThan(16_000 * 1024);
    const empty = store.databaseBytes();
    expect(empty).toBeGreaterThan(0);
    store.transaction(() => {
      for (let i = 0; i < 200; i++) store.upsertDevice({ ...onlineCamera(`cam${i}`), createdAt: i });
    });
    expect(store.databaseBytes()).toBeGreaterThan(empty);
    const registry = new Registry();
    registerStoreMetrics(registry, store);
    const text = await registry.metrics();
    expect(text).toContain(`edge_gateway_store_page_cache_limit_bytes ${PAGE_CACHE_BYTES}`);
    expect(text).toContain(`edge_gateway_store_database_bytes ${store.databaseBytes()}`);
    store.close();
  });

  it('a database ten times the bound, written and read, grows the memory by the bound at most, where SQLite left alone grows by 16 MB', () => {
    const slack = 3 * 2 ** 20;
    const bounded = run('connection');
    const unbounded = run('default');
    expect(bounded.databaseBytes).toBeGreaterThan(10 * PAGE_CACHE_BYTES);
    // The pattern shows without the bound, so the assertion below can fail.
    expect(unbounded.grewBytes).toBeGreaterThan(PAGE_CACHE_BYTES + slack);
    expect(bounded.grewBytes).toBeLessThan(PAGE_CACHE_BYTES + slack);
  });
});
