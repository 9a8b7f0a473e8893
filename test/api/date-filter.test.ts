import { describe, expect, it } from 'vitest';
import { DATE_FILTER_PATTERN, parseDateBound } from '../../src/api/date-filter.js';
import { DateFilterError } from '../../src/api/errors.js';
import { makeRng, mutate } from '../support/fuzz.js';

describe('start_date / end_date', () => {
  it('reads a bare date as the whole local day, both ends inclusive', () => {
    expect(parseDateBound('2026-11-20', 'start')).toBe(new Date(2026, 10, 20).getTime());
    expect(parseDateBound('2026-11-20', 'end')).toBe(new Date(2026, 10, 21).getTime() - 1);
    expect(parseDateBound('2028-02-29', 'end')).toBe(new Date(2028, 2, 1).getTime() - 1);
    expect(parseDateBound('2026-12-31', 'end')).toBe(new Date(2027, 0, 1).getTime() - 1);
  });

  it.each([
    ['2026-11-20T08:00:00Z', Date.UTC(2026, 10, 20, 8)],
    ['2026-11-20T08:00Z', Date.UTC(2026, 10, 20, 8)],
    ['2026-11-20T08:00:00.123Z', Date.UTC(2026, 10, 20, 8, 0, 0, 123)],
    ['2026-11-20T08:00:00.123456789Z', Date.UTC(2026, 10, 20, 8, 0, 0, 123)],
    ['2026-11-20T09:30:00+01:30', Date.UTC(2026, 10, 20, 8)],
    ['2026-11-20T03:00:00-05:00', Date.UTC(2026, 10, 20, 8)],
    ['2026-11-20t08:00:00z', Date.UTC(2026, 10, 20, 8)],
  ])('reads the date-time %s exactly', (text, ms) => {
    expect(parseDateBound(text, 'start')).toBe(ms);
    expect(parseDateBound(text, 'end')).toBe(ms);
  });

  it.each([
    '2026-13-01',
    '2026-02-29',
    '2026-04-31',
    '2026-00-10',
    '1969-12-31',
    '2026-11-20T24:00:00Z',
    '2026-11-20T10:60:00Z',
    '2026-11-20T10:00:61Z',
    '2026-11-20T10:00:00', // an offset is required
    '2026-11-20T10:00:00+25:00',
    '2026-11-20 10:00:00Z',
    '20261120',
    'yesterday',
    '',
  ])('rejects %j', (text) => {
    expect(() => parseDateBound(text, 'start')).toThrow(DateFilterError);
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): anything the schema pattern lets through parses or fails with DateFilterError`, () => {
    const pattern = new RegExp(DATE_FILTER_PATTERN);
    const samples = ['2026-11-20', '2026-11-20T08:00:00.5+01:00', '2024-02-29T23:59:59Z'];
    for (let i = 0; i < 20_000; i++) {
      const text = mutate(rng, rng.pick(samples), '0123456789-:T.Z+z');
      try {
        const ms = parseDateBound(text, rng.int(2) ? 'start' : 'end');
        expect(pattern.test(text), text).toBe(true);
        expect(Number.isFinite(ms)).toBe(true);
      } catch (err) {
        expect(err, text).toBeInstanceOf(DateFilterError);
      }
    }
  });
});
