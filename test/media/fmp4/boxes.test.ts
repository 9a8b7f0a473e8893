import { describe, expect, it } from 'vitest';
import { parseAacConfig } from '../../../src/media/aac-config.js';
import { MediaFormatError } from '../../../src/media/errors.js';
import { BoxWriter } from '../../../src/media/fmp4/box-writer.js';
import { codecsString } from '../../../src/media/fmp4/codecs.js';
import {
  fragmentChunks,
  type FragmentSample,
  type FragmentTrackRun,
  type PayloadTrackRun,
} from '../../../src/media/fmp4/fragment.js';
import { buildInitSegment } from '../../../src/media/fmp4/init-segment.js';
import { SampleData } from '../../../src/media/fmp4/sample-data.js';
import {
  findBox,
  findBoxes,
  readBoxes,
  readMfhd,
  readTfdt,
  readTfhd,
  readTrun,
} from '../../../src/media/fmp4/reader.js';
import { aacTrack, h264Track, h265Track } from '../../../src/media/fmp4/track.js';
import { buildFragment } from './fragment-bytes.js';

// Round trips through the reader: what fragmentChunks (joined) and buildInitSegment write reads back as the
// inputs, every data offset lands on its sample's bytes, and bad inputs are MediaFormatErrors.

// x264's SPS for 320x240 at 10 fps, High profile level 1.2 (`ffmpeg -f lavfi -i testsrc2=size=320x240:rate=10 -c:v
// libx264 -f h264`).
const SPS = Buffer.from('6764000cacd94141fb011000000300100000030140f1429960', 'hex');
const PPS = Buffer.from('68ebe3cb22c0', 'hex');
// x265's VPS/SPS/PPS for the same picture, Main profile level 2 (`… -c:v libx265 -f hevc`).
const VPS = Buffer.from('40010c01ffff01600000030090000003000003003c959809', 'hex');
const H265_SPS = Buffer.from(
  '42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003001410',
  'hex',
);
const H265_PPS = Buffer.from('4401c172b46240', 'hex');

const video = h264Track(1, { sps: [SPS], pps: [PPS] });
const audio = aacTrack(2, parseAacConfig(Buffer.from('1190', 'hex'))); // AAC-LC 48 kHz stereo

const nal = (n: number, size: number) => Buffer.alloc(size, n);

function vs(duration: number, compositionOffset: number, keyframe: boolean, ...sizes: number[]): FragmentSample {
  return { duration, compositionOffset, keyframe, payload: sizes.map((s, i) => nal(i + 1, s)) };
}

function as(size: number): FragmentSample {
  return { duration: 1024, compositionOffset: 0, keyframe: true, payload: nal(9, size) };
}

const CASES: Array<[string, number, PayloadTrackRun[]]> = [
  ['one keyframe', 1, [{ track: video, baseDecodeTime: 0, samples: [vs(3000, 0, true, 10, 200)] }]],
  [
    'B-frames: negative composition offsets',
    7,
    [
      {
        track: video,
        baseDecodeTime: 90_000,
        samples: [vs(3000, 0, true, 5), vs(3000, 6000, false, 4), vs(3000, -3000, false, 3), vs(3000, -3000, false, 3)],
      },
    ],
  ],
  [
    'a decode time past 32 bits',
    2 ** 32 - 1,
    [{ track: video, baseDecodeTime: 2 ** 40 + 5, samples: [vs(1, 0, false, 1)] }],
  ],
  ['audio only', 3, [{ track: audio, baseDecodeTime: 48_000, samples: [as(300), as(280), as(310)] }]],
  [
    'video and audio',
    4,
    [
      { track: video, baseDecodeTime: 9000, samples: [vs(3600, 0, true, 50), vs(3600, 0, false, 20)] },
      { track: audio, baseDecodeTime: 4800, samples: [as(100), as(90)] },
    ],
  ],
];

