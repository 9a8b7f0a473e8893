import { Histogram, type Registry } from 'prom-client';
import { collectedGauge } from '../../metrics/collected-gauge.js';
import { mirroredCounter } from '../../metrics/mirrored-counter.js';
import type { FootageStats } from './service.js';

// Continuous recording's figures in /metrics, read when Prometheus scrapes (as relay/metrics.ts);
// the index commits' durations are observed as they happen (once a flush_s).

export function registerFootageMetrics(
  registry: Registry,
  stats: () => FootageStats,
  now: () => number = Date.now,
): (seconds: number) => void {
  const gauge = (name: string, help: string, read: (s: FootageStats) => number): void =>
    collectedGauge(registry, name, help, () => read(stats()));
  gauge('edge_gateway_footage_cameras', 'Cameras whose continuous footage is being written now', (s) => s.cameras);
  gauge(
    'edge_gateway_footage_pending_rows',
    'Footage files written and fsynced whose index rows wait for the next commit',
    (s) => s.pendingRows,
  );
  gauge('edge_gateway_footage_oldest_age_seconds', 'Age of the oldest continuous footage kept (0 when none)', (s) =>
    s.oldestMs === null ? 0 : Math.max(0, (now() - s.oldestMs) / 1000),
  );
  mirroredCounter(
    registry,
    'edge_gateway_footage_bytes_received_total',
    'Bytes of the camera streams kept (RTP payloads) read by continuous recording',
    () => ({ total: stats().bytesReceived }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_footage_bytes_written_total',
    'Bytes of continuous footage written to the footage disk',
    () => ({ total: stats().bytesWritten }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_footage_files_written_total',
    'Continuous footage files written, fsynced and queued for the index',
    () => ({ total: stats().filesWritten }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_footage_fragments_dropped_total',
    'Groups of pictures not written: the disk was behind, or the writer waited for a keyframe',
    () => ({ total: stats().droppedFragments }),
  );
  gauge(
    'edge_gateway_footage_dated_ahead_seconds',
    "The most any camera's footage runs ahead of the gateway's clock (a camera clock running fast): its pictures are dated that late",
    (s) => s.aheadMs / 1000,
  );
  mirroredCounter(
    registry,
    'edge_gateway_footage_resyncs_total',
    "Continuous footage runs started anew because a camera's media time and the gateway's clock parted by over 2 s (each starts a file)",
    () => ({ total: stats().resyncs }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_footage_errors_total',
    'Footage disk failures that stopped continuous recording, by cause (disk_missing, disk_full, read_only, io, other)',
    () => stats().errors,
    'cause',
  );
  const flush = new Histogram({
    name: 'edge_gateway_footage_index_flush_seconds',
    help: 'Time to commit one batch of footage index rows',
    buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2],
    registers: [registry],
  });
  return (seconds) => flush.observe(seconds);
}
