import { collectedGauge } from '../metrics/collected-gauge.js';
import type { Registry } from 'prom-client';

/** What the store's gauges read (Store has them). */
export interface StoreFigures {
  databaseBytes(): number;
  readonly pageCacheLimitBytes: number;
}

/** The database's size and the bound of what SQLite keeps of it in memory, read at each scrape. */
export function registerStoreMetrics(registry: Registry, store: StoreFigures): void {
  collectedGauge(registry, 'edge_gateway_store_database_bytes', 'Size of the gateway database (SQLite pages)', () =>
    store.databaseBytes(),
  );
  collectedGauge(
    registry,
    'edge_gateway_store_page_cache_limit_bytes',
    'The most of the database SQLite keeps in the daemon memory (its page cache bound)',
    () => store.pageCacheLimitBytes,
  );
}
