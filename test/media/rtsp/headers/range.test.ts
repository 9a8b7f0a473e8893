import { describe, expect, it } from 'vitest';
import { formatRange, parseRange, type RangeHeader } from '../../../../src/media/rtsp/index.js';
import { makeRng, mutate, type Rng } from '../../../support/fuzz.js';
import { describeRoundTrip } from '../../../support/round-trip.js';
import { statusOf } from '../fixtures.js';

describe('parseRange', () => {
  const cases: Array<[string, RangeHeader]> = [
    ['npt=0.000-', { unit: 'npt', start: 0, end: null }], // ffmpeg, VLC
    ['npt=now-', { unit: 'npt', start: 'now', end: null }], // GStreamer, live cameras
    ['npt=0-', { unit: 'npt', start: 0, end: null }],
    ['npt=10.5-20', { unit: 'npt', start: 10.5, end: 20 }],
    ['npt=-20', { unit: 'npt', start: null, end: 20 }],
    ['npt=1:02:03.5-1:02:04', { unit: 'npt', start: 3723.5, end: 3724 }],
    ['NPT = NOW - ', { unit: 'npt', start: 'now', end: null }],
    ['npt=7.-', { unit: 'npt', start: 7, end: null }],
    ['npt=0-;time=19970123T153600Z', { unit: 'npt', start: 0, end: null, time: '19970123T153600Z' }],
    ['clock=19961108T142300Z-19961108T143520Z', { unit: 'clock', value: '19961108T142300Z-19961108T143520Z' }],
    ['clock=20260101T000000.5Z-', { unit: 'clock', value: '20260101T000000.5Z-' }],
    ['smpte=10:12:33:20-', { unit: 'smpte', value: '10:12:33:20-' }],
    ['smpte-25=10:07:00-10:07:33:05.01', { unit: 'smpte-25', value: '10:07:00-10:07:33:05.01' }],
  ];
  for (const [value, expected] of cases) {
    it(`parses ${JSON.stringify(value)}`, () => {
      expect(parseRange(value)).toEqual(expected);
    });
  }

  const errors = [
    '',
    'npt',
    'npt=',
    'npt=-',
    'npt=5',
    'npt=abc-',
    'npt=1e5-',
    'npt=-1-',
    'npt=1:60:00-',
    'npt=1:00:60-',
    'npt=1:2-',
    `npt=${'9'.repeat(20)}-`,
    'npt=0-1,npt=2-3',
    'bytes=0-100',
    'clock=',
    'clock=a b',
    'npt=0-;time',
    'npt=0-;time=1;time=2',
    'npt=0-\u0000',
  ];
  for (const value of errors) {
    it(`answers 400 to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseRange(value))).toBe(400);
    });
  }
});

describe('formatRange', () => {
  it('formats npt in seconds, without exponents or trailing zeros', () => {
    expect(formatRange({ unit: 'npt', start: 0, end: null })).toBe('npt=0-');
    expect(formatRange({ unit: 'npt', start: 'now', end: null })).toBe('npt=now-');
    expect(formatRange({ unit: 'npt', start: 10.5, end: 20 })).toBe('npt=10.5-20');
    expect(formatRange({ unit: 'npt', start: null, end: 1e-7 })).toBe('npt=-0.0000001');
    expect(formatRange({ unit: 'npt', start: 3723.5, end: null, time: '19970123T153600Z' })).toBe(
      'npt=3723.5-;time=19970123T153600Z',
    );
    expect(formatRange({ unit: 'clock', value: '19961108T142300Z-' })).toBe('clock=19961108T142300Z-');
  });

  it('refuses ranges it cannot write', () => {
    expect(() => formatRange({ unit: 'npt', start: null, end: null })).toThrow(TypeError);
    expect(() => formatRange({ unit: 'npt', start: -1, end: null })).toThrow(TypeError);
    expect(() => formatRange({ unit: 'npt', start: Number.NaN, end: null })).toThrow(TypeError);
    expect(() => formatRange({ unit: 'npt', start: 1e21, end: null })).toThrow(TypeError);
    expect(() => formatRange({ unit: 'clock', value: 'a;b' })).toThrow(TypeError);
    expect(() => formatRange({ unit: 'npt', start: 0, end: null, time: 'a b' })).toThrow(TypeError);
  });
});

/** Decimal seconds with up to 9 fraction digits: what a peer can send and what must come back unchanged. */
function genSeconds(rng: Rng): number {
  const int = String(rng.int(2) === 0 ? rng.int(100) : rng.int(1e9));
  const frac = rng.string(9, '0123456789');
  return Number(frac === '' ? int : `${int}.${frac}`);
}

function genRange(rng: Rng): RangeHeader {
  let r: RangeHeader;
  if (rng.int(4) === 0) {
    r = {
      unit: rng.pick(['clock', 'smpte', 'smpte-30-drop', 'smpte-25'] as const),
      value: `${rng.string(10, '0123456789TZ:.')}-${rng.string(10, '0123456789TZ:.')}`,
    };
  } else {
    const time = (): number | 'now' => (rng.int(5) === 0 ? 'now' : genSeconds(rng));
    const start = rng.int(5) === 0 ? null : time();
    r = { unit: 'npt', start, end: start === null || rng.int(2) === 0 ? time() : null };
  }
  if (rng.int(4) === 0) r.time = `2026${rng.string(4, '0123456789')}T${rng.string(6, '0123456789')}Z`;
  return r;
}

describeRoundTrip('Range', parseRange, formatRange, {
  canonical: [
    ['npt=0-', { unit: 'npt', start: 0, end: null }],
    ['npt=now-', { unit: 'npt', start: 'now', end: null }],
    ['npt=10.5-20', { unit: 'npt', start: 10.5, end: 20 }],
    ['npt=-20', { unit: 'npt', start: null, end: 20 }],
    ['npt=0.000000001-now', { unit: 'npt', start: 1e-9, end: 'now' }],
    ['npt=3723.5-;time=19970123T153600Z', { unit: 'npt', start: 3723.5, end: null, time: '19970123T153600Z' }],
    ['clock=19961108T142300Z-19961108T143520Z', { unit: 'clock', value: '19961108T142300Z-19961108T143520Z' }],
    ['smpte-25=10:07:00-10:07:33:05.01', { unit: 'smpte-25', value: '10:07:00-10:07:33:05.01' }],
  ],
  aliases: [
    ['npt=0.000-', 'npt=0-'], // ffmpeg, VLC
    ['NPT = NOW - ', 'npt=now-'],
    ['npt=7.-', 'npt=7-'],
    ['npt=1:02:03.5-1:02:04', 'npt=3723.5-3724'],
    ['npt=0-;time=19970123T153600Z', 'npt=0-;time=19970123T153600Z'],
  ],
});

describe('Range fuzz', () => {
  const rng1 = makeRng();
  it(`parse(format(x)) returns x (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 2000; i++) {
      const r = genRange(rng1);
      expect(parseRange(formatRange(r))).toEqual(r);
    }
  });

  const rng2 = makeRng();
  it(`never throws anything but RtspParseError (seed ${rng2.seed})`, () => {
    const samples = ['npt=0.000-', 'npt=1:02:03.5-20;time=19970123T153600Z', 'clock=19961108T142300Z-19961108T143520Z'];
    for (let i = 0; i < 3000; i++) {
      const input = i % 4 === 0 ? rng2.string(60) : mutate(rng2, rng2.pick(samples), '-=;:., 0123456789now\u0000');
      const status = statusOf(() => parseRange(input));
      expect(status === null || status === 400).toBe(true);
    }
  });
});
