// Browsers decode H.264 only with its parameter sets in the stream: they take no
// sprop-parameter-sets from the SDP, and ask for a keyframe (PLI) again and again instead. Many
// cameras (and gst-rtsp-server) send SPS/PPS only in the SDP. So before a keyframe (IDR) whose
// picture brought no SPS of its own, the camera's SDP parameter sets are sent in one STAP-A packet
// (RFC 6184 5.7.1) with the keyframe's timestamp, as go2rtc and MediaMTX do.
// H.265 (VPS/SPS/PPS in an AP) is not done yet: cameras sending H.265 in practice repeat them in-band.

import { readRtpHeaderInto, createRtpHeader } from '../rtp.js';

const SPS = 7;

const IDR = 5;
const STAP_A = 24;
const FU_A = 28;

/** NAL unit types a payload carries or starts (single, every unit of a STAP-A, an FU-A's start). */
function nalTypes(payload: Buffer, offset: number, end: number): number[] {
  if (offset >= end) return [];
  const type = (payload[offset] as number) & 0x1f;
  if (type >= 1 && type <= 23) return [type];
  if (type === FU_A)
    return offset + 1 < end && ((payload[offset + 1] as number) & 0x80) !== 0
      ? [(payload[offset + 1] as number) & 0x1f]
      : [];
  if (type !== STAP_A) return [];
  const types: number[] = [];
  for (let at = offset + 1; at + 2 < end;) {
    const size = payload.readUInt16BE(at);
    at += 2;
    if (size === 0 || at + size > end) break;
    types.push((payload[at] as number) & 0x1f);
    at += size;
  }
  return types;
}

export class H264ParameterSetInjector {
  private readonly header = createRtpHeader();
  private readonly stapPayload: Buffer | null;
  /** RTP timestamp of the last picture that carried (or got) an SPS. */
  private lastSpsTimestamp: number | null = null;

  constructor(sets: { sps: readonly Buffer[]; pps: readonly Buffer[] }) {
    const units = [...sets.sps.slice(0, 1), ...sets.pps.slice(0, 1)];
    if (sets.sps.length === 0 || sets.pps.length === 0) {
      this.stapPayload = null;
      return;
    }
    const size = 1 + units.reduce((n, u) => n + 2 + u.length, 0);
    const stap = Buffer.alloc(size);
    // F=0, NRI = the highest of the units', type 24.
    stap[0] = units.reduce((nri, u) => Math.max(nri, (u[0] as number) & 0x60), 0) | STAP_A;
    let at = 1;
    for (const u of units) {
      stap.writeUInt16BE(u.length, at);
      u.copy(stap, at + 2);
      at += 2 + u.length;
    }
    this.stapPayload = stap;
  }

  /** Forgets the last picture that had its sets: the next keyframe gets them whatever its time. */
  reset(): void {
    this.lastSpsTimestamp = null;
  }

  /**
   * The packet to send before this one: a STAP-A of SPS and PPS with this packet's header
   * (marker cleared) when the packet starts an IDR picture that brought no SPS; else null.
   */
  before(packet: Buffer): Buffer | null {
    if (!this.stapPayload || !readRtpHeaderInto(packet, this.header)) return null;
    const types = nalTypes(packet, this.header.payloadOffset, this.header.payloadOffset + this.header.payloadLength);
    const ts = this.header.timestamp;
    if (types.includes(SPS)) {
      this.lastSpsTimestamp = ts;
      return null;
    }
    if (!types.includes(IDR) || this.lastSpsTimestamp === ts) return null;
    this.lastSpsTimestamp = ts;
    const out = Buffer.alloc(12 + this.stapPayload.length);
    packet.copy(out, 0, 0, 12);
    out[0] = 0x80; // V=2, no padding, no extension, no CSRC
    out[1] = (out[1] as number) & 0x7f; // marker cleared: the picture goes on
    this.stapPayload.copy(out, 12);
    return out;
  }
}
