import type { Registry } from 'prom-client';
import { collectedGauge } from '../metrics/collected-gauge.js';
import { mirroredCounter } from '../metrics/mirrored-counter.js';
import type { NotifierStats } from './notifier.js';

// Web Push in /metrics, read at scrape time.

export interface PushFigures {
  readonly pushQueueSize: number;
  readonly pushSubscriptionCount: number;
}

export function registerPushMetrics(registry: Registry, stats: NotifierStats, figures: PushFigures): void {
  mirroredCounter(
    registry,
    'edge_gateway_push_sent_total',
    'Pushes a push service accepted (test notifications included)',
    () => ({ total: stats.sent }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_push_failed_total',
    'Attempts to send a push that failed, by reason (some are tried again: see edge_gateway_push_dropped_total)',
    () => stats.failed,
    'reason',
  );
  mirroredCounter(
    registry,
    'edge_gateway_push_collapsed_total',
    "Waiting pushes replaced by a newer alert of the same camera (cooldown, or the push service's backoff)",
    () => ({ total: stats.collapsed }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_push_dropped_total',
    'Pushes given up, by reason: expired (not delivered within notifications.ttl_s), refused by the push service, queue_full, alert_gone, endpoint_not_allowed',
    () => stats.dropped,
    'reason',
  );
  mirroredCounter(
    registry,
    'edge_gateway_push_subscriptions_removed_total',
    'Subscriptions removed because their push service said they are gone (404, 410)',
    () => ({ total: stats.removed }),
  );
  collectedGauge(registry, 'edge_gateway_push_queue', 'Pushes waiting to be sent', () => figures.pushQueueSize);
  collectedGauge(
    registry,
    'edge_gateway_push_subscriptions',
    'Web Push subscriptions kept',
    () => figures.pushSubscriptionCount,
  );
}
