import { collectedGauge } from '../metrics/collected-gauge.js';
import type { Registry } from 'prom-client';

/** What the store's gauges read (Store has them). */
export interface StoreFigures {
  databaseBytes(): number;
  readonly pageCacheLimitBytes: number;
}

/** The database's size and the bound of what SQLite keeps of it in memory, read at each scrape. */
export function registerStoreMetrics(registry: Registry, store: StoreFigures): void {
  // Pages, what the page cache bound relates to; GET /v1/system's disk use counts the files (-wal too).
  collectedGauge(
    registry,
    'edge_gateway_store_database_bytes',
    'Size of the gateway database in SQLite pages (page_count x page_size; the -wal file is not counted)',
    () => store.databaseBytes(),
  );
  collectedGauge(
    registry,
    'edge_gateway_store_page_cache_limit_bytes',
    'The most of the database SQLite keeps in the daemon memory (its page cache bound)',
    () => store.pageCacheLimitBytes,
  );
}
