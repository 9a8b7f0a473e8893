import { FragmentMuxer } from '../../../src/media/mux/fragment-muxer.js';
import { rtp } from '../fmp4/rtp-packets.js';

// A camera's stream made by hand, as the relay's fan-out hands it to a reader: H.264 at 10 fps in
// groups of five pictures (a keyframe with its SPS and PPS, four P-frames; x264's 64x48 grey
// picture, so every picture decodes) and G.711 in packets of 20 ms, interleaved in time.

// `ffmpeg -f lavfi -i color=c=gray:s=64x48:r=10 -frames:v 5 -c:v libx264 -profile:v baseline -g 5 -f h264`,
// its SEI left out.
const SPS = Buffer.from('6742c00ad9047b011000000300100000030140f1226480', 'hex');
const PPS = Buffer.from('68cb83cb20', 'hex');
const IDR = Buffer.from('6588840ff2628000803c9c9c9d75d75d75d75e', 'hex');
const P_FRAMES = ['419a381fe360', '419a5407f8d8', '419a603bc6c0', '419a8037c6c0'].map((h) => Buffer.from(h, 'hex'));

/** 90 kHz at 10 fps. */
const PICTURE_TICKS = 9000;
/** 20 ms at 8 kHz. */
export const PACKET_SAMPLES = 160;
const VIDEO_PAYLOAD_TYPE = 96;
/** RTP times at the stream's first instant (what the fan-out's TrackStart says). */
export const VIDEO_START = 1_000_000;
export const AUDIO_START = 3_000_000;

/** The SDP's m= sections: H.264 as track 0, then these audio sections (e.g. one of `PCMU_SECTION`). */
export function cameraSdp(...audio: string[][]): string {
  return [
    'v=0',
    'o=- 1 1 IN IP4 127.0.0.1',
    's=camera',
    't=0 0',
    `m=video 0 RTP/AVP ${VIDEO_PAYLOAD_TYPE}`,
    `a=rtpmap:${VIDEO_PAYLOAD_TYPE} H264/90000`,
    `a=fmtp:${VIDEO_PAYLOAD_TYPE} packetization-mode=1`,
    'a=control:trackID=0',
    ...audio.flatMap((lines, i) => [...lines, `a=control:trackID=${i + 1}`]),
    '',
  ].join('\r\n');
}

export const PCMU_SECTION = ['m=audio 0 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000'];
export const PCMA_SECTION = ['m=audio 0 RTP/AVP 8', 'a=rtpmap:8 PCMA/8000'];
export const AAC_SECTION = [
  'm=audio 0 RTP/AVP 97',
  'a=rtpmap:97 MPEG4-GENERIC/48000/1',
  'a=fmtp:97 profile-level-id=1;mode=AAC-hbr;sizelength=13;indexlength=3;indexdeltalength=3;config=1188',
];

/** The samples of audio packet `n`: codes that vary, none of them either law's silence (0xFF, 0xD5). */
export function audioPayload(n: number): Buffer {
  return Buffer.from(Array.from({ length: PACKET_SAMPLES }, (_, i) => 0x10 + ((n * PACKET_SAMPLES + i) % 0x60)));
}

export interface StreamPacket {
  track: number;
  packet: Buffer;
}

/**
 * `seconds` of the stream from its first instant: picture i at i / 10 s (a keyframe every fifth, its SPS, PPS and
 * slice in three packets), audio packet n at n / 50 s on track 1, after the picture of the same instant (the first
 * audio packet then comes after the first keyframe, which the muxer's audio waits for). Audio packets numbered in
 * `lostAudio` are left out (lost on the way: their sequence numbers skipped).
 */
export function cameraStream(
  seconds: number,
  audio: { payloadType: number; lostAudio?: readonly number[] } | null,
): StreamPacket[] {
  const out: StreamPacket[] = [];
  let videoSequence = 100;
  const pictures = Math.round(seconds * 10);
  const audioPackets = audio ? Math.round(seconds * 50) : 0;
  for (let n = 0, i = 0; i < pictures || n < audioPackets;) {
    if (n < audioPackets && (i === pictures || n * 2 < i * 10)) {
      if (audio && !audio.lostAudio?.includes(n)) {
        const time = AUDIO_START + n * PACKET_SAMPLES;
        out.push({ track: 1, packet: rtp(500 + n, time, n === 0, audioPayload(n), audio.payloadType) });
      }
      n++;
      continue;
    }
    const time = VIDEO_START + i * PICTURE_TICKS;
    const nalus = i % 5 === 0 ? [SPS, PPS, IDR] : [P_FRAMES[(i % 5) - 1]!];
    nalus.forEach((nal, k) =>
      out.push({ track: 0, packet: rtp(videoSequence++, time, k === nalus.length - 1, nal, VIDEO_PAYLOAD_TYPE) }),
    );
    i++;
  }
  return out;
}

/**
 * The synthetic camera's H.264 + µ-law stream (cameraStream) through a FragmentMuxer keeping G.711,
 * in 0.5 s parts, flushed at its end: the init segment and each part's bytes.
 */
export function muxedWithG711(seconds: number, lostAudio: readonly number[] = []): { init: Buffer; parts: Buffer[] } {
  const parts: Buffer[] = [];
  const muxer = new FragmentMuxer(
    cameraSdp(PCMU_SECTION),
    { partTarget: 0.5, targetDuration: 0.5, g711: true },
    { addPart: (p) => parts.push(Buffer.concat(p.chunks)) },
  );
  muxer.setStarts([
    { track: 0, rtpTime: VIDEO_START },
    { track: 1, rtpTime: AUDIO_START },
  ]);
  for (const { track, packet } of cameraStream(seconds, { payloadType: 0, lostAudio })) muxer.deliver(track, packet);
  muxer.flush();
  return { init: muxer.init!, parts };
}