describe('fragmentChunks', () => {
  it.each(CASES)('%s: reads back as written, data offsets on the samples', (_name, sequence, runs) => {
    const bytes = buildFragment(sequence, runs);
    const boxes = readBoxes(bytes);
    expect(boxes.map((b) => b.type)).toEqual(['moof', 'mdat']);
    expect(boxes.reduce((sum, b) => sum + b.size, 0)).toBe(bytes.length);
    const moof = boxes[0]!;
    expect(readMfhd(findBox([moof], 'mfhd')!).sequence).toBe(sequence);
    const trafs = findBoxes([moof], 'traf');
    expect(trafs).toHaveLength(runs.length);
    trafs.forEach((traf, t) => {
      const run = runs[t]!;
      const isVideo = run.track.kind === 'video';
      const tfhd = readTfhd(findBox([traf], 'tfhd')!);
      expect(tfhd.trackId).toBe(run.track.id);
      expect(tfhd.flags & 0x020000).toBe(0x020000); // default-base-is-moof
      expect(readTfdt(findBox([traf], 'tfdt')!).baseDecodeTime).toBe(run.baseDecodeTime);
      const trun = readTrun(findBox([traf], 'trun')!);
      expect(trun.version).toBe(isVideo ? 1 : 0);
      expect(
        trun.samples.map((s) => [
          s.duration,
          s.compositionOffset ?? 0,
          (s.flags ?? tfhd.defaultSampleFlags!) === 0x02000000,
        ]),
      ).toEqual(run.samples.map((s) => [s.duration, s.compositionOffset, s.keyframe]));
      let at = moof.start + trun.dataOffset!;
      run.samples.forEach((s, i) => {
        const expected = Buffer.isBuffer(s.payload)
          ? s.payload
          : Buffer.concat(s.payload.flatMap((n) => [Buffer.of(0, 0, n.length >> 8, n.length & 0xff), n]));
        expect(trun.samples[i]!.size).toBe(expected.length);
        expect(bytes.subarray(at, at + expected.length)).toEqual(expected);
        at += expected.length;
      });
    });
  });

  it.each(CASES)('%s: the same bytes with the video samples laid out beforehand', (_name, sequence, runs) => {
    const laidOut = runs.map((run): FragmentTrackRun => {
      if (run.track.kind !== 'video') return run;
      const data = new SampleData({ capacity: 4 });
      const samples = run.samples.map((s) => ({
        duration: s.duration,
        compositionOffset: s.compositionOffset,
        keyframe: s.keyframe,
        size: data.appendNalus(s.payload as readonly Buffer[]),
      }));
      return { track: run.track, baseDecodeTime: run.baseDecodeTime, samples, data: data.view() };
    });
    expect(buildFragment(sequence, laidOut)).toEqual(buildFragment(sequence, runs));
    // As a list: the same bytes, each laid-out run's data the very buffer given (no copy).
    const chunks = fragmentChunks(sequence, laidOut);
    expect(Buffer.concat(chunks)).toEqual(buildFragment(sequence, runs));
    laidOut.forEach((run, t) => {
      if (run.data !== undefined) expect(chunks[1 + t]).toBe(run.data);
    });
  });

  it.each<[string, number[], Buffer]>([
    ['sizes adding up to less than the data', [4, 4], Buffer.alloc(9)],
    ['sizes adding up to more than the data', [4, 6], Buffer.alloc(9)],
    ['a sample of 0 bytes', [0, 9], Buffer.alloc(9)],
    ['a fractional size', [4.5, 4.5], Buffer.alloc(9)],
  ])('refuses a laid-out run with %s', (_name, sizes, data) => {
    const samples = sizes.map((size) => ({ duration: 1, compositionOffset: 0, keyframe: true, size }));
    expect(() => buildFragment(1, [{ track: video, baseDecodeTime: 0, samples, data }])).toThrow(MediaFormatError);
  });

  it.each<[string, number, FragmentTrackRun[]]>([
    ['sequence 0', 0, [{ track: video, baseDecodeTime: 0, samples: [vs(1, 0, true, 1)] }]],
    ['sequence past 32 bits', 2 ** 32, [{ track: video, baseDecodeTime: 0, samples: [vs(1, 0, true, 1)] }]],
    ['no samples', 1, [{ track: video, baseDecodeTime: 0, samples: [] }]],
    ['a negative decode time', 1, [{ track: video, baseDecodeTime: -1, samples: [vs(1, 0, true, 1)] }]],
    ['an unsafe decode time', 1, [{ track: video, baseDecodeTime: 2 ** 53, samples: [vs(1, 0, true, 1)] }]],
    ['a fractional duration', 1, [{ track: video, baseDecodeTime: 0, samples: [vs(1.5, 0, true, 1)] }]],
    ['a duration past 32 bits', 1, [{ track: video, baseDecodeTime: 0, samples: [vs(2 ** 32, 0, true, 1)] }]],
    ['a NaN composition offset', 1, [{ track: video, baseDecodeTime: 0, samples: [vs(1, Number.NaN, true, 1)] }]],
    ['a composition offset past 32 bits', 1, [{ track: video, baseDecodeTime: 0, samples: [vs(1, 2 ** 31, true, 1)] }]],
    ['an empty NAL unit', 1, [{ track: video, baseDecodeTime: 0, samples: [vs(1, 0, true, 0)] }]],
    ['a video sample without NAL units', 1, [{ track: video, baseDecodeTime: 0, samples: [vs(1, 0, true)] }]],
    ['an audio sample given as NAL units', 1, [{ track: audio, baseDecodeTime: 0, samples: [vs(1, 0, true, 1)] }]],
    [
      'an audio composition offset',
      1,
      [{ track: audio, baseDecodeTime: 0, samples: [{ ...as(3), compositionOffset: 5 }] }],
    ],
    ['an empty audio frame', 1, [{ track: audio, baseDecodeTime: 0, samples: [as(0)] }]],
    [
      'one track twice',
      1,
      [
        { track: video, baseDecodeTime: 0, samples: [vs(1, 0, true, 1)] },
        { track: video, baseDecodeTime: 0, samples: [vs(1, 0, true, 1)] },
      ],
    ],
  ])('refuses %s with a MediaFormatError', (_name, sequence, runs) => {
    expect(() => buildFragment(sequence, runs)).toThrow(MediaFormatError);
  });
});

