import { beforeAll, describe, expect, it } from 'vitest';
import { FanOut, type FanOutReader } from '../../../src/media/relay/fanout.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { captureRtp } from '../../support/rtp-capture.js';

// Fan-out of an H.265 camera stream with an audio track: one second of ffmpeg x265 RTP (a keyframe
// every 5 pictures; ffmpeg aggregates the parameter sets into an AP and fragments big slices into
// FUs), with audio packets between the video packets as a camera interleaves them.

let video: Buffer[] = [];

class Reader implements FanOutReader {
  got: Array<{ track: number; packet: Buffer }> = [];
  pendingBytes() {
    return 0;
  }
  deliver(track: number, packet: Buffer) {
    this.got.push({ track, packet });
  }
  deliverRtcp() {}
  evict() {}
}

/** An RTP packet of the audio track (payload type 97, 1024 samples apart, like AAC frames). */
function audioPacket(n: number): Buffer {
  const p = Buffer.alloc(12 + 8, 0xaa);
  p[0] = 0x80;
  p[1] = 97;
  p.writeUInt16BE(n & 0xffff, 2);
  p.writeUInt32BE(n * 1024, 4);
  p.writeUInt32BE(0x1234, 8);
  return p;
}

/** The independent view of an H.265 keyframe start: a VPS alone, first in an AP, or starting an FU. */
function startsWithVps(packet: Buffer): boolean {
  const h = readRtpHeader(packet)!;
  const p = packet.subarray(h.payloadOffset, h.payloadOffset + h.payloadLength);
  const type = ((p[0] ?? 0) >> 1) & 0x3f;
  if (type === 48) return (((p[4] ?? 0) >> 1) & 0x3f) === 32;
  if (type === 49) return ((p[2] ?? 0) & 0x80) !== 0 && ((p[2] ?? 0) & 0x3f) === 32;
  return type === 32;
}

beforeAll(async () => {
  ({ packets: video } = await captureRtp([
    '-c:v',
    'libx265',
    '-preset',
    'ultrafast',
    '-x265-params',
    'log-level=error:keyint=5:min-keyint=5:scenecut=0:bframes=0:repeat-headers=1',
  ]));
});

describe('FanOut with H.265 video and an audio track', () => {
  it('starts a late reader on the cached H.265 group, with the audio sent since its keyframe, in order', () => {
    const keyframes = video.map((p, i) => (startsWithVps(p) ? i : -1)).filter((i) => i >= 0);
    // The capture is what the test needs: APs and FUs, and at least two keyframes.
    expect(keyframes.length).toBeGreaterThanOrEqual(2);
    const types = video.map((p) => ((p[readRtpHeader(p)!.payloadOffset] ?? 0) >> 1) & 0x3f);
    expect(types).toContain(48);
    expect(types).toContain(49);

    const fan = new FanOut({ videoTrack: 0, codec: 'H265' });
    const early = new Reader();
    fan.add(early);
    const second = keyframes[1]!;
    const joinAt = second + 4; // mid-group
    let audio = 0;
    const feed = (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        fan.push(0, video[i]!);
        if (i % 3 === 0) fan.push(1, audioPacket(audio++));
      }
    };
    feed(0, joinAt);
    const firstAudioOfGroup = Math.ceil(second / 3);
    const late = new Reader();
    fan.add(late);
    feed(joinAt, video.length);

    expect(late.got[0]).toEqual({ track: 0, packet: video[second] });
    expect(late.got.filter((g) => g.track === 0).map((g) => g.packet)).toEqual(video.slice(second));
    const audioSeqs = late.got.filter((g) => g.track === 1).map((g) => readRtpHeader(g.packet)!.sequence);
    expect(audioSeqs).toEqual(Array.from({ length: audio - firstAudioOfGroup }, (_, k) => firstAudioOfGroup + k));
    // The early reader joined before anything was sent and the stream began with a keyframe: all of it.
    expect(early.got).toHaveLength(video.length + audio);
  });

  it('makes a reader that came before any keyframe wait for one, dropping audio until then', () => {
    const keyframes = video.map((p, i) => (startsWithVps(p) ? i : -1)).filter((i) => i >= 0);
    const fan = new FanOut({ videoTrack: 0, codec: 'H265' });
    const r = new Reader();
    fan.add(r);
    fan.push(1, audioPacket(0)); // audio before any video: nothing to start on yet
    // The whole first keyframe picture is missed (its IDR slice alone would be a start too).
    const first = keyframes[0]!;
    const afterIt = video.findIndex(
      (p, i) => i > first && readRtpHeader(p)!.timestamp !== readRtpHeader(video[first]!)!.timestamp,
    );
    video.slice(afterIt).forEach((p) => fan.push(0, p));
    expect(r.got[0]).toEqual({ track: 0, packet: video[keyframes[1]!] });
    expect(r.got.some((g) => g.track === 1)).toBe(false);
  });
});
