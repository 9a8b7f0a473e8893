import { describe, expect, it } from 'vitest';
import { formatSession, parseSession, type SessionHeader } from '../../../../src/media/rtsp/index.js';
import { makeRng, mutate } from '../../../support/fuzz.js';
import { describeRoundTrip } from '../../../support/round-trip.js';
import { statusOf } from '../fixtures.js';

describe('parseSession', () => {
  const cases: Array<[string, SessionHeader]> = [
    ['xKSdjQVQC-+PL71g', { id: 'xKSdjQVQC-+PL71g' }], // gst-rtsp-server, as ffmpeg echoes it
    ['.UD4vG6A_sJ-w8+J', { id: '.UD4vG6A_sJ-w8+J' }],
    ['HHkP8X7HaOtH9-d_;timeout=4', { id: 'HHkP8X7HaOtH9-d_', timeout: 4 }],
    ['1273467897;timeout=60', { id: '1273467897', timeout: 60 }], // Hikvision
    ['  12345678 ; timeout = 65 ', { id: '12345678', timeout: 65 }],
    ['ABC$DEF;TIMEOUT=30;x-extension=1', { id: 'ABC$DEF', timeout: 30 }],
    ['abc;', { id: 'abc' }],
    ['a{b}c', { id: 'a{b}c' }],
  ];
  for (const [value, expected] of cases) {
    it(`parses ${JSON.stringify(value)}`, () => {
      expect(parseSession(value)).toEqual(expected);
    });
  }

  for (const value of [
    '',
    ';timeout=60',
    'a b',
    'abc;timeout',
    'abc;timeout=x',
    'abc;timeout=-1',
    'abc;timeout=1;timeout=2',
    'abc;timeout=99999999999',
    'ab\u0001c',
    '"abc',
  ]) {
    it(`answers 400 to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseSession(value))).toBe(400);
    });
  }
});

describe('formatSession', () => {
  it('formats an id with and without a timeout', () => {
    expect(formatSession({ id: 'HHkP8X7HaOtH9-d_' })).toBe('HHkP8X7HaOtH9-d_');
    expect(formatSession({ id: '1273467897', timeout: 60 })).toBe('1273467897;timeout=60');
  });

  it('refuses ids and timeouts that do not survive a round trip', () => {
    expect(() => formatSession({ id: '' })).toThrow(TypeError);
    expect(() => formatSession({ id: 'a;b' })).toThrow(TypeError);
    expect(() => formatSession({ id: 'a b' })).toThrow(TypeError);
    expect(() => formatSession({ id: 'a', timeout: -1 })).toThrow(TypeError);
    expect(() => formatSession({ id: 'a', timeout: 1.5 })).toThrow(TypeError);
  });
});

describeRoundTrip('Session', parseSession, formatSession, {
  canonical: [
    ['xKSdjQVQC-+PL71g', { id: 'xKSdjQVQC-+PL71g' }],
    ['HHkP8X7HaOtH9-d_;timeout=4', { id: 'HHkP8X7HaOtH9-d_', timeout: 4 }],
    ['1273467897;timeout=60', { id: '1273467897', timeout: 60 }],
    ['a{b}c;timeout=0', { id: 'a{b}c', timeout: 0 }],
  ],
  aliases: [
    ['  12345678 ; timeout = 65 ', '12345678;timeout=65'],
    ['ABC$DEF;TIMEOUT=30;x-extension=1', 'ABC$DEF;timeout=30'],
    ['abc;', 'abc'],
  ],
});

describe('Session fuzz', () => {
  const ID = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$-_.+';
  const rng1 = makeRng();
  it(`parse(format(x)) returns x (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 1000; i++) {
      const s: SessionHeader = { id: `${rng1.pick([...ID])}${rng1.string(40, ID)}` };
      if (rng1.int(2) === 0) s.timeout = rng1.int(2) === 0 ? rng1.int(3600) : rng1.int(0xffffffff);
      expect(parseSession(formatSession(s))).toEqual(s);
    }
  });

  const rng2 = makeRng();
  it(`never throws anything but RtspParseError (seed ${rng2.seed})`, () => {
    for (let i = 0; i < 3000; i++) {
      const input =
        i % 4 === 0 ? rng2.string(60) : mutate(rng2, 'HHkP8X7HaOtH9-d_;timeout=60', ';= "\t,0123456789t\u0000');
      const status = statusOf(() => parseSession(input));
      expect(status === null || status === 400).toBe(true);
    }
  });
});
