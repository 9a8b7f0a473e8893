import { beforeAll, describe, expect, it } from 'vitest';
import { h264StartsKeyframe } from '../../../src/media/h26x.js';
import { FanOut, type FanOutReader } from '../../../src/media/relay/fanout.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { captureRtp } from '../../support/rtp-capture.js';
import { senderReport } from '../../support/rtcp.js';

// Fan-out on real encoder output: one second of ffmpeg H.264 RTP (a keyframe every 5 pictures).

let packets: Buffer[] = [];
const seq = (p: Buffer) => readRtpHeader(p)!.sequence;
const isKeyframe = (p: Buffer) => {
  const h = readRtpHeader(p)!;
  return h264StartsKeyframe(p, h.payloadOffset, h.payloadLength);
};

class Reader implements FanOutReader {
  got: Buffer[] = [];
  pending = 0;
  evicted: string | null = null;
  pendingBytes() {
    return this.pending;
  }
  reports: Buffer[] = [];
  deliver(_track: number, packet: Buffer) {
    this.got.push(packet);
  }
  deliverRtcp(_track: number, report: Buffer) {
    this.reports.push(report);
  }
  evict(reason: string) {
    this.evicted = reason;
  }
}

beforeAll(async () => {
  ({ packets } = await captureRtp(['-c:v', 'libx264', '-g', '5', '-bf', '0']));
});

const keyframeIndexes = () =>
  packets
    .map((p, i) =>
      isKeyframe(p) && (i === 0 || readRtpHeader(p)!.timestamp !== readRtpHeader(packets[i - 1]!)!.timestamp) ? i : -1,
    )
    .filter((i) => i >= 0);

/** A compound RTCP packet: a sender report (no blocks) then an SDES with a CNAME. */
function compoundReport(rtpTime: number): Buffer {
  return Buffer.concat([
    senderReport({ rtpTime }),
    Buffer.from('\x81\xca\x00\x03\x00\x00\x00\x01\x01\x04cam1\x00\x00', 'latin1'),
  ]);
}

