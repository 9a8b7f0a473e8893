// RTCP packets for tests: a sender report (RFC 3550 §6.4.1) without report blocks, the one builder
// the fan-out, clock and camera-simulator tests share.

/** A sender report mapping `rtpTime` to the NTP time `ntpSeconds` (fraction included). */
export function senderReport(opts: { rtpTime: number; ntpSeconds?: number; ssrc?: number }): Buffer {
  const sr = Buffer.alloc(28);
  sr[0] = 0x80;
  sr[1] = 200;
  sr.writeUInt16BE(6, 2);
  sr.writeUInt32BE(opts.ssrc ?? 0, 4);
  const ntp = opts.ntpSeconds ?? 0;
  sr.writeUInt32BE(Math.floor(ntp), 8);
  sr.writeUInt32BE(Math.round((ntp % 1) * 2 ** 32), 12);
  sr.writeUInt32BE(opts.rtpTime >>> 0, 16);
  return sr;
}
