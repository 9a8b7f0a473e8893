import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/media/access-unit.js';
import { MediaFormatError } from '../../../src/media/errors.js';
import { codecsString } from '../../../src/media/fmp4/codecs.js';
import { fitG711Frame } from '../../../src/media/fmp4/g711-fit.js';
import { buildInitSegment } from '../../../src/media/fmp4/init-segment.js';
import { findBox, findBoxes, readBoxes } from '../../../src/media/fmp4/reader.js';
import { g711Track, h264Track, type G711Law } from '../../../src/media/fmp4/track.js';

// G.711 in the init segment (QuickTime's 'ulaw'/'alaw' sound sample description, version 0), the
// track's checks, and G.711 frames made to fill the durations the decode timeline gives them.

const SPS = Buffer.from('6764000cacd94141fb011000000300100000030140f1429960', 'hex');
const PPS = Buffer.from('68ebe3cb22c0', 'hex');
const video = h264Track(1, { sps: [SPS], pps: [PPS] });

describe('G.711 init segment', () => {
  it.each<[G711Law, number, number, string, string]>([
    // reserved, data_reference_index 1, version/revision/vendor, channels, samplesize 16, compression id, packet
    // size, rate 16.16
    ['mu', 8000, 1, 'ulaw', '000000000000 0001 0000 0000 00000000 0001 0010 0000 0000 1f400000'],
    ['a', 16_000, 2, 'alaw', '000000000000 0001 0000 0000 00000000 0002 0010 0000 0000 3e800000'],
  ])('%s-law at %i Hz, %i channel(s): a %s sample entry after the video', (law, rate, channels, fourcc, fields) => {
    const track = g711Track(2, law, rate, channels);
    const boxes = readBoxes(buildInitSegment([video, track]));
    const traks = findBoxes(boxes, 'trak');
    expect(traks).toHaveLength(2);
    const audio = traks[1]!;
    const stsd = findBox([audio], 'stsd')!;
    expect(stsd.body.readUInt32BE(4)).toBe(1); // one entry
    expect(stsd.children.map((c) => [c.type, c.size])).toEqual([[fourcc, 36]]);
    expect(stsd.children[0]!.body.toString('hex')).toBe(fields.replaceAll(' ', ''));
    expect(findBox([audio], 'hdlr')!.body.toString('latin1', 8, 12)).toBe('soun');
    expect(findBox([audio], 'smhd')).toBeDefined();
    expect(findBox([audio], 'mdhd')!.body.readUInt32BE(12)).toBe(rate); // timescale: one tick a sample
    const tkhd = findBox([audio], 'tkhd')!.body;
    expect([tkhd.readUInt32BE(12), tkhd.readUInt16BE(36)]).toEqual([2, 0x0100]); // track_ID, volume 1.0
    expect(codecsString(track)).toBe(fourcc);
  });

  it.each<[string, () => unknown]>([
    ['no samples a second', () => g711Track(2, 'mu', 0, 1)],
    ['a rate past 16.16', () => g711Track(2, 'mu', 65_536, 1)],
    ['a fractional rate', () => g711Track(2, 'a', 8000.5, 1)],
    ['no channels', () => g711Track(2, 'a', 8000, 0)],
    ['seven channels', () => g711Track(2, 'mu', 8000, 7)],
    ['a law of neither kind', () => g711Track(2, 'x' as G711Law, 8000, 1)],
  ])('refuses %s with a MediaFormatError', (_name, make) => {
    expect(make).toThrow(MediaFormatError);
  });
});

describe('fitG711Frame', () => {
  const frame = (data: Buffer, duration: number) => ({
    unit: { rtpTime: 0, data, afterLoss: false } satisfies AudioFrame,
    dts: 480,
    compositionOffset: 0,
    duration,
  });
  const bytes = (...parts: Array<[number, number]>) => Buffer.concat(parts.map(([n, v]) => Buffer.alloc(n, v)));

  it.each<[string, G711Law, number, Buffer, number, Buffer, number]>([
    ['a frame as long as its duration, as it is', 'mu', 1, bytes([160, 1]), 160, bytes([160, 1]), 160],
    [
      'µ-law before a lost packet: silence 0xFF after it',
      'mu',
      1,
      bytes([160, 1]),
      320,
      bytes([160, 1], [160, 0xff]),
      320,
    ],
    ['A-law before a gap: silence 0xD5 after it', 'a', 1, bytes([160, 1]), 200, bytes([160, 1], [40, 0xd5]), 200],
    ['stereo: silence for both channels', 'a', 2, bytes([320, 1]), 170, bytes([320, 1], [20, 0xd5]), 170],
    ['a frame overlapping the next: cut where it starts', 'mu', 1, bytes([100, 1], [60, 2]), 100, bytes([100, 1]), 100],
    ['no duration known: the frame’s own', 'mu', 2, bytes([320, 1]), 0, bytes([320, 1]), 160],
  ])('%s', (_name, law, channels, data, duration, expected, expectedDuration) => {
    const fitted = fitG711Frame(frame(data, duration), g711Track(2, law, 8000, channels));
    expect(fitted.unit.data).toEqual(expected);
    expect(fitted.duration).toBe(expectedDuration);
    expect(fitted.dts).toBe(480);
  });
});
