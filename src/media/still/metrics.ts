import { collectedGauge } from '../../metrics/collected-gauge.js';
import { Gauge, type Registry } from 'prom-client';
import { mirroredCounter } from '../../metrics/mirrored-counter.js';
import type { DecodeBatchStats } from './decode-batches.js';
import type { DecodeSlotStats } from './decode-slots.js';
import type { LiveDecoderStats } from './live-decoders.js';
import type { SnapshotStats } from './snapshots.js';

// The snapshot endpoint in /metrics, read when Prometheus scrapes.

export interface SnapshotStatSources {
  snapshots: () => SnapshotStats;
  slots: () => DecodeSlotStats;
  batches: () => DecodeBatchStats;
  live: () => LiveDecoderStats;
}

export function registerSnapshotMetrics(registry: Registry, sources: SnapshotStatSources): void {
  const { snapshots: stats, slots, batches, live } = sources;
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_decodes_total',
    "Still pictures decoded by ffmpeg, by input (keyframe: the relay's cached keyframe; camera_jpeg: the camera's snapshot scaled)",
    () => stats().decodes,
    'input',
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_ffmpeg_runs_total',
    'Short-lived ffmpeg processes run for snapshots (pictures no long-lived decoder took; those of one size asked within snapshot.batch_window_ms share one)',
    () => ({ total: batches().runs }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_reused_total',
    "Snapshot pictures not decoded again: the relay's keyframe was the one decoded last time",
    () => ({ total: stats().reused }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_decoder_starts_total',
    'Long-lived snapshot decoders (ffmpeg) started',
    () => ({ total: live().starts }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_decoder_pictures_total',
    'Pictures decoded by the long-lived snapshot decoders',
    () => ({ total: live().pictures }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_decoder_failures_total',
    'Long-lived snapshot decoders ended by a failure (the picture was then decoded by one ffmpeg run), by reason',
    () => live().failures,
    'reason',
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_camera_fetches_total',
    "Pictures asked of a camera's ONVIF snapshot URI (the relay had none)",
    () => ({ total: stats().cameraFetches }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_cache_hits_total',
    'Snapshot requests answered from the picture made less than snapshot.cache_ms ago',
    () => ({ total: stats().cacheHits }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_coalesced_total',
    'Snapshot requests that waited for a picture already being made',
    () => ({ total: stats().coalesced }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_failures_total',
    'Snapshot pictures that could not be made, by where (relay: tried the camera next; camera; unavailable: neither)',
    () => stats().failures,
    'where',
  );
  mirroredCounter(
    registry,
    'edge_gateway_snapshot_refused_total',
    'Snapshot decode runs refused: snapshot.max_concurrent_decodes running and snapshot.max_queued_decodes waiting',
    () => ({ total: slots().refused }),
  );
  new Gauge({
    name: 'edge_gateway_snapshot_in_flight',
    help: 'Snapshot pictures being made (one per device and width), and decodes running and waiting for a slot',
    labelNames: ['stage'],
    registers: [registry],
    collect() {
      this.set({ stage: 'pictures' }, stats().inFlight);
      this.set({ stage: 'decoding' }, slots().running);
      this.set({ stage: 'waiting' }, slots().waiting);
    },
  });
  collectedGauge(
    registry,
    'edge_gateway_snapshot_decoders',
    'Long-lived snapshot decoders (ffmpeg processes) running, at most snapshot.max_decoders',
    () => live().running,
  );
}
