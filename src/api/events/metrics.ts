import { collectedGauge } from '../../metrics/collected-gauge.js';
import { type Registry } from 'prom-client';
import { mirroredCounter } from '../../metrics/mirrored-counter.js';
import type { EventHubStats } from './hub.js';

// The event stream's figures in /metrics, read when Prometheus scrapes (as the relay's and HLS's).

export function registerEventStreamMetrics(registry: Registry, stats: () => EventHubStats): void {
  collectedGauge(
    registry,
    'edge_gateway_event_stream_subscribers',
    'Open GET /v1/events streams (events.max_subscribers at most)',
    () => stats().subscribers,
  );
  mirroredCounter(
    registry,
    'edge_gateway_event_stream_events_sent_total',
    'Events written to event streams (one per stream an event went to)',
    () => ({ total: stats().sent }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_event_stream_refused_total',
    'Event streams refused with 503: events.max_subscribers were open',
    () => ({ total: stats().refused }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_event_stream_disconnects_total',
    'Event streams ended, by reason (slow_consumer: cut off past events.max_queue_bytes; token_expired; token_revoked; gateway_stopping; client_closed)',
    () => stats().disconnects,
    'reason',
  );
}
