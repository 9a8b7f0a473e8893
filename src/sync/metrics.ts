import { Gauge, type Registry } from 'prom-client';
import { mirroredCounter } from '../metrics/mirrored-counter.js';
import type { OutboxKind } from '../store/store.js';
import type { CloudSync } from './cloud-sync.js';

// The cloud link in /metrics, read at scrape time.

export interface OutboxFigures {
  readonly outboxSize: number;
  readonly outboxEvicted: Readonly<Record<OutboxKind, number>>;
}

export function registerSyncMetrics(registry: Registry, sync: CloudSync, outbox: OutboxFigures): void {
  new Gauge({
    name: 'edge_gateway_sync_connected',
    help: '1 while the MQTT link to the cloud broker is up',
    registers: [registry],
    collect() {
      this.set(sync.connected ? 1 : 0);
    },
  });
  new Gauge({
    name: 'edge_gateway_sync_outbox_messages',
    help: 'Messages waiting in the outbox for the cloud',
    registers: [registry],
    collect() {
      this.set(outbox.outboxSize);
    },
  });
  mirroredCounter(registry, 'edge_gateway_sync_outbox_evicted_total', 'Messages given up because the outbox was full, by kind', () => outbox.outboxEvicted, 'kind');
  mirroredCounter(
    registry,
    'edge_gateway_sync_messages_total',
    'Cloud messages by outcome: published (handed to the broker), acknowledged, commands received, commands refused',
    () => ({ published: sync.stats.published, acknowledged: sync.stats.acknowledged, commands: sync.stats.commands, refused: sync.stats.refusedCommands }),
    'outcome',
  );
}