describe('FanOut', () => {
  it("tells where the next reader starts (for RTP-Info): the cached GOP's first packet", () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264' });
    expect(fan.startOfNextReader()).toEqual([]); // nothing cached yet
    const [, second] = keyframeIndexes();
    packets.slice(0, second! + 2).forEach((p) => fan.push(0, p));
    const h = readRtpHeader(packets[second!]!)!;
    expect(fan.startOfNextReader()).toEqual([{ track: 0, sequence: h.sequence, rtpTime: h.timestamp }]);
    const reader = new Reader();
    fan.add(reader);
    expect(seq(reader.got[0]!)).toBe(h.sequence);
  });

  it("forwards only the sender report of the camera's RTCP, and gives the latest one to new readers", () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264' });
    const early = new Reader();
    fan.add(early);
    const [first] = keyframeIndexes();
    packets.slice(0, first! + 2).forEach((p) => fan.push(0, p));
    fan.pushRtcp(0, compoundReport(1000));
    fan.pushRtcp(0, Buffer.from('not rtcp at all, long enough to be read...'));
    fan.pushRtcp(0, compoundReport(2000));
    expect(early.reports.map((r) => [r.length, r.readUInt32BE(16)])).toEqual([
      [28, 1000],
      [28, 2000],
    ]);
    const late = new Reader();
    fan.add(late);
    expect(late.reports.map((r) => r.readUInt32BE(16))).toEqual([2000]);
    fan.reset(); // a new camera session: old reports would map the wrong clock
    const afterReset = new Reader();
    fan.add(afterReset);
    expect(afterReset.reports).toEqual([]);
  });

  it('starts a late reader on the cached group of pictures, then live, without a gap', () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264' });
    const early = new Reader();
    fan.add(early);
    const [, second] = keyframeIndexes();
    expect(second).toBeGreaterThan(0);
    const joinAt = second! + 3; // mid-GOP
    packets.slice(0, joinAt).forEach((p) => fan.push(0, p));
    const late = new Reader();
    fan.add(late);
    packets.slice(joinAt).forEach((p) => fan.push(0, p));

    expect(isKeyframe(late.got[0]!)).toBe(true);
    expect(seq(late.got[0]!)).toBe(seq(packets[second!]!)); // from the GOP's first packet
    const seqs = late.got.map(seq);
    seqs.forEach((s, i) => i > 0 && expect(s).toBe((seqs[i - 1]! + 1) & 0xffff));
    expect(seqs.at(-1)).toBe(seq(packets.at(-1)!));
    expect(early.got).toHaveLength(packets.length); // the stream began with a keyframe
  });

  it('makes a reader that joins before any keyframe wait for one', () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264' });
    const [first] = keyframeIndexes();
    const r = new Reader();
    fan.add(r);
    packets.slice(first! + 1).forEach((p) => fan.push(0, p)); // the first keyframe is missed
    expect(r.got.length).toBeGreaterThan(0);
    expect(isKeyframe(r.got[0]!)).toBe(true);
  });

  it('lets a slow reader skip to the next keyframe while the others get everything, and evicts it if it stays behind', () => {
    let now = 0;
    const fan = new FanOut({ videoTrack: 0, codec: 'H264', maxPendingBytes: 10_000, maxBehindMs: 500, now: () => now });
    const fast = new Reader();
    const slow = new Reader();
    fan.add(fast);
    fan.add(slow);
    const [first, second] = keyframeIndexes();
    packets.slice(0, first! + 2).forEach((p) => fan.push(0, p));
    slow.pending = 50_000; // its socket stops draining
    const before = slow.got.length;
    packets.slice(first! + 2, first! + 5).forEach((p) => fan.push(0, p));
    expect(slow.got.length).toBe(before); // skipped, not queued
    slow.pending = 0; // drained again: resumes at the next keyframe, not mid-picture
    packets.slice(first! + 5).forEach((p) => fan.push(0, p));
    const resumed = slow.got.slice(before);
    expect(seq(resumed[0]!)).toBe(seq(packets[second!]!));
    expect(isKeyframe(resumed[0]!)).toBe(true);
    expect(fast.got).toHaveLength(packets.length);
    expect(fan.stats.dropped).toBeGreaterThan(0);

    slow.pending = 50_000;
    fan.push(0, packets[0]!);
    now += 1000;
    fan.push(0, packets[1]!);
    expect(slow.evicted).toContain('behind');
    expect(fan.readerCount).toBe(1);
  });

  it('does not cache a group larger than its budget, and keeps and hands out the packets it was given, uncopied', () => {
    const small = new FanOut({ videoTrack: 0, codec: 'H264', maxGopBytes: 2000 });
    packets.forEach((p) => small.push(0, p));
    const r = new Reader();
    small.add(r);
    expect(r.got).toHaveLength(0);
    expect(small.stats.gopBytes).toBeLessThanOrEqual(2000);

    // The upstream's packets are views into socket reads that nothing writes again: shared as they
    // are with every reader, live or late.
    const fan = new FanOut({ videoTrack: 0, codec: 'H264' });
    const live = new Reader();
    fan.add(live);
    const view = Buffer.from(packets[0]!);
    fan.push(0, view);
    const late = new Reader();
    fan.add(late);
    expect(live.got[0]).toBe(view);
    expect(late.got[0]).toBe(view);
  });
});

