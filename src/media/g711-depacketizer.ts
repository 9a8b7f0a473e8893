import type { AudioFrame, DepacketizerStats } from './access-unit.js';
import { packetsLostBefore, type RtpHeader } from './rtp.js';

// G.711 in RTP (RFC 3551 4.5.14, PCMU and PCMA): the payload is the samples themselves, one byte a
// sample a channel, channels interleaved, and the RTP timestamp is the first sample's. Each packet
// is one frame, dated by its timestamp: frames are not joined or split, so a lost packet leaves a
// gap in time that the muxer fills (g711-fit.ts). Packets of another payload type in the session
// (comfort noise, RFC 3389; telephone events) carry no samples and are passed over. Nothing throws on
// packet bytes: an empty payload or one that is not whole samples for every channel is dropped and
// counted.

export interface G711RtpParameters {
  /** The SDP's payload type for the G.711 format. */
  payloadType: number;
  channels: number;
}

export class G711Depacketizer {
  readonly stats: DepacketizerStats = { units: 0, dropped: 0, lostPackets: 0 };
  private lastSequence = -1;
  private lossSinceEmit = false;

  constructor(
    private readonly params: G711RtpParameters,
    private readonly emit: (frame: AudioFrame) => void,
  ) {}

  push(packet: Buffer, header: RtpHeader): void {
    const lost = packetsLostBefore(header.sequence, this.lastSequence);
    if (lost < 0) return;
    this.lastSequence = header.sequence;
    if (lost > 0) {
      this.stats.lostPackets += lost;
      this.lossSinceEmit = true;
    }
    if (header.payloadType !== this.params.payloadType) return;
    const { payloadOffset, payloadLength } = header;
    if (payloadLength === 0 || payloadLength % this.params.channels !== 0) {
      this.stats.dropped++;
      this.lossSinceEmit = true;
      return;
    }
    this.stats.units++;
    const afterLoss = this.lossSinceEmit;
    this.lossSinceEmit = false;
    this.emit({
      rtpTime: header.timestamp,
      data: packet.subarray(payloadOffset, payloadOffset + payloadLength),
      afterLoss,
    });
  }
}