describe('buildInitSegment', () => {
  it('writes ftyp and moov with one trak and trex per track, the parameter sets in avcC and the config in esds', () => {
    const init = buildInitSegment([video, audio]);
    const boxes = readBoxes(init);
    expect(boxes.map((b) => b.type)).toEqual(['ftyp', 'moov']);
    expect(boxes[0]!.body.toString('latin1', 0, 4)).toBe('iso6');
    expect(findBoxes(boxes, 'trak')).toHaveLength(2);
    expect(findBoxes(boxes, 'trex').map((t) => t.body.readUInt32BE(4))).toEqual([1, 2]);
    const avcC = findBox(boxes, 'avcC')!.body;
    expect(avcC.subarray(0, 6)).toEqual(Buffer.of(1, 0x64, 0x00, 0x0c, 0xff, 0xe1));
    expect(avcC.subarray(8, 8 + SPS.length)).toEqual(SPS);
    const avc1 = findBox(boxes, 'avc1')!.body;
    expect([avc1.readUInt16BE(24), avc1.readUInt16BE(26)]).toEqual([320, 240]);
    const mdhds = findBoxes(boxes, 'mdhd').map((m) => m.body.readUInt32BE(12));
    expect(mdhds).toEqual([90_000, 48_000]);
    expect(findBox(boxes, 'esds')!.body.includes(Buffer.from('1190', 'hex'))).toBe(true);
    expect(findBox(boxes, 'mp4a')!.body.readUInt16BE(16)).toBe(2);
    expect(codecsString(video)).toBe('avc1.64000C');
    expect(codecsString(audio)).toBe('mp4a.40.2');
  });

  it('writes hvc1 with hvcC arrays of VPS, SPS and PPS and the profile from the SPS', () => {
    const track = h265Track(1, { vps: [VPS], sps: [H265_SPS], pps: [H265_PPS] });
    expect([track.width, track.height]).toEqual([320, 240]);
    const hvcC = findBox(readBoxes(buildInitSegment([track])), 'hvcC')!.body;
    expect(hvcC.readUInt8(1)).toBe(0x01); // Main profile, tier 0, space 0
    expect(hvcC.readUInt8(22)).toBe(3); // three arrays
    expect(hvcC.includes(H265_SPS)).toBe(true);
    expect(codecsString(track)).toBe('hvc1.1.6.L60.90');
  });

  it.each<[string, () => unknown, string]>([
    ['no SPS', () => h264Track(1, { sps: [], pps: [PPS] }), 'bad_sps'],
    ['an SPS of garbage', () => h264Track(1, { sps: [Buffer.of(0x67, 0xff)], pps: [PPS] }), 'bad_sps'],
    ['a PPS that is an SPS', () => h264Track(1, { sps: [SPS], pps: [SPS] }), 'bad_pps'],
    ['no PPS', () => h264Track(1, { sps: [SPS], pps: [] }), 'bad_pps'],
    [
      'an H.265 SPS cut short',
      () => h265Track(1, { vps: [VPS], sps: [H265_SPS.subarray(0, 12)], pps: [H265_PPS] }),
      'bad_sps',
    ],
    ['no VPS', () => h265Track(1, { vps: [], sps: [H265_SPS], pps: [H265_PPS] }), 'bad_vps'],
    ['an AAC config of one byte', () => parseAacConfig(Buffer.of(0x11)), 'bad_audio_config'],
    ['an AAC config with sample-rate index 13', () => parseAacConfig(Buffer.of(0x16, 0x90)), 'bad_audio_config'],
    ['an AAC config with channel configuration 0', () => parseAacConfig(Buffer.of(0x11, 0x80)), 'bad_audio_config'],
  ])('refuses %s with a MediaFormatError naming it', (_name, make, code) => {
    let thrown: unknown;
    try {
      make();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(MediaFormatError);
    expect((thrown as MediaFormatError).code).toBe(code);
  });
});

describe('readBoxes', () => {
  it.each<[string, Buffer]>([
    ['a size below the header', Buffer.from('00000004free', 'hex')],
    ['a size past the end', Buffer.concat([Buffer.of(0, 0, 0, 20), Buffer.from('free'), Buffer.alloc(4)])],
    ['stray bytes', Buffer.of(0, 0, 0)],
    [
      'a child past its parent',
      Buffer.concat([Buffer.of(0, 0, 0, 16), Buffer.from('moov'), Buffer.of(0, 0, 0, 9), Buffer.from('free')]),
    ],
  ])('refuses %s', (_name, bytes) => {
    expect(() => readBoxes(bytes)).toThrow(MediaFormatError);
  });

  it('grows the writer past its first capacity', () => {
    const w = new BoxWriter(8);
    w.start('free').zeros(100).end();
    expect(readBoxes(w.finish())[0]).toMatchObject({ type: 'free', size: 108 });
  });
});
