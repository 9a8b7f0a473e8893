import { beforeAll, describe, expect, it } from 'vitest';
import { codecsString } from '../../../src/media/fmp4/codecs.js';
import { captureRtp } from '../../support/rtp-capture.js';
import { annexB, decode, ffprobe, muxAac, muxVideo, withFile } from './mux-capture.js';

// ffmpeg encodes one second of its 320x240 10 fps test picture, sends it as RTP on loopback; the
// capture goes through our depacketiser, decode timeline and muxer, and ffprobe/ffmpeg read the file.
// What they read must be what ffmpeg encoded: every picture, decoded to the same pixels as the
// elementary stream, at the RTP presentation times, keyframes where the encoder put them.

const FRAME = 9000; // 90 kHz / 10 fps

interface VideoCase {
  name: string;
  codec: 'H264' | 'H265';
  encoder: string[];
  codecName: string;
  bFrames: boolean;
  codecs: RegExp;
}

const VIDEO_CASES: VideoCase[] = [
  {
    name: 'H.264 without B-frames',
    codec: 'H264',
    encoder: ['-c:v', 'libx264', '-g', '5', '-bf', '0', '-sc_threshold', '0'],
    codecName: 'h264',
    bFrames: false,
    codecs: /^avc1\.[0-9A-F]{6}$/,
  },
  {
    name: 'H.264 with B-frames',
    codec: 'H264',
    encoder: ['-c:v', 'libx264', '-g', '5', '-bf', '2', '-sc_threshold', '0'],
    codecName: 'h264',
    bFrames: true,
    codecs: /^avc1\.64[0-9A-F]{4}$/,
  },
  {
    name: 'H.265 without B-frames',
    codec: 'H265',
    encoder: ['-c:v', 'libx265', '-x265-params', 'log-level=error:keyint=5:min-keyint=5:scenecut=0:bframes=0'],
    codecName: 'hevc',
    bFrames: false,
    codecs: /^hvc1\.1\.6\.L\d+(\.[0-9A-F]+)*$/,
  },
  {
    name: 'H.265 with B-frames',
    codec: 'H265',
    encoder: ['-c:v', 'libx265', '-x265-params', 'log-level=error:keyint=5:min-keyint=5:scenecut=0:bframes=3'],
    codecName: 'hevc',
    bFrames: true,
    codecs: /^hvc1\.1\.6\.L\d+(\.[0-9A-F]+)*$/,
  },
];

describe.each(VIDEO_CASES)('fMP4 from RTP: $name', (c) => {
  let muxed: ReturnType<typeof muxVideo>;
  let file: Buffer;
  beforeAll(async () => {
    const { packets } = await captureRtp(c.encoder);
    muxed = muxVideo(packets, c.codec);
    file = Buffer.concat([muxed.init, ...muxed.fragments]);
  });

  it('ffprobe reads the codec, the SPS picture size and every picture at its RTP time', async () => {
    const units = muxed.units;
    expect(units.length).toBe(10); // one second at 10 fps, nothing lost on loopback
    const first = units[0]!.rtpTime;
    const expectedPts = units.map((u) => (u.rtpTime - first) >>> 0);
    // The capture is the case it claims to be: pictures out of presentation order only with B-frames.
    const reordered = expectedPts.some((p, i) => i > 0 && p < expectedPts[i - 1]!);
    expect(reordered).toBe(c.bFrames);

    const probe = await withFile(file, 'out.mp4', ffprobe);
    expect(probe.streams).toHaveLength(1);
    expect(probe.streams[0]).toMatchObject({ codec_name: c.codecName, width: 320, height: 240, time_base: '1/90000' });
    // ffmpeg shifts a track with negative composition offsets so that no PTS is negative: same spacing.
    const pts = probe.packets.map((p) => p.pts!);
    const shift = Math.min(...pts);
    expect(pts.map((p) => p - shift)).toEqual(expectedPts);
    expect(shift === 0).toBe(!c.bFrames);
    // Our own samples, before ffmpeg: PTS = DTS + offset exactly, and the first picture's DTS = PTS = 0.
    expect(muxed.dts.map((d, i) => d + muxed.samples[i]!.compositionOffset)).toEqual(expectedPts);
    expect(muxed.dts[0]).toBe(0);
    const dts = probe.packets.map((p) => p.dts!);
    dts.forEach((d, i) => i > 0 && expect(d).toBeGreaterThan(dts[i - 1]!));
    expect(probe.packets.map((p) => p.flags.startsWith('K'))).toEqual(units.map((u) => u.keyframe));
    expect(units.filter((u) => u.keyframe).length).toBe(2); // -g 5 / keyint=5 over 10 pictures
    expect(probe.frames).toHaveLength(10);
    expect(probe.frames.map((f) => f.best_effort_timestamp! - shift).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 10 }, (_, i) => i * FRAME),
    );
    // Sample durations are the frame spacing: no short samples from a reorder depth learnt late.
    expect(muxed.samples.map((s) => s.duration)).toEqual(Array.from({ length: 10 }, () => FRAME));
  });

  it('decodes without an error to the pixels of the elementary stream ffmpeg sent', async () => {
    const ours = await withFile(file, 'out.mp4', (f) => decode(f));
    const reference = await withFile(annexB(muxed.units), c.codec === 'H264' ? 'ref.h264' : 'ref.hevc', (f) =>
      decode(f),
    );
    expect(ours.errors).toBe('');
    expect(reference.errors).toBe('');
    expect(ours.hashes).toHaveLength(10);
    expect(ours.hashes).toEqual(reference.hashes);
  });

  it('names the codec for CODECS from the SPS', () => {
    expect(codecsString(muxed.track)).toMatch(c.codecs);
  });
});

describe('fMP4 from RTP: AAC (RFC 3640 AAC-hbr)', () => {
  let muxed: ReturnType<typeof muxAac>;
  beforeAll(async () => {
    // captureRtp's `-t 1` lands before these options, so it bounds the sine input that is sent.
    const { packets, sdp } = await captureRtp([
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000',
      '-map',
      '1:a',
      '-c:a',
      'aac',
      '-ac',
      '1',
    ]);
    muxed = muxAac(packets, sdp);
  });

  it('ffprobe reads AAC at the config sample rate, every frame 1024 samples after the last', async () => {
    const frames = muxed.frames;
    expect(frames.length).toBeGreaterThanOrEqual(46); // 48000 / 1024 ≈ 47 frames in a second
    const probe = await withFile(Buffer.concat([muxed.init, ...muxed.fragments]), 'audio.mp4', ffprobe);
    expect(probe.streams[0]).toMatchObject({
      codec_name: 'aac',
      sample_rate: '48000',
      channels: 1,
      time_base: '1/48000',
    });
    expect(probe.packets.map((p) => p.pts)).toEqual(frames.map((_, i) => i * 1024));
    expect(probe.packets.map((p) => Number(p.size))).toEqual(frames.map((f) => f.data.length));
    expect(codecsString(muxed.track)).toBe('mp4a.40.2');
  });

  it('decodes without an error', async () => {
    const ours = await withFile(Buffer.concat([muxed.init, ...muxed.fragments]), 'audio.mp4', (f) => decode(f));
    expect(ours.errors).toBe('');
    expect(ours.hashes.length).toBe(muxed.frames.length);
  });
});
