// One peer's view of one camera track: the relay's shared packets get this peer's SSRC, payload
// type, a sequence number of its own and a timestamp of its own, written into a copy (the shared
// Buffer is never modified).
//
// - Sequence: a per-peer counter, so packets the fan-out skipped for this peer (it fell behind, or
//   joined mid-GOP) do not look like loss to be NACKed; a gap in the camera's own numbering (real
//   loss upstream) is carried over, so the browser still sees it.
// - Timestamp: during a burst (the cached group of pictures handed over at once, or again after a
//   keyframe request) each new picture is placed one tick (1 ms) after the previous one, so the
//   browser decodes the cached pictures at once and starts at live, not a GOP behind; after the
//   burst the camera's spacing is kept, continuing from where the burst ended.

import { readRtpHeaderInto, createRtpHeader } from '../rtp.js';

export interface RewriterOptions {
  ssrc: number;
  payloadType: number;
  clockRate: number;
  /** First sequence number and timestamp (random for a new peer, RFC 3550 5.1). */
  initialSequence: number;
  initialTimestamp: number;
}

export class RtpRewriter {
  private readonly header = createRtpHeader();
  private sequence: number;
  /** Timestamp written for the previous packet, and the camera's timestamp it came from. */
  private lastOut: number;
  private lastIn: number | null = null;
  private lastInSequence: number | null = null;
  private burst = false;
  private readonly tick: number;

  constructor(private readonly opts: RewriterOptions) {
    this.sequence = opts.initialSequence & 0xffff;
    this.lastOut = opts.initialTimestamp >>> 0;
    this.tick = Math.max(1, Math.round(opts.clockRate / 1000));
  }

  /** Packets until endBurst() are cached ones: their pictures are packed 1 ms apart. */
  beginBurst(): void {
    this.burst = true;
    // The next camera sequence number is not compared with the last live one.
    this.lastInSequence = null;
  }

  endBurst(): void {
    this.burst = false;
    this.lastInSequence = null;
  }

  /** A rewritten copy of the packet, or null when it is not RTP. */
  rewrite(packet: Buffer): Buffer | null {
    if (!readRtpHeaderInto(packet, this.header)) return null;
    const inTs = this.header.timestamp;
    const inSeq = this.header.sequence;
    // Real loss upstream stays visible (up to 100 packets; more is a restart, not loss).
    if (this.lastInSequence !== null) {
      const gap = (inSeq - this.lastInSequence - 1) & 0xffff;
      if (gap > 0 && gap < 100) this.sequence = (this.sequence + gap) & 0xffff;
    }
    this.lastInSequence = inSeq;
    let outTs: number;
    if (this.lastIn === null) outTs = this.lastOut;
    else if (inTs === this.lastIn) outTs = this.lastOut;
    else if (this.burst) outTs = (this.lastOut + this.tick) >>> 0;
    else {
      const delta = (inTs - this.lastIn) | 0;
      // Backwards or a jump of more than 10 s (a camera clock restart): continue one frame on.
      outTs =
        delta > 0 && delta < this.opts.clockRate * 10
          ? (this.lastOut + delta) >>> 0
          : (this.lastOut + this.tick * 40) >>> 0;
    }
    this.lastIn = inTs;
    this.lastOut = outTs;
    const copy = Buffer.from(packet);
    copy[1] = ((copy[1] as number) & 0x80) | (this.opts.payloadType & 0x7f);
    copy.writeUInt16BE(this.sequence, 2);
    copy.writeUInt32BE(outTs, 4);
    copy.writeUInt32BE(this.opts.ssrc >>> 0, 8);
    this.sequence = (this.sequence + 1) & 0xffff;
    return copy;
  }
}

/** Keyframe requests and NACKs in a compound RTCP packet from a peer (RFC 4585, RFC 5104). */
export interface PeerFeedback {
  pli: number;
  fir: number;
  nack: number;
}

export function readPeerFeedback(packet: Buffer): PeerFeedback {
  const out: PeerFeedback = { pli: 0, fir: 0, nack: 0 };
  for (let offset = 0; offset + 4 <= packet.length;) {
    const first = packet[offset] as number;
    if (first >> 6 !== 2) break;
    const type = packet[offset + 1] as number;
    const fmt = first & 0x1f;
    if (type === 206 && fmt === 1) out.pli++;
    else if (type === 206 && fmt === 4) out.fir++;
    else if (type === 205 && fmt === 1) out.nack++;
    offset += 4 + packet.readUInt16BE(offset + 2) * 4;
  }
  return out;
}
