import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.js';
import type { MintPlayback } from '../../domain/present.js';
import type { EventLogLimits } from '../../store/event-log.js';
import { EventHub, type EventLogReader } from './hub.js';
import { registerEventStreamMetrics } from './metrics.js';

/** What the event stream needs of the store: its event log, switched on, and read. */
export interface EventLog extends EventLogReader {
  enableEventLog(limits: EventLogLimits, onEvent: () => void): void;
}

/**
 * The API's event stream (config events.*). From here on every change it tells of is kept in the
 * store in the same transaction as the change, before anything (crash recovery included) can make
 * one; each kept event wakes the hub.
 */
export function createEventHub(
  config: Config['events'],
  deps: { store: EventLog; mintPlayback: MintPlayback; registry: Registry },
): EventHub {
  const hub = new EventHub({
    events: deps.store,
    // recording.created carries playback_url as GET does (the stream's token has recordings:read).
    mintPlayback: deps.mintPlayback,
    maxSubscribers: config.max_subscribers,
    heartbeatMs: config.heartbeat_s * 1000,
    maxQueueBytes: config.max_queue_bytes,
    revocationCheckMs: config.revocation_check_ms,
  });
  deps.store.enableEventLog({ maxEvents: config.window_max_events, maxAgeMs: config.window_max_age_s * 1000 }, () =>
    hub.notify(),
  );
  registerEventStreamMetrics(deps.registry, () => hub.stats());
  return hub;
}
