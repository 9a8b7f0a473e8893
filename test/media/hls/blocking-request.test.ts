import { describe, expect, it } from 'vitest';
import { parseBlockingRequest } from '../../../src/media/hls/blocking-request.js';
import { HlsRequestError } from '../../../src/media/hls/errors.js';

describe('parseBlockingRequest', () => {
  it.each<[Record<string, unknown>, unknown]>([
    [{}, null],
    [{ other: 'x' }, null],
    [{ _HLS_msn: '0' }, { msn: 0, part: null }],
    [
      { _HLS_msn: '12', _HLS_part: '3' },
      { msn: 12, part: 3 },
    ],
    [{ _HLS_msn: '9007199254740991' }, { msn: 2 ** 53 - 1, part: null }],
  ])('%j → %j', (query, expected) => {
    expect(parseBlockingRequest(query)).toEqual(expected);
  });

  it.each<Record<string, unknown>>([
    { _HLS_part: '1' },
    { _HLS_msn: '-1' },
    { _HLS_msn: '1.5' },
    { _HLS_msn: '' },
    { _HLS_msn: '01' },
    { _HLS_msn: ' 1' },
    { _HLS_msn: '1e3' },
    { _HLS_msn: '0x10' },
    { _HLS_msn: 'abc' },
    { _HLS_msn: '9007199254740992' },
    { _HLS_msn: '99999999999999999999' },
    { _HLS_msn: ['1', '2'] },
    { _HLS_msn: '1', _HLS_part: ['0', '1'] },
    { _HLS_msn: '1', _HLS_part: '-2' },
    { _HLS_msn: 5 },
  ])('refuses %j with an HlsRequestError (400)', (query) => {
    expect(() => parseBlockingRequest(query)).toThrow(HlsRequestError);
  });
});
