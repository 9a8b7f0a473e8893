import { describe, expect, it } from 'vitest';
import { contentRange, parseRange, type RangeResult } from '../../src/api/range.js';
import { makeRng, mutate } from '../support/fuzz.js';

describe('parseRange', () => {
  const size = 1000;
  it.each<[string | undefined, RangeResult]>([
    [undefined, { kind: 'none' }],
    ['bytes=0-0', { kind: 'range', start: 0, end: 0 }],
    ['bytes=0-499', { kind: 'range', start: 0, end: 499 }],
    ['bytes=500-', { kind: 'range', start: 500, end: 999 }],
    ['bytes=-200', { kind: 'range', start: 800, end: 999 }],
    ['bytes=-5000', { kind: 'range', start: 0, end: 999 }],
    ['bytes=900-5000', { kind: 'range', start: 900, end: 999 }],
    ['BYTES = 1 - 2', { kind: 'range', start: 1, end: 2 }],
    ['bytes=999-999', { kind: 'range', start: 999, end: 999 }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=1000-1001', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=5-1', { kind: 'none' }],
    ['bytes=-', { kind: 'none' }],
    ['bytes=0-1,3-4', { kind: 'none' }],
    ['items=0-1', { kind: 'none' }],
    ['bytes=a-b', { kind: 'none' }],
    ['bytes=1e3-', { kind: 'none' }],
    // Numbers past 2^53 are still numbers: a start past any file, an end clamped to it.
    ['bytes=99999999999999999999-', { kind: 'unsatisfiable' }],
    ['bytes=9007199254740993-', { kind: 'unsatisfiable' }],
    ['bytes=0-99999999999999999999999', { kind: 'range', start: 0, end: 999 }],
    ['bytes=10-9007199254740993', { kind: 'range', start: 10, end: 999 }],
    [`bytes=0-${'9'.repeat(400)}`, { kind: 'range', start: 0, end: 999 }],
    ['bytes=-99999999999999999999', { kind: 'range', start: 0, end: 999 }],
    ['bytes=99999999999999999999-99999999999999999999', { kind: 'unsatisfiable' }],
    // End before start, told apart exactly even where doubles cannot (2^53 + 1 vs 2^53).
    ['bytes=9007199254740993-9007199254740992', { kind: 'none' }],
    ['bytes=99999999999999999999-9', { kind: 'none' }],
    ['bytes=000000000000000000000000005-00000000000000000000000007', { kind: 'range', start: 5, end: 7 }],
    ['bytes=-000000000000000000000000000', { kind: 'unsatisfiable' }],
    ['', { kind: 'none' }],
  ])('%j', (header, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it('treats any range of an empty file as unsatisfiable or ignored', () => {
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-10', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  it('formats Content-Range', () => {
    expect(contentRange(0, 99, 1000)).toBe('bytes 0-99/1000');
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): never throws, ranges always lie within the file`, () => {
    const samples = ['bytes=0-99', 'bytes=-10', 'bytes=5-', 'bytes=0-1,2-3'];
    for (let i = 0; i < 20_000; i++) {
      const size = rng.int(3) === 0 ? 0 : rng.int(5000);
      const header = rng.int(4) === 0 ? rng.string(40) : mutate(rng, rng.pick(samples), 'bytes=-,0123456789 \t');
      const r = parseRange(header, size);
      if (r.kind === 'range') {
        expect(r.start, header).toBeGreaterThanOrEqual(0);
        expect(r.end, header).toBeLessThan(size);
        expect(r.start, header).toBeLessThanOrEqual(r.end);
      } else {
        expect(['none', 'unsatisfiable']).toContain(r.kind);
      }
    }
  });
});
