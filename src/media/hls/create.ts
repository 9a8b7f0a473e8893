import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.js';
import { registerHlsMetrics } from './metrics.js';
import { HlsService, type HlsServiceOptions } from './service.js';

/** LL-HLS of config hls.*: muxers fed by the relay's camera sessions, served under /live/{ticket}/ by the API. */
export function createHls(
  config: Config,
  deps: { acquire: HlsServiceOptions['acquire']; registry: Registry; logger: BaseLogger },
  defer: (undo: () => unknown) => void,
): HlsService {
  const hls = new HlsService({
    acquire: deps.acquire,
    logger: deps.logger,
    maxMuxers: config.hls.max_muxers,
    maxSessions: config.hls.max_sessions,
    maxBlockedRequests: config.hls.max_blocked_requests,
    partTarget: config.hls.part_target_ms / 1000,
    targetDuration: config.hls.target_duration_s,
    maxBytesPerMuxer: config.hls.max_bytes_per_muxer,
    idleS: config.hls.idle_close_s,
    maxSessionS: config.rtsp.max_session_s,
  });
  defer(() => hls.close());
  registerHlsMetrics(deps.registry, () => hls.stats());
  return hls;
}
