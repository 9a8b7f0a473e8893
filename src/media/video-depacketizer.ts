import type { DepacketizerStats, VideoAccessUnit } from './access-unit.js';
import { packetsLostBefore, type RtpHeader } from './rtp.js';

// H.264 (RFC 6184, non-interleaved mode) and H.265 (RFC 7798) RTP payloads back into access units.
// A picture is the run of packets sharing one RTP timestamp, ended by the marker bit (or, when the
// marker packet is lost, by the next timestamp). Nothing here throws on packet bytes: a malformed
// packet or a lost one makes its whole access unit dropped and counted, and the next one handed on
// says `afterLoss`, so a muxer can wait for a keyframe instead of feeding a decoder holes.
//
// Allocation: a single NAL unit, or one inside an aggregation packet, is handed on as a view into
// the packet (the relay never reuses a packet's buffer); a fragmented unit is joined into one new
// buffer when its last fragment arrives.

export type VideoCodec = 'H264' | 'H265';

export interface VideoDepacketizerOptions {
  codec: VideoCodec;
  /** H.265 with sprop-max-don-diff > 0: decoding-order numbers sit in the payloads (RFC 7798 4.4). */
  donl?: boolean;
  /** An access unit above this many bytes is dropped (a broken or hostile stream). */
  maxAccessUnitBytes?: number;
  /** Nor more NAL units than this in one access unit. */
  maxNalus?: number;
}

export const DEFAULT_MAX_ACCESS_UNIT_BYTES = 8 * 1024 * 1024;
const DEFAULT_MAX_NALUS = 1024;

const H264_AUD = 9;
const H264_STAP_A = 24;
const H264_FU_A = 28;
const H265_AUD = 35;
const H265_AP = 48;
const H265_FU = 49;

export class VideoDepacketizer {
  readonly stats: DepacketizerStats = { units: 0, dropped: 0, lostPackets: 0 };
  private readonly codec: VideoCodec;
  private readonly donl: boolean;
  private readonly maxBytes: number;
  private readonly maxNalus: number;
  private lastSequence = -1;
  private open = false;
  private rtpTime = 0;
  private nalus: Buffer[] = [];
  private bytes = 0;
  private keyframe = false;
  private broken = false;
  private lossSinceEmit = false;
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private fragmenting = false;

  constructor(
    options: VideoDepacketizerOptions,
    private readonly emit: (unit: VideoAccessUnit) => void,
  ) {
    this.codec = options.codec;
    this.donl = options.donl ?? false;
    this.maxBytes = options.maxAccessUnitBytes ?? DEFAULT_MAX_ACCESS_UNIT_BYTES;
    this.maxNalus = options.maxNalus ?? DEFAULT_MAX_NALUS;
  }

  /** One RTP packet of the track, `header` read from it by readRtpHeaderInto. */
  push(packet: Buffer, header: RtpHeader): void {
    const lostBefore = packetsLostBefore(header.sequence, this.lastSequence);
    if (lostBefore < 0) return;
    this.lastSequence = header.sequence;
    this.stats.lostPackets += lostBefore;
    const lost = lostBefore > 0;
    if (lost) this.broken = true; // the unit in progress may have lost its tail
    if (this.open && header.timestamp !== this.rtpTime) this.finish();
    if (!this.open) this.begin(header.timestamp);
    if (lost) this.broken = true; // and the one this packet starts its head
    if (!this.broken) {
      const ok =
        this.codec === 'H264'
          ? this.readH264(packet, header.payloadOffset, header.payloadLength)
          : this.readH265(packet, header.payloadOffset, header.payloadLength);
      if (!ok) this.broken = true;
    }
    if (header.marker) this.finish();
  }

  private begin(rtpTime: number): void {
    this.open = true;
    this.rtpTime = rtpTime;
    this.nalus = [];
    this.bytes = 0;
    this.keyframe = false;
    this.broken = false;
    this.fragments = [];
    this.fragmentBytes = 0;
    this.fragmenting = false;
  }

  private finish(): void {
    this.open = false;
    if (this.broken || this.fragmenting || this.nalus.length === 0) {
      this.stats.dropped++;
      this.lossSinceEmit = true;
      this.nalus = [];
      this.fragments = [];
      return;
    }
    this.stats.units++;
    const unit: VideoAccessUnit = {
      rtpTime: this.rtpTime,
      nalus: this.nalus,
      keyframe: this.keyframe,
      afterLoss: this.lossSinceEmit,
    };
    this.lossSinceEmit = false;
    this.nalus = [];
    this.emit(unit);
  }

