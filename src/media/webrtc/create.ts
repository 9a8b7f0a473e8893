import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.js';
import type { StreamProfile } from '../../domain/types.js';
import { AudioTranscoders } from './audio-transcoders.js';
import { registerAudioTranscoderMetrics, registerWebRtcMetrics } from './metrics.js';
import { WebRtcSessions, type WebRtcSessionsOptions } from './sessions.js';

/** Opus made from a camera's AAC: 32 kbit/s is clear speech and leaves room for many viewers. */
const OPUS_BITRATE = 32_000;

/**
 * WebRTC live view (WHEP) of config webrtc.*: sessions read the relay's camera streams like RTSP
 * viewers. With webrtc.audio_transcode, an ffmpeg per camera turns AAC into Opus, reading the audio
 * through the relay at `localUrl` as the recorder does. `defer` is given what closes them.
 */
export function createWebRtc(
  config: Config,
  deps: {
    acquire: WebRtcSessionsOptions['acquire'];
    localUrl: (deviceId: string, profile: StreamProfile) => string;
    registry: Registry;
    logger: BaseLogger;
  },
  defer: (undo: () => unknown) => void,
): WebRtcSessions {
  const w = config.webrtc;
  const audioTranscoders = w.audio_transcode
    ? new AudioTranscoders({
        ffmpegPath: config.ffmpeg.path,
        inputUrl: deps.localUrl,
        maxTranscoders: w.max_audio_transcoders,
        bitrate: OPUS_BITRATE,
        logger: deps.logger,
      })
    : null;
  if (audioTranscoders) {
    defer(() => audioTranscoders.close());
    registerAudioTranscoderMetrics(deps.registry, () => audioTranscoders.stats());
  }
  const sessions = new WebRtcSessions({
    acquire: deps.acquire,
    maxSessions: w.max_sessions,
    maxSessionsPerAddress: w.max_sessions_per_address,
    bindAddress: w.bind_address,
    iceServers: w.ice_servers,
    portRange: w.udp_port_max > 0 ? { begin: w.udp_port_min || 1024, end: w.udp_port_max } : null,
    connectTimeoutS: w.connect_timeout_s,
    nackBufferPackets: w.nack_buffer_packets,
    audioTranscode: audioTranscoders,
    logger: deps.logger,
  });
  defer(() => sessions.close());
  registerWebRtcMetrics(deps.registry, () => sessions.stats());
  return sessions;
}
