import { aggregate, rtp } from './rtp-packets.js';

// A camera's H.264 stream made by hand, as the relay's fan-out hands it to a reader: 10 pictures a
// second, a keyframe (with its SPS and PPS) every 10th picture, small slices of a recognisable byte.

export const H264_SPS = Buffer.from('6764000cacd94141fb011000000300100000030140f1429960', 'hex');
export const H264_PPS = Buffer.from('68ce3c80', 'hex');

/** The relay's SDP of that stream (video only; `extra` lines appended, e.g. an audio m-line). */
export function h264Sdp(extra: readonly string[] = []): string {
  return [
    'v=0',
    'o=- 0 0 IN IP4 127.0.0.1',
    's=cam',
    't=0 0',
    'm=video 0 RTP/AVP 96',
    'a=rtpmap:96 H264/90000',
    `a=fmtp:96 packetization-mode=1;sprop-parameter-sets=${H264_SPS.toString('base64')},${H264_PPS.toString('base64')}`,
    'a=control:trackID=0',
    ...extra,
    '',
  ].join('\r\n');
}

/** 90 kHz ticks between pictures (10 a second). */
export const H264_FRAME_TICKS = 9000;

/** The RTP packets of picture `picture` (a keyframe each 10th), numbered from `sequence`. */
export function h264Picture(picture: number, sequence: number): Buffer[] {
  const ts = picture * H264_FRAME_TICKS;
  return picture % 10 === 0
    ? [
        rtp(sequence, ts, false, aggregate([0x18], [H264_SPS, H264_PPS])),
        rtp(sequence + 1, ts, true, Buffer.concat([Buffer.of(0x65, 0x88), Buffer.alloc(400, picture & 0xff)])),
      ]
    : [rtp(sequence, ts, true, Buffer.concat([Buffer.of(0x41, 0x9a), Buffer.alloc(100, picture & 0xff)]))];
}
