import { collectDefaultMetrics, Registry } from 'prom-client';
import { isLoopbackHost } from '../config/load.js';
import { parseListenAddress, type ListenAddress } from '../config/listen.js';
import type { Config } from '../config/schema.js';
import { readVersion } from '../version.js';
import { registerGatewayMetrics } from './gateway-metrics.js';

export interface GatewayMetrics {
  /** Every part registers its series here. */
  registry: Registry;
  /** Where the metrics listener is to listen (config metrics.listen); null: none. */
  listen: ListenAddress | null;
}

/** The registry with Node's process series and the gateway's own facts (config metrics.*). */
export function createMetrics(
  config: Config,
  facts: { gatewayId: string; clockSynchronized: () => boolean | null },
): GatewayMetrics {
  const registry = new Registry();
  // The event-loop delay is sampled by a timer; prom-client's 10 ms one woke an idle gateway 100
  // times a second, ~1 % of a core doing nothing (docs/performance.md). Every 100 ms still catches
  // every stall that long and samples shorter ones.
  collectDefaultMetrics({ register: registry, prefix: 'edge_gateway_', eventLoopMonitoringPrecision: 100 });
  const listen = config.metrics.listen === null ? null : parseListenAddress(config.metrics.listen);
  registerGatewayMetrics(registry, {
    version: readVersion(),
    // The id names this gateway's MQTT topics: it is shown only where this box alone can look.
    gatewayId: listen && isLoopbackHost(listen.host) ? facts.gatewayId : null,
    clockSynchronized: facts.clockSynchronized,
  });
  return { registry, listen };
}
