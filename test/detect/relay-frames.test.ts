import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decoders, PpmSplitter, relayFrames, type FrameStream } from '../../src/detect/relay-frames.js';
import { FrameError } from '../../src/detect/errors.js';
import type { Frame } from '../../src/detect/types.js';
import { FanOut, type FanOutReader } from '../../src/media/relay/fanout.js';
import { captureRtp } from '../support/rtp-capture.js';

// The detection frames from the relay's stream: real encoder output (ffmpeg's RTP muxer) through
// the relay's real fan-out, decoded by a real ffmpeg. Each picture's brightness says its number
// (luma 16 + 8 N, limited range: 8 N × 255 / 219 in RGB).

let capture: { packets: Buffer[]; sdp: string };
let h265: { packets: Buffer[]; sdp: string };
const decoders = new Decoders('ffmpeg', 1280);
const numbered = 'color=c=black:s=320x240:r=10,geq=lum=16+8*N:cb=128:cr=128';

beforeAll(async () => {
  [capture, h265] = await Promise.all([
    captureRtp(
      ['-c:v', 'libx264', '-g', '10', '-bf', '0', '-x264-params', 'repeat-headers=1', '-qp', '0'],
      [],
      numbered,
      2.5,
    ),
    captureRtp(
      ['-c:v', 'libx265', '-x265-params', 'log-level=error:keyint=10:repeat-headers=1:lossless=1', '-bf', '0'],
      [],
      numbered,
      2.5,
    ),
  ]);
}, 60_000);
afterAll(() => decoders.close());

/** A relay stream of one capture: `fed` packets already through its fan-out (cached). */
function streamOf(c: { packets: Buffer[]; sdp: string }, codec: 'H264' | 'H265') {
  const fan = new FanOut({ videoTrack: 0, codec });
  const readers = new Set<FanOutReader>();
  let fed = 0;
  const stream: FrameStream = {
    sdp: c.sdp,
    attach: (reader) => {
      fan.add(reader);
      readers.add(reader);
      return () => (fan.remove(reader), readers.delete(reader));
    },
  };
  const timestampOf = (p: Buffer) => p.readUInt32BE(4);
  return {
    stream,
    readers,
    fan,
    /** Feeds packets up to the end of picture `n` (0-based, pictures by RTP timestamp). */
    feedThrough(n: number) {
      const stamps = [...new Set(c.packets.map(timestampOf))];
      const last = stamps[n];
      while (fed < c.packets.length && stamps.indexOf(timestampOf(c.packets[fed]!)) <= n)
        fan.push(0, c.packets[fed++]!);
      return last;
    },
    feedAll() {
      while (fed < c.packets.length) fan.push(0, c.packets[fed++]!);
    },
  };
}

/** The picture number a frame shows. */
const pictureOf = (f: Frame) => Math.round((f.data[(f.width * (f.height >> 1) + (f.width >> 1)) * 3]! * 219) / 255 / 8);

async function all(source: { next(): Promise<Frame | null> }): Promise<Frame[]> {
  const out: Frame[] = [];
  for (let f = await source.next(); f; f = await source.next()) out.push(f);
  return out;
}

