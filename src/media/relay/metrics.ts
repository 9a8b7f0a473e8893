import { collectedGauge } from '../../metrics/collected-gauge.js';
import { Gauge, type Registry } from 'prom-client';
import { mirroredCounter } from '../../metrics/mirrored-counter.js';
import type { RelayServerStats } from './server.js';
import type { RelayStreamsStats } from './streams.js';

// The relay's figures in /metrics, read when Prometheus scrapes (nothing is counted per packet
// here: the fan-outs keep plain counters and these read them).

export interface RelayMetricsSource {
  server: () => RelayServerStats;
  streams: () => RelayStreamsStats;
}

export function registerRelayMetrics(registry: Registry, source: RelayMetricsSource): void {
  collectedGauge(
    registry,
    'edge_gateway_relay_connections',
    'RTSP connections from viewers to the relay',
    () => source.server().connections,
  );
  new Gauge({
    name: 'edge_gateway_relay_sessions',
    help: 'RTSP sessions of viewers by RTP transport (tcp: interleaved, udp)',
    labelNames: ['transport'],
    registers: [registry],
    collect() {
      const { sessions } = source.server();
      this.set({ transport: 'tcp' }, sessions.tcp);
      this.set({ transport: 'udp' }, sessions.udp);
    },
  });
  collectedGauge(
    registry,
    'edge_gateway_relay_readers',
    'Readers (playing viewers and the recorder) attached to camera streams',
    () => source.streams().readers,
  );
  collectedGauge(
    registry,
    'edge_gateway_relay_camera_sessions',
    'Open RTSP sessions from the relay to cameras (one per camera profile in use)',
    () => source.streams().cameraSessions,
  );
  mirroredCounter(
    registry,
    'edge_gateway_relay_connections_refused_total',
    'RTSP connections refused, by reason (per_address_limit: rtsp.max_connections_per_address)',
    () => source.server().refused,
    'reason',
  );
  mirroredCounter(registry, 'edge_gateway_relay_packets_delivered_total', 'RTP packets handed to readers', () => ({
    total: source.streams().delivered,
  }));
  mirroredCounter(
    registry,
    'edge_gateway_relay_packets_dropped_total',
    'RTP packets a slow or waiting reader skipped',
    () => ({ total: source.streams().dropped }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_relay_readers_evicted_total',
    'Readers disconnected for staying behind or a codec change',
    () => ({ total: source.streams().evicted }),
  );
}
