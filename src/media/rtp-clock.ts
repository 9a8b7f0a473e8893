// RTP clocks of several tracks on one timeline. Each track's RTP timestamps count in its own clock
// rate from a random start (RFC 3550 §5.1); a point that pins a track's RTP time to a shared
// timeline lets one translate an instant into every track's RTP time. The relay needs that for
// RTP-Info: RFC 2326 §12.33 has every track's rtptime name the same instant (the start of the
// Range), and clients such as ffmpeg take rtptime as each track's time zero. If the tracks' zeros
// were different instants, audio would play off video until the camera's first sender report, and
// then jump (backwards, as seen with ffmpeg: "non monotonically increasing dts").
//
// Two sources of such points: the camera's sender reports (NTP wall clock, per track), and the
// RTP-Info of the camera's own PLAY answer (all tracks at one instant; its timeline starts there).

/** A track's RTP time at `seconds` on a timeline shared with other tracks. Mutable: see roll(). */
export interface ClockAnchor {
  rtpTime: number;
  seconds: number;
  readonly rate: number;
}

/** RTP timestamps are 32-bit and wrap; differences are taken as signed 32-bit. */
function rtpDelta(to: number, from: number): number {
  return (to - from) | 0;
}

/** The instant (on the anchor's timeline) of an RTP timestamp of the anchor's track. */
export function secondsAt(anchor: ClockAnchor, rtpTime: number): number {
  return anchor.seconds + rtpDelta(rtpTime, anchor.rtpTime) / anchor.rate;
}

/** The RTP timestamp of the anchor's track at an instant on its timeline. */
export function rtpTimeAt(anchor: ClockAnchor, seconds: number): number {
  return (anchor.rtpTime + Math.round((seconds - anchor.seconds) * anchor.rate)) >>> 0;
}

/** Past this, a signed 32-bit difference is at risk of wrapping (6.6 h at 90 kHz from the anchor). */
const ROLL_AFTER = 2 ** 30;

/**
 * Moves the anchor to `rtpTime` (same timeline) when it is far from it, so a stream that runs for
 * days never takes a wrapped difference. Cheap enough for every packet; allocates nothing.
 */
export function roll(anchor: ClockAnchor, rtpTime: number): void {
  const delta = rtpDelta(rtpTime, anchor.rtpTime);
  if (delta < ROLL_AFTER && delta > -ROLL_AFTER) return;
  anchor.seconds += delta / anchor.rate;
  anchor.rtpTime = rtpTime >>> 0;
}

/** NTP time of a sender report (RFC 3550 §6.4.1) in seconds, as a number (µs precision is kept). */
export function senderReportSeconds(report: Buffer): number {
  return report.readUInt32BE(8) + report.readUInt32BE(12) / 2 ** 32;
}

/** The anchor a sender report gives its track (NTP timeline). */
export function senderReportAnchor(report: Buffer, rate: number): ClockAnchor {
  return { rtpTime: report.readUInt32BE(16), seconds: senderReportSeconds(report), rate };
}
