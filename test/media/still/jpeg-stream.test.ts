import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { JpegSplitter } from '../../../src/media/still/jpeg-stream.js';
import { JpegStreamError } from '../../../src/media/still/errors.js';
import { makeRng } from '../../support/fuzz.js';

// Cutting ffmpeg's image2pipe output into JPEGs: real JPEGs, the markers that are not ends, bad
// streams, every way a pipe may cut the bytes into chunks, and random input.

const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex');
const real = (source: string) =>
  spawnSync(
    'ffmpeg',
    [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `${source}=size=64x48`,
      '-frames:v',
      '1',
      '-c:v',
      'mjpeg',
      '-pix_fmt',
      'yuvj420p',
      '-f',
      'image2pipe',
      'pipe:1',
    ],
    { maxBuffer: 1 << 20 },
  ).stdout;
const A = real('testsrc2');
const B = real('mandelbrot');

function splitAll(chunks: Buffer[], max = 1 << 20): { pictures: Buffer[]; pending: number } {
  const s = new JpegSplitter(max);
  const pictures = chunks.flatMap((c) => s.push(c));
  return { pictures, pending: s.pending };
}

describe('JpegSplitter', () => {
  it.each<{ what: string; input: Buffer; want: Buffer[]; pending?: number }>([
    { what: 'two real JPEGs', input: Buffer.concat([A, B]), want: [A, B] },
    { what: 'the shortest JPEG', input: hex('ffd8 ffd9'), want: [hex('ffd8 ffd9')] },
    {
      what: 'FF D9 inside a table segment is not the end',
      input: hex('ffd8 ffdb 0006 ffd9 ffd9 ffd9'),
      want: [hex('ffd8 ffdb 0006 ffd9 ffd9 ffd9')],
    },
    {
      what: 'stuffed FF 00 and restart markers in the scan',
      input: hex('ffd8 ffda 0003 01 12ff0034ffd356 ffd9'),
      want: [hex('ffd8 ffda 0003 01 12ff0034ffd356 ffd9')],
    },
    { what: 'fill bytes before a marker', input: hex('ffd8 ffffffd9'), want: [hex('ffd8 ffffffd9')] },
    {
      what: 'a progressive picture: a second scan after the first',
      input: hex('ffd8 ffda 0002 aa ffda 0002 bb ffd9'),
      want: [hex('ffd8 ffda 0002 aa ffda 0002 bb ffd9')],
    },
    { what: 'a JPEG not yet whole waits', input: Buffer.concat([A, B.subarray(0, 100)]), want: [A], pending: 100 },
    { what: 'nothing', input: Buffer.alloc(0), want: [] },
  ])('$what', ({ input, want, pending }) => {
    const out = splitAll([input]);
    expect(out.pictures).toEqual(want);
    expect(out.pending).toBe(pending ?? 0);
  });

  it.each<{ what: string; input: Buffer; error: RegExp }>([
    { what: 'bytes before a JPEG', input: Buffer.concat([hex('00'), A]), error: /no SOI/ },
    { what: 'a segment length under 2', input: hex('ffd8 ffdb 0001'), error: /segment length of 1/ },
    { what: 'no marker after a segment', input: hex('ffd8 ffdb 0002 00 00'), error: /no marker/ },
    { what: 'an SOI inside a JPEG', input: hex('ffd8 ffd8'), error: /unexpected marker FF d8/ },
    {
      what: 'a picture over the bound',
      input: Buffer.concat([hex('ffd8 ffda 0002'), Buffer.alloc(200, 1)]),
      error: /larger than 100 bytes/,
    },
  ])('refused: $what', ({ input, error }) => {
    expect(() => splitAll([input], 100)).toThrow(JpegStreamError);
    expect(() => splitAll([input], 100)).toThrow(error);
  });

  it('the same pictures however the pipe cuts the bytes (every cut in two, and byte by byte)', () => {
    const stream = Buffer.concat([A, B, A]);
    const want = [A, B, A].map((p) => p.toString('hex')).join('|');
    const got = (chunks: Buffer[]) =>
      splitAll(chunks)
        .pictures.map((p) => p.toString('hex'))
        .join('|');
    const wrong: number[] = [];
    for (let cut = 0; cut <= stream.length; cut++)
      if (got([stream.subarray(0, cut), stream.subarray(cut)]) !== want) wrong.push(cut);
    expect(wrong).toEqual([]);
    expect(got([...stream].map((b) => Buffer.of(b)))).toBe(want);
  });
});

describe('JpegSplitter fuzz', () => {
  const rng = makeRng();
  it(`random and mutated streams: JpegStreamError or whole pictures that are the stream's own bytes (seed ${rng.seed})`, () => {
    for (let i = 0; i < 3000; i++) {
      let stream: Buffer;
      if (rng.int(2) === 0) stream = Buffer.concat([hex('ffd8'), rng.bytes(60)]);
      else {
        stream = Buffer.concat([A, B]);
        for (let m = rng.int(4); m >= 0; m--)
          stream[rng.int(stream.length)] = rng.pick([0xff, 0xd9, 0xda, 0x00, rng.int(256)]);
      }
      const chunks: Buffer[] = [];
      for (let at = 0; at < stream.length;) {
        const n = 1 + rng.int(700);
        chunks.push(stream.subarray(at, at + n));
        at += n;
      }
      const s = new JpegSplitter(4096);
      const got: Buffer[] = [];
      try {
        for (const c of chunks) got.push(...s.push(c));
      } catch (err) {
        expect(err).toBeInstanceOf(JpegStreamError);
        continue;
      }
      const ends = got.map((p) => p.subarray(0, 2).toString('hex') + p.subarray(-2).toString('hex'));
      expect(ends.filter((e) => e !== 'ffd8ffd9')).toEqual([]);
      expect(Buffer.concat([...got, stream.subarray(stream.length - s.pending)]).equals(stream)).toBe(true);
    }
  });
});