  private add(nal: Buffer): boolean {
    const minHeader = this.codec === 'H264' ? 1 : 2;
    if (nal.length < minHeader) return false;
    this.bytes += nal.length;
    if (this.bytes > this.maxBytes || this.nalus.length >= this.maxNalus) return false;
    const type = this.codec === 'H264' ? nal.readUInt8(0) & 0x1f : (nal.readUInt8(0) >> 1) & 0x3f;
    if (this.codec === 'H264') {
      if (type === H264_AUD) return true; // fMP4 samples carry no delimiters
      if (type === 5) this.keyframe = true;
    } else {
      if (type === H265_AUD) return true;
      if (type >= 16 && type <= 21) this.keyframe = true;
    }
    this.nalus.push(nal);
    return true;
  }

  private addFragment(part: Buffer): boolean {
    this.fragmentBytes += part.length;
    if (this.bytes + this.fragmentBytes > this.maxBytes) return false;
    this.fragments.push(part);
    return true;
  }

  private joinFragments(header: Buffer): boolean {
    const nal = Buffer.concat([header, ...this.fragments], header.length + this.fragmentBytes);
    this.fragments = [];
    this.fragmentBytes = 0;
    this.fragmenting = false;
    return this.add(nal);
  }

  private readH264(p: Buffer, offset: number, length: number): boolean {
    if (length < 1) return false;
    const end = offset + length;
    const type = p.readUInt8(offset) & 0x1f;
    if (type >= 1 && type <= 23) return !this.fragmenting && this.add(p.subarray(offset, end));
    if (type === H264_STAP_A) {
      if (this.fragmenting) return false;
      let at = offset + 1;
      if (at >= end) return false;
      while (at < end) {
        if (at + 2 > end) return false;
        const size = p.readUInt16BE(at);
        at += 2;
        if (size === 0 || at + size > end || !this.add(p.subarray(at, at + size))) return false;
        at += size;
      }
      return true;
    }
    if (type === H264_FU_A) {
      if (length < 3) return false;
      const fu = p.readUInt8(offset + 1);
      const start = (fu & 0x80) !== 0;
      const last = (fu & 0x40) !== 0;
      if (start === this.fragmenting) return false; // a start inside a unit, or a middle without one
      if (start) this.fragmenting = true;
      if (!this.addFragment(p.subarray(offset + 2, end))) return false;
      if (!last) return true;
      return this.joinFragments(Buffer.of((p.readUInt8(offset) & 0xe0) | (fu & 0x1f)));
    }
    return false; // STAP-B, MTAP, FU-B: interleaved mode, never negotiated; 0, 30, 31: undefined
  }

  private readH265(p: Buffer, offset: number, length: number): boolean {
    if (length < 3) return false;
    const end = offset + length;
    const type = (p.readUInt8(offset) >> 1) & 0x3f;
    if (type < H265_AP) {
      if (this.fragmenting) return false;
      if (!this.donl) return this.add(p.subarray(offset, end));
      // The DONL sits between the header and the data; the NAL unit is the two without it.
      if (length < 5) return false;
      return this.add(Buffer.concat([p.subarray(offset, offset + 2), p.subarray(offset + 4, end)]));
    }
    if (type === H265_AP) {
      if (this.fragmenting) return false;
      let at = offset + 2 + (this.donl ? 2 : 0);
      let first = true;
      if (at >= end) return false;
      while (at < end) {
        if (!first && this.donl) at += 1; // DOND
        first = false;
        if (at + 2 > end) return false;
        const size = p.readUInt16BE(at);
        at += 2;
        if (size < 2 || at + size > end || !this.add(p.subarray(at, at + size))) return false;
        at += size;
      }
      return true;
    }
    if (type === H265_FU) {
      const fu = p.readUInt8(offset + 2);
      const start = (fu & 0x80) !== 0;
      const last = (fu & 0x40) !== 0;
      if (start === this.fragmenting) return false;
      if (start) this.fragmenting = true;
      const data = offset + 3 + (start && this.donl ? 2 : 0);
      if (data > end || !this.addFragment(p.subarray(data, end))) return false;
      if (!last) return true;
      const fuType = fu & 0x3f;
      return this.joinFragments(Buffer.of((p.readUInt8(offset) & 0x81) | (fuType << 1), p.readUInt8(offset + 1)));
    }
    return false; // PACI (50) and reserved types
  }
}
