import { describe, expect, it } from 'vitest';
import { MediaFormatError } from '../../../src/media/errors.js';
import { SampleData } from '../../../src/media/fmp4/sample-data.js';

// Samples laid out as an mdat holds them: each NAL unit after its 4-byte length, one sample after
// another, across growth of the buffer; bad samples refused whole.

const nal = (fill: number, size: number) => Buffer.alloc(size, fill);
const prefixed = (...nalus: Buffer[]) =>
  Buffer.concat(
    nalus.flatMap((n) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(n.length);
      return [length, n];
    }),
  );

describe('SampleData', () => {
  it('lays out each sample as length-prefixed NAL units and returns its size', () => {
    const data = new SampleData();
    expect(data.appendNalus([nal(1, 3), nal(2, 5)])).toBe(16);
    expect(data.appendNalus([nal(3, 1)])).toBe(5);
    expect(data.length).toBe(21);
    expect(data.view()).toEqual(prefixed(nal(1, 3), nal(2, 5), nal(3, 1)));
  });

  it('grows past its first capacity and keeps what it held', () => {
    const data = new SampleData({ capacity: 8 });
    const nalus = Array.from({ length: 40 }, (_, i) => nal(i, 1 + (i % 7) * 300));
    for (const n of nalus) data.appendNalus([n]);
    expect(data.view()).toEqual(prefixed(...nalus));
  });

  it('starts again after clear(), its buffer kept', () => {
    const data = new SampleData({ capacity: 16 });
    data.appendNalus([nal(1, 100)]);
    data.clear();
    expect(data.length).toBe(0);
    data.appendNalus([nal(2, 2)]);
    expect(data.view()).toEqual(prefixed(nal(2, 2)));
  });

  it.each<[string, Buffer[]]>([
    ['a sample without NAL units', []],
    ['an empty NAL unit', [nal(1, 4), Buffer.alloc(0)]],
    ['more than maxBytes in all', [nal(1, 60), nal(2, 60)]],
  ])('refuses %s with a MediaFormatError and keeps what it held', (_name, nalus) => {
    const data = new SampleData({ capacity: 8, maxBytes: 100 });
    data.appendNalus([nal(7, 6)]);
    expect(() => data.appendNalus(nalus)).toThrow(MediaFormatError);
    expect(data.view()).toEqual(prefixed(nal(7, 6)));
    expect(data.appendNalus([nal(8, 2)])).toBe(6);
  });
});
