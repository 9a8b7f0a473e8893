import type { Registry } from 'prom-client';
import { collectedGauge } from '../../metrics/collected-gauge.js';
import { mirroredCounter } from '../../metrics/mirrored-counter.js';
import type { HlsServiceStats } from './service.js';

// The HLS server's figures in /metrics, read when Prometheus scrapes (as relay/metrics.ts).

export function registerHlsMetrics(registry: Registry, stats: () => HlsServiceStats): void {
  const gauge = (name: string, help: string, read: (s: HlsServiceStats) => number): void =>
    collectedGauge(registry, name, help, () => read(stats()));
  gauge('edge_gateway_hls_muxers', 'Camera profiles muxed to LL-HLS now (hls.max_muxers at most)', (s) => s.muxers);
  gauge('edge_gateway_hls_sessions', 'HLS viewer sessions (hls.max_sessions at most)', (s) => s.sessions);
  gauge(
    'edge_gateway_hls_blocked_requests',
    'HLS requests held for a blocking reload or a preload hint (hls.max_blocked_requests at most)',
    (s) => s.blockedRequests,
  );
  gauge('edge_gateway_hls_bytes', 'Media bytes the HLS muxers hold in memory', (s) => s.bytes);
  mirroredCounter(
    registry,
    'edge_gateway_hls_requests_refused_total',
    'HLS requests answered 503, by reason (too_many_muxers, too_many_sessions, too_many_blocked, stream_unavailable, timeout)',
    () => stats().refused,
    'reason',
  );
  mirroredCounter(
    registry,
    'edge_gateway_hls_segments_evicted_total',
    'HLS segments dropped from memory to stay within the window',
    () => ({ total: stats().evictedSegments }),
  );
}
