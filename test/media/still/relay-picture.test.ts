import { beforeAll, describe, expect, it } from 'vitest';
import { FanOut } from '../../../src/media/relay/fanout.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { decodeStill } from '../../../src/media/still/decode.js';
import { keyframePicture, videoPlanOf } from '../../../src/media/still/keyframe-picture.js';
import { captureRtp } from '../../support/rtp-capture.js';
import { jpegSize } from './jpeg-size.js';

// Real encoder output (ffmpeg's RTP muxer, 320x240, a keyframe every 5 pictures) through the
// relay's fan-out, its cached keyframe depacketised and decoded by the real ffmpeg.

let h264: { packets: Buffer[]; sdp: string };
let h264NoInBand: { packets: Buffer[]; sdp: string };
let h265: { packets: Buffer[]; sdp: string };

beforeAll(async () => {
  [h264, h264NoInBand, h265] = await Promise.all([
    // pkt_size 1000 in captureRtp: keyframes come as FU-A / FU fragments.
    captureRtp(['-c:v', 'libx264', '-g', '5', '-bf', '0', '-x264-params', 'repeat-headers=1']),
    // Global headers: SPS/PPS only in the SDP's sprop-parameter-sets, as many cameras do.
    captureRtp(['-c:v', 'libx264', '-g', '5', '-bf', '0', '-flags', '+global_header']),
    captureRtp(['-c:v', 'libx265', '-x265-params', 'log-level=error:keyint=5:repeat-headers=1', '-bf', '0']),
  ]);
}, 60_000);

function cachedPicture(capture: { packets: Buffer[]; sdp: string }, codec: 'H264' | 'H265') {
  const fan = new FanOut({ videoTrack: 0, codec });
  // Past the middle, up to a moment when the cached keyframe is whole (a later picture has begun).
  let stopped = false;
  for (const [i, p] of capture.packets.entries()) {
    fan.push(0, p);
    if (i > capture.packets.length / 2 && fan.stats.gopPackets > fan.cachedKeyframePackets().length) {
      stopped = true;
      break;
    }
  }
  expect(stopped).toBe(true);
  const cached = fan.cachedKeyframePackets();
  expect(cached.length).toBeGreaterThan(1);
  // Only the keyframe's own packets: one RTP timestamp.
  expect(new Set(cached.map((c) => readRtpHeader(c.packet)!.timestamp)).size).toBe(1);
  return keyframePicture(videoPlanOf(capture.sdp), cached);
}

describe("the relay's cached keyframe as a JPEG", () => {
  it.each([
    ['H.264, parameter sets in band', () => h264, 'H264' as const, 'h264' as const],
    ['H.264, parameter sets in the SDP only', () => h264NoInBand, 'H264' as const, 'h264' as const],
    ['H.265', () => h265, 'H265' as const, 'hevc' as const],
  ])('%s: decodes to a whole 320x240 JPEG, and to 128 pixels wide', async (_what, capture, codec, format) => {
    const picture = cachedPicture(capture(), codec);
    // One picture, no reordering (-bf 0): a long-lived decoder may take it, keyed by its SPS.
    expect(picture).toMatchObject({ codec, width: 320, standalone: true, sps: expect.stringMatching(/^[\w-]{16}$/) });
    const jpeg = await decodeStill(format, picture.annexB, null, { ffmpegPath: 'ffmpeg', timeoutMs: 20_000 });
    expect(jpegSize(jpeg)).toEqual({ width: 320, height: 240 });
    const small = await decodeStill(format, picture.annexB, 128, { ffmpegPath: 'ffmpeg', timeoutMs: 20_000 });
    expect(jpegSize(small)).toEqual({ width: 128, height: 96 });
  });

  it('nothing cached before the first keyframe, nor after reset', () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264' });
    expect(fan.cachedKeyframePackets()).toEqual([]);
    h264.packets.slice(0, 20).forEach((p) => fan.push(0, p));
    expect(fan.cachedKeyframePackets().length).toBeGreaterThan(0);
    fan.reset();
    expect(fan.cachedKeyframePackets()).toEqual([]);
  });
});
