// RTP fixed header (RFC 3550 5.1), read once per packet on the relay's hot path: the caller keeps one
// RtpHeader per stream and readRtpHeaderInto fills it, so no object is made per packet.

export interface RtpHeader {
  version: number;
  padding: boolean;
  extension: boolean;
  csrcCount: number;
  marker: boolean;
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  /** Where the payload starts in the buffer given (not relative to `offset`). */
  payloadOffset: number;
  /** Payload bytes, padding excluded. */
  payloadLength: number;
}

export const RTP_FIXED_HEADER_BYTES = 12;

/** A header to reuse with readRtpHeaderInto. */
export function createRtpHeader(): RtpHeader {
  return {
    version: 0,
    padding: false,
    extension: false,
    csrcCount: 0,
    marker: false,
    payloadType: 0,
    sequence: 0,
    timestamp: 0,
    ssrc: 0,
    payloadOffset: 0,
    payloadLength: 0,
  };
}

/**
 * Reads the RTP packet in `packet[offset, offset + length)` (the whole buffer by default; a range
 * for RTSP interleaved frames, without a subarray) into `out`. False, with `out` untouched, when the
 * bytes are not a whole RTP version 2 packet: too short, or CSRC list, header extension or padding
 * running past the end.
 */
export function readRtpHeaderInto(
  packet: Buffer,
  out: RtpHeader,
  offset = 0,
  length = packet.length - offset,
): boolean {
  if (!Number.isInteger(offset) || !Number.isInteger(length)) return false;
  if (offset < 0 || length < RTP_FIXED_HEADER_BYTES || offset + length > packet.length) return false;
  const end = offset + length;
  const b0 = packet.readUInt8(offset);
  if (b0 >> 6 !== 2) return false;
  const csrcCount = b0 & 0x0f;
  let payloadOffset = offset + RTP_FIXED_HEADER_BYTES + 4 * csrcCount;
  if (payloadOffset > end) return false;
  const extension = (b0 & 0x10) !== 0;
  if (extension) {
    if (payloadOffset + 4 > end) return false;
    payloadOffset += 4 + 4 * packet.readUInt16BE(payloadOffset + 2);
    if (payloadOffset > end) return false;
  }
  const padding = (b0 & 0x20) !== 0;
  let payloadEnd = end;
  if (padding) {
    // The last octet counts the padding, itself included, so 0 is as wrong as too many.
    const pad = packet.readUInt8(end - 1);
    if (pad === 0 || payloadOffset + pad > end) return false;
    payloadEnd -= pad;
  }
  const b1 = packet.readUInt8(offset + 1);
  out.version = 2;
  out.padding = padding;
  out.extension = extension;
  out.csrcCount = csrcCount;
  out.marker = (b1 & 0x80) !== 0;
  out.payloadType = b1 & 0x7f;
  out.sequence = packet.readUInt16BE(offset + 2);
  out.timestamp = packet.readUInt32BE(offset + 4);
  out.ssrc = packet.readUInt32BE(offset + 8);
  out.payloadOffset = payloadOffset;
  out.payloadLength = payloadEnd - payloadOffset;
  return true;
}

/** readRtpHeaderInto with a fresh object, for code off the per-packet path. */
export function readRtpHeader(packet: Buffer, offset = 0, length = packet.length - offset): RtpHeader | null {
  const out = createRtpHeader();
  return readRtpHeaderInto(packet, out, offset, length) ? out : null;
}

/**
 * Signed distance from sequence number `b` to `a` modulo 2^16, in [-32768, 32767]: positive when `a`
 * comes after `b` across a wrap (seqDelta(2, 65534) === 4).
 */
export function seqDelta(a: number, b: number): number {
  return (((a - b) & 0xffff) << 16) >> 16;
}

/**
 * For a depacketiser taking packets in order: how many were lost between the last one taken (`last`,
 * -1 before the first) and `sequence`, or -1 when this one is a duplicate or came late (dropped: what
 * it belonged to has been handed on or dropped already).
 */
export function packetsLostBefore(sequence: number, last: number): number {
  if (last < 0) return 0;
  const delta = seqDelta(sequence, last);
  return delta <= 0 ? -1 : delta - 1;
}

/** True when `a` comes after `b` (RFC 3550 A.1 style, half the sequence space ahead). */
export function seqNewer(a: number, b: number): boolean {
  return seqDelta(a, b) > 0;
}

/** Signed distance from RTP timestamp `b` to `a` modulo 2^32. */
export function timestampDelta(a: number, b: number): number {
  return (a - b) | 0;
}