describe('FanOut: RTP-Info names one instant for every track', () => {
  const AUDIO_RATE = 8000;
  /** A PCMU packet of 20 ms (160 ticks) with the given sequence number and timestamp. */
  function audioPacket(sequence: number, timestamp: number): Buffer {
    const p = Buffer.alloc(12 + 160, 0xff);
    p[0] = 0x80;
    p[1] = 0;
    p.writeUInt16BE(sequence, 2);
    p.writeUInt32BE(timestamp >>> 0, 4);
    p.writeUInt32BE(0x1234, 8);
    return p;
  }
  // The camera's audio clock starts near the 32-bit wrap, so the arithmetic must wrap too.
  const AUDIO_AT_PLAY = 0xffffff00;
  const videoAtPlay = () => readRtpHeader(packets[0]!)!.timestamp;
  /**
   * Feeds the video with one audio packet per video packet, audio 0.3 s behind the video's instant (as an encoder's
   * latency makes it).
   */
  function feed(fan: FanOut, upTo: number): void {
    packets.slice(0, upTo).forEach((p, i) => {
      fan.push(0, p);
      const videoSeconds = ((readRtpHeader(p)!.timestamp - videoAtPlay()) | 0) / 90000;
      fan.push(1, audioPacket(i, AUDIO_AT_PLAY + Math.round((videoSeconds + 0.3) * AUDIO_RATE)));
    });
  }

  it("from the camera's PLAY answer: the audio rtptime is the audio clock at the cached keyframe's instant", () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264', clockRates: [90000, AUDIO_RATE] });
    fan.setPlayClocks([videoAtPlay(), AUDIO_AT_PLAY]);
    const [, second] = keyframeIndexes();
    feed(fan, second! + 3);
    const keyframe = readRtpHeader(packets[second!]!)!;
    const keyframeSeconds = ((keyframe.timestamp - videoAtPlay()) | 0) / 90000;
    const start = fan.startOfNextReader();
    expect(start).toEqual([
      { track: 0, sequence: keyframe.sequence, rtpTime: keyframe.timestamp },
      // The first cached audio packet came after the keyframe, but the rtptime is the keyframe's instant.
      { track: 1, sequence: second, rtpTime: (AUDIO_AT_PLAY + Math.round(keyframeSeconds * AUDIO_RATE)) >>> 0 },
    ]);
    const firstCachedAudio = audioPacket(second!, AUDIO_AT_PLAY + Math.round((keyframeSeconds + 0.3) * AUDIO_RATE));
    expect(start[1]!.rtpTime).not.toBe(readRtpHeader(firstCachedAudio)!.timestamp);
  });

  it('from sender reports once every track has one (they win over the PLAY answer)', () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264', clockRates: [90000, AUDIO_RATE] });
    fan.setPlayClocks([videoAtPlay(), AUDIO_AT_PLAY]);
    const [, second] = keyframeIndexes();
    feed(fan, second! + 3);
    const keyframe = readRtpHeader(packets[second!]!)!;
    // Video SR: the video clock at wall time 1000 s. Audio SR: wall time 1002 s, at an audio time
    // that puts the audio 0.1 s (not 0 s, as the PLAY answer said) after the video.
    fan.pushRtcp(0, senderReport({ ntpSeconds: 1000, rtpTime: videoAtPlay() }));
    const onlyVideo = fan.startOfNextReader();
    expect(onlyVideo[1]!.rtpTime).toBe(
      (AUDIO_AT_PLAY + Math.round((((keyframe.timestamp - videoAtPlay()) | 0) / 90000) * AUDIO_RATE)) >>> 0,
    );
    fan.pushRtcp(1, senderReport({ ntpSeconds: 1002, rtpTime: AUDIO_AT_PLAY + Math.round(1.9 * AUDIO_RATE) }));
    const keyframeWall = 1000 + ((keyframe.timestamp - videoAtPlay()) | 0) / 90000;
    const audioAtKeyframe =
      AUDIO_AT_PLAY + Math.round(1.9 * AUDIO_RATE) + Math.round((keyframeWall - 1002) * AUDIO_RATE);
    expect(fan.startOfNextReader()).toEqual([
      { track: 0, sequence: keyframe.sequence, rtpTime: keyframe.timestamp },
      { track: 1, sequence: second, rtpTime: audioAtKeyframe >>> 0 },
    ]);
  });

  it("with nothing cached, names the latest picture's instant and no sequence numbers", () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264', clockRates: [90000, AUDIO_RATE] });
    fan.setPlayClocks([videoAtPlay(), AUDIO_AT_PLAY]);
    // A picture that is not a keyframe, as if the camera session had begun mid-group: nothing to cache.
    const nonKey = packets.find((p) => !isKeyframe(p))!;
    fan.push(0, nonKey);
    fan.push(1, audioPacket(1, AUDIO_AT_PLAY + 777));
    const at = readRtpHeader(nonKey)!.timestamp;
    expect(fan.startOfNextReader()).toEqual([
      { track: 0, rtpTime: at },
      { track: 1, rtpTime: (AUDIO_AT_PLAY + Math.round((((at - videoAtPlay()) | 0) / 90000) * AUDIO_RATE)) >>> 0 },
    ]);
  });

  it("without the camera's clocks, or after a reset, each track starts at its first cached packet", () => {
    const fan = new FanOut({ videoTrack: 0, codec: 'H264', clockRates: [90000, AUDIO_RATE] });
    fan.setPlayClocks([videoAtPlay(), undefined]); // a camera that names only one track
    const [, second] = keyframeIndexes();
    feed(fan, second! + 3);
    const keyframe = readRtpHeader(packets[second!]!)!;
    const firstAudio =
      (AUDIO_AT_PLAY + Math.round((((keyframe.timestamp - videoAtPlay()) | 0) / 90000 + 0.3) * AUDIO_RATE)) >>> 0;
    expect(fan.startOfNextReader()).toEqual([
      { track: 0, sequence: keyframe.sequence, rtpTime: keyframe.timestamp },
      { track: 1, sequence: second, rtpTime: firstAudio },
    ]);
    fan.setPlayClocks([videoAtPlay(), AUDIO_AT_PLAY]);
    fan.reset();
    expect(fan.startOfNextReader()).toEqual([]);
  });
});
