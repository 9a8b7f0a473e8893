import { collectedGauge } from '../../metrics/collected-gauge.js';
import { Gauge, type Registry } from 'prom-client';
import { mirroredCounter } from '../../metrics/mirrored-counter.js';
import type { AudioTranscodersStats } from './audio-transcoders.js';
import type { WebRtcStats } from './sessions.js';

// WebRTC live view in /metrics, read when Prometheus scrapes (sessions keep plain counters).

export function registerWebRtcMetrics(registry: Registry, stats: () => WebRtcStats): void {
  new Gauge({
    name: 'edge_gateway_webrtc_sessions',
    help: 'WebRTC (WHEP) viewer sessions, by state (starting: answer being made; open: answered, connected or not yet; connected: media flowing)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const s = stats();
      this.set({ state: 'starting' }, s.starting);
      this.set({ state: 'open' }, s.sessions);
      this.set({ state: 'connected' }, s.connected);
    },
  });
  mirroredCounter(
    registry,
    'edge_gateway_webrtc_sessions_refused_total',
    'WHEP POSTs refused, by reason (capacity: webrtc.max_sessions; per_address_limit: webrtc.max_sessions_per_address; bad_offer; no_common_codec; stream_unavailable)',
    () => stats().refused,
    'reason',
  );
  mirroredCounter(
    registry,
    'edge_gateway_webrtc_sessions_ended_total',
    'WebRTC sessions ended, by reason (deleted; ice_timeout: never connected; ice_failed; consent_lost: peer gone (RFC 7675); max_lifetime: rtsp.max_session_s; evicted: fell behind; shutdown)',
    () => stats().ended,
    'reason',
  );
  mirroredCounter(registry, 'edge_gateway_webrtc_packets_sent_total', 'RTP packets sent to WebRTC viewers', () => ({
    total: stats().packetsSent,
  }));
  mirroredCounter(
    registry,
    'edge_gateway_webrtc_nack_received_total',
    'RTCP NACKs from WebRTC viewers (answered from the bounded retransmission buffer)',
    () => ({ total: stats().nack }),
  );
  mirroredCounter(registry, 'edge_gateway_webrtc_keyframe_requests_total', 'PLI/FIR from WebRTC viewers', () => ({
    total: stats().pli,
  }));
  mirroredCounter(
    registry,
    'edge_gateway_webrtc_keyframes_served_total',
    "Keyframe requests answered, by source (cache: the relay's cached group of pictures; camera: forwarded, rate-limited)",
    () => ({ cache: stats().keyframesFromCache, camera: stats().keyframesFromCamera }),
    'source',
  );
}

/** The AAC → Opus transcoders (webrtc.audio_transcode), when on. */
export function registerAudioTranscoderMetrics(registry: Registry, stats: () => AudioTranscodersStats): void {
  collectedGauge(
    registry,
    'edge_gateway_webrtc_audio_transcoders',
    'AAC to Opus ffmpeg processes running (one per camera profile with WebRTC viewers taking audio; webrtc.max_audio_transcoders)',
    () => stats().running,
  );
  collectedGauge(
    registry,
    'edge_gateway_webrtc_audio_transcoder_listeners',
    'WebRTC sessions receiving Opus from a transcoder',
    () => stats().listeners,
  );
  mirroredCounter(
    registry,
    'edge_gateway_webrtc_audio_transcoder_packets_total',
    'Opus RTP packets from the transcoders',
    () => ({ total: stats().packets }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_webrtc_audio_transcoder_restarts_total',
    'Transcoder ffmpeg processes that ended while viewers listened (restarted with backoff)',
    () => ({ total: stats().restarts }),
  );
  mirroredCounter(
    registry,
    'edge_gateway_webrtc_audio_transcoder_refused_total',
    'Sessions given video only because webrtc.max_audio_transcoders were running',
    () => ({ total: stats().refused }),
  );
}
