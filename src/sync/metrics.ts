import { collectedGauge } from '../metrics/collected-gauge.js';
import { type Registry } from 'prom-client';
import { mirroredCounter } from '../metrics/mirrored-counter.js';
import type { OutboxKind } from '../store/store.js';
import type { CloudSync } from './cloud-sync.js';

// The cloud link in /metrics, read at scrape time.

export interface OutboxFigures {
  readonly outboxSize: number;
  readonly outboxEvicted: Readonly<Record<OutboxKind, number>>;
}

export function registerSyncMetrics(registry: Registry, sync: CloudSync, outbox: OutboxFigures): void {
  collectedGauge(registry, 'edge_gateway_sync_connected', '1 while the MQTT link to the cloud broker is up', () =>
    sync.connected ? 1 : 0,
  );
  collectedGauge(
    registry,
    'edge_gateway_sync_outbox_messages',
    'Messages waiting in the outbox for the cloud',
    () => outbox.outboxSize,
  );
  mirroredCounter(
    registry,
    'edge_gateway_sync_outbox_evicted_total',
    'Messages given up because the outbox was full, by kind',
    () => outbox.outboxEvicted,
    'kind',
  );
  mirroredCounter(
    registry,
    'edge_gateway_sync_messages_total',
    'Cloud messages by outcome: published (handed to the broker), acknowledged, commands received, commands refused',
    () => ({
      published: sync.stats.published,
      acknowledged: sync.stats.acknowledged,
      commands: sync.stats.commands,
      refused: sync.stats.refusedCommands,
    }),
    'outcome',
  );
}
