import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/api/cursor.js';
import { makeRng } from '../support/fuzz.js';

describe('page cursors', () => {
  it('round-trips keys', () => {
    for (const key of [
      { at: 0, id: 'a' },
      { at: 1_795_307_719_915, id: 'rec_AbC-d_9' },
      { at: 8_640_000_000_000_000, id: 'x'.repeat(128) },
    ]) {
      expect(decodeCursor(encodeCursor(key))).toEqual(key);
    }
  });

  it.each([
    '',
    'not base64!',
    Buffer.from('abc').toString('base64url'), // no separator
    Buffer.from(':id').toString('base64url'), // no time
    Buffer.from('-5:id').toString('base64url'),
    Buffer.from('1.5:id').toString('base64url'),
    Buffer.from('12:').toString('base64url'),
    Buffer.from("12:id' OR 1=1").toString('base64url'),
    Buffer.from('99999999999999999:id').toString('base64url'),
    Buffer.from('9000000000000000:id').toString('base64url'), // past the largest Date
    Buffer.from('012:id').toString('base64url'), // not canonical
    'A'.repeat(300),
  ])('rejects %j', (cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): decodes only what it could have encoded`, () => {
    for (let i = 0; i < 20_000; i++) {
      const input = rng.int(2)
        ? rng.string(60, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')
        : Buffer.from(rng.string(40)).toString('base64url');
      const key = decodeCursor(input);
      if (key) expect(encodeCursor(key)).toBe(input);
    }
  });
});
