// RTCP (RFC 3550 §6): the relay forwards the camera's sender reports to viewers, because a client
// needs them to line audio up with video (they map each track's RTP clock to one wall clock). Only
// the SR itself goes on: the rest of a compound packet (SDES with the camera's CNAME, often its
// host name or address; the camera's own reception reports) is the camera's business.

export const RTCP_SENDER_REPORT = 200;
const SR_FIXED_BYTES = 28; // header 4 + SSRC 4 + NTP 8 + RTP time 4 + counts 8

/**
 * Length in bytes of the sender report that starts `packet` (the first packet of a compound RTCP
 * packet), or 0 when the packet does not start with a whole, well-formed SR.
 */
export function senderReportLength(packet: Buffer): number {
  if (packet.length < SR_FIXED_BYTES) return 0;
  const b0 = packet[0] as number;
  if (b0 >> 6 !== 2 || packet[1] !== RTCP_SENDER_REPORT) return 0;
  // The length field counts 32-bit words minus one; report blocks are 24 bytes each.
  const length = (packet.readUInt16BE(2) + 1) * 4;
  const reportCount = b0 & 0x1f;
  if (length > packet.length || length < SR_FIXED_BYTES + 24 * reportCount) return 0;
  return length;
}

/** The RTP timestamp an SR maps to its NTP time (for tests and RTP-Info checks). */
export function senderReportRtpTime(report: Buffer): number {
  return report.readUInt32BE(16);
}
