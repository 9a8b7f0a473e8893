import type { BaseLogger } from 'pino';
import type { RelayStreams } from '../../../src/media/relay/streams.js';
import { WebRtcSessions } from '../../../src/media/webrtc/sessions.js';

/** The WebRTC sessions of the tests that run the WHEP routes without the daemon: loopback only. */
export function loopbackWebRtcSessions(streams: RelayStreams, logger: BaseLogger): WebRtcSessions {
  return new WebRtcSessions({
    acquire: (deviceId, profile) => streams.acquire(deviceId, profile),
    maxSessions: 4,
    maxSessionsPerAddress: 4,
    bindAddress: '127.0.0.1',
    iceServers: [],
    portRange: null,
    connectTimeoutS: 10,
    nackBufferPackets: 512,
    audioTranscode: null,
    logger,
  });
}
