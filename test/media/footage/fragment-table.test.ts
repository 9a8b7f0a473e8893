import { describe, expect, it } from 'vitest';
import { FragmentTableError } from '../../../src/media/footage/errors.js';
import {
  decodeFragmentTable,
  encodeFragmentTable,
  type FragmentEntry,
} from '../../../src/media/footage/fragment-table.js';

describe('fragment table', () => {
  it('round-trips, placing each fragment after the init segment and the ones before it', () => {
    const entries: FragmentEntry[] = [
      { bytes: 1000, duration: 90_000, keyframe: true },
      { bytes: 0x7fffffff, duration: 0xffffffff, keyframe: false },
      { bytes: 1, duration: 0, keyframe: true },
    ];
    const placed = decodeFragmentTable(encodeFragmentTable(entries), 700);
    expect(placed).toEqual([
      { ...entries[0], offset: 700, start: 0 },
      { ...entries[1], offset: 1700, start: 90_000 },
      { ...entries[2], offset: 1700 + 0x7fffffff, start: 90_000 + 0xffffffff },
    ]);
  });

  it('round-trips random tables', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 200; n++) {
      const entries = Array.from({ length: Math.floor(random() * 40) }, () => ({
        bytes: 1 + Math.floor(random() * 0x7ffffffe),
        duration: Math.floor(random() * 0xffffffff),
        keyframe: random() < 0.5,
      }));
      expect(
        decodeFragmentTable(encodeFragmentTable(entries), 0).map(({ bytes, duration, keyframe }) => ({
          bytes,
          duration,
          keyframe,
        })),
      ).toEqual(entries);
    }
  });

  it('refuses what it cannot hold, and a torn table', () => {
    for (const bad of [
      { bytes: 0, duration: 1 },
      { bytes: 2 ** 31, duration: 1 },
      { bytes: 1.5, duration: 1 },
      { bytes: 1, duration: -1 },
      { bytes: 1, duration: 2 ** 32 },
    ]) {
      expect(() => encodeFragmentTable([{ ...bad, keyframe: true }])).toThrow(FragmentTableError);
    }
    expect(() => decodeFragmentTable(Buffer.alloc(7), 0)).toThrow(FragmentTableError);
    expect(() => decodeFragmentTable(Buffer.alloc(8), 0)).toThrow(/0 bytes/);
  });
});