describe('relayFrames', () => {
  it.each([
    ['H.264', () => capture, 'H264' as const],
    ['H.265', () => h265, 'H265' as const],
  ])(
    '%s: the newest cached picture first, then one every spacing of stream time',
    { timeout: 30_000 },
    async (_name, c, codec) => {
      const s = streamOf(c(), codec);
      s.feedThrough(13); // a keyframe at 10: pictures 10–13 cached
      const source = relayFrames(s.stream, decoders, { count: 3, spacingMs: 500 });
      s.feedAll();
      const frames = await all(source);
      expect(source.ended).toBeNull();
      expect(frames.map(pictureOf)).toEqual([13, 18, 23]);
      expect(frames[0]).toMatchObject({ width: 320, height: 240 });
      expect(source.ended).toBeNull();
      expect(s.readers.size).toBe(0);
    },
  );

  it('with nothing cached, starts at the next keyframe', { timeout: 30_000 }, async () => {
    const s = streamOf(capture, 'H264');
    const source = relayFrames(s.stream, decoders, { count: 2, spacingMs: 300 });
    s.feedAll();
    expect((await all(source)).map(pictureOf)).toEqual([0, 3]);
  });

  it('a stream that stops mid-way: the frames it gave, then the end, and why', { timeout: 30_000 }, async () => {
    const s = streamOf(capture, 'H264');
    s.feedThrough(12);
    const source = relayFrames(s.stream, decoders, { count: 3, spacingMs: 500, stallMs: 500 });
    const frames = await all(source);
    expect(frames.map(pictureOf)).toEqual([12]);
    expect(source.ended).toMatch(/no picture from the stream for 500 ms/);
    expect(s.readers.size).toBe(0);
  });

  it(
    'evicted by the relay: the pictures already given, then the end; closed: ends at once',
    { timeout: 30_000 },
    async () => {
      const s = streamOf(capture, 'H264');
      s.feedThrough(12);
      const source = relayFrames(s.stream, decoders, { count: 3 });
      s.fan.evictAll('the camera is gone');
      expect((await all(source)).map(pictureOf)).toEqual([12]);
      expect(source.ended).toMatch(/the camera is gone/);
      expect(s.readers.size).toBe(0);
      const closed = relayFrames(s.stream, decoders, { count: 3 });
      closed.close();
      expect(await closed.next()).toBeNull();
    },
  );

  it('a corrupt stream (junk in every payload): no frame, ended, no hang', { timeout: 30_000 }, async () => {
    const junk = capture.packets.map((p, i) => {
      const copy = Buffer.from(p);
      for (let k = 12; k < copy.length; k++) copy[k] = (k * 31 + i * 7) & 0xff;
      return copy;
    });
    const s = streamOf({ packets: junk, sdp: capture.sdp }, 'H264');
    s.feedThrough(12);
    const source = relayFrames(s.stream, decoders, { count: 3, stallMs: 500 });
    s.feedAll();
    expect(await all(source)).toEqual([]);
    expect(source.ended).toMatch(/no picture from the stream|decoder|no parameter sets/);
  });

  it('a stream the relay cannot give, or no decoder: ended, no frames, no hang', { timeout: 30_000 }, async () => {
    const gone: FrameStream = {
      sdp: capture.sdp,
      attach: () => {
        throw new Error('stream not ready');
      },
    };
    const source = relayFrames(gone, decoders);
    expect(await source.next()).toBeNull();
    expect(source.ended).toMatch(/stream not ready/);
    const none = new Decoders('/nonexistent/ffmpeg', 1280);
    const s = streamOf(capture, 'H264');
    s.feedThrough(12);
    // The first from a fresh spawn, the second from the spare that could not start either.
    for (let i = 0; i < 2; i++) {
      const broken = relayFrames(s.stream, none, { timeoutMs: 20_000 });
      expect(await all(broken)).toEqual([]);
      expect(broken.ended).toMatch(/cannot run the decoder/);
    }
    none.close();
  });
});

describe('PpmSplitter', () => {
  const grey = (w: number, h: number, v: number) =>
    Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), Buffer.alloc(w * h * 3, v)]);

  it('cuts a stream of pictures wherever the chunks split it, skipping those not wanted', () => {
    const stream = Buffer.concat([grey(3, 2, 10), grey(2, 2, 200), grey(1, 1, 7)]);
    for (let cut = 1; cut < stream.length; cut += 5) {
      const s = new PpmSplitter(1000, (n) => n !== 1);
      const frames = [...s.push(stream.subarray(0, cut)), ...s.push(stream.subarray(cut))];
      expect(frames.map((f) => [f.width, f.height, f.data[0], f.data.length])).toEqual([
        [3, 2, 10, 18],
        [1, 1, 7, 3],
      ]);
    }
  });

  it('refuses what is not a PPM, and pictures over its size limit', () => {
    expect(() => new PpmSplitter(1000).push(Buffer.alloc(100, 0x41))).toThrow(FrameError);
    expect(() => new PpmSplitter(10).push(grey(4, 4, 0))).toThrow(/larger than allowed/);
  });
});
