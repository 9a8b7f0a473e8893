import { describe, expect, it } from 'vitest';
import { formatRtpInfo, parseRtpInfo, type RtpInfoEntry } from '../../../../src/media/rtsp/index.js';
import { makeRng, mutate, type Rng } from '../../../support/fuzz.js';
import { describeRoundTrip } from '../../../support/round-trip.js';
import { statusOf } from '../fixtures.js';

describe('parseRtpInfo', () => {
  const cases: Array<[string, string, RtpInfoEntry[]]> = [
    [
      'gst-rtsp-server',
      'url=rtsp://127.0.0.1:8657/cam0/main/stream=0;seq=29691;rtptime=957027478',
      [{ url: 'rtsp://127.0.0.1:8657/cam0/main/stream=0', seq: 29691, rtptime: 957027478 }],
    ],
    [
      'two streams',
      'url=rtsp://cam/trackID=1;seq=9810;rtptime=3450012, url=rtsp://cam/trackID=2;seq=1234;rtptime=2230',
      [
        { url: 'rtsp://cam/trackID=1', seq: 9810, rtptime: 3450012 },
        { url: 'rtsp://cam/trackID=2', seq: 1234, rtptime: 2230 },
      ],
    ],
    [
      'a comma inside the URL',
      'url=rtsp://cam/live,stream=1;seq=1;rtptime=2',
      [{ url: 'rtsp://cam/live,stream=1', seq: 1, rtptime: 2 }],
    ],
    [
      'a semicolon inside the URL',
      'url=rtsp://cam/live;jsessionid=abc;seq=5',
      [{ url: 'rtsp://cam/live;jsessionid=abc', seq: 5 }],
    ],
    [
      'a quoted URL',
      'url="rtsp://cam/a;seq=1,url=b";seq=1,url=rtsp://cam/c',
      [{ url: 'rtsp://cam/a;seq=1,url=b', seq: 1 }, { url: 'rtsp://cam/c' }],
    ],
    [
      'upper case, spaces, trailing separators',
      'URL=rtsp://cam/a ; SEQ = 7 ; RTPTIME=0;,',
      [{ url: 'rtsp://cam/a', seq: 7, rtptime: 0 }],
    ],
    [
      'unknown parameters after the known ones',
      'url=rtsp://cam/a;seq=1;x-ext=1;rtptime=4294967295',
      [{ url: 'rtsp://cam/a', seq: 1, rtptime: 4294967295 }],
    ],
    ['only a URL', 'url=trackID=0', [{ url: 'trackID=0' }]],
    ['a bare seq without = belongs to the URL', 'url=rtsp://cam/a;seq', [{ url: 'rtsp://cam/a;seq' }]],
  ];
  for (const [name, value, expected] of cases) {
    it(`parses ${name}`, () => {
      expect(parseRtpInfo(value)).toEqual(expected);
    });
  }

  for (const value of [
    '',
    ',',
    'seq=1',
    'seq=1,url=a',
    'url=;seq=1',
    'url=a;seq=65536',
    'url=a;rtptime=4294967296',
    'url=a;seq=1;seq=2',
    'url=a;seq=',
    'url=a;seq=x',
    'url="a',
    'url="a"b',
    'url=a\u0000',
  ]) {
    it(`answers 400 to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseRtpInfo(value))).toBe(400);
    });
  }
});

describe('formatRtpInfo', () => {
  it('writes bare URLs, quoting only ambiguous ones', () => {
    expect(
      formatRtpInfo([
        { url: 'rtsp://127.0.0.1:8657/cam0/main/stream=0', seq: 29691, rtptime: 957027478 },
        { url: 'rtsp://cam/a;b', rtptime: 1 },
        { url: 'rtsp://cam/c,d' },
      ]),
    ).toBe(
      'url=rtsp://127.0.0.1:8657/cam0/main/stream=0;seq=29691;rtptime=957027478,url="rtsp://cam/a;b";rtptime=1,url="rtsp://cam/c,d"',
    );
  });

  it('refuses what it cannot write', () => {
    expect(() => formatRtpInfo([])).toThrow(TypeError);
    expect(() => formatRtpInfo([{ url: '' }])).toThrow(TypeError);
    expect(() => formatRtpInfo([{ url: 'a b' }])).toThrow(TypeError);
    expect(() => formatRtpInfo([{ url: 'a', seq: 65536 }])).toThrow(TypeError);
    expect(() => formatRtpInfo([{ url: 'a', rtptime: -1 }])).toThrow(TypeError);
  });
});

function genEntry(rng: Rng): RtpInfoEntry {
  const e: RtpInfoEntry = { url: `rtsp://cam.local/${rng.string(20, 'abcXYZ0123=/._-;,"\\?&%')}` };
  if (rng.int(3) > 0) e.seq = rng.int(0x10000);
  if (rng.int(3) > 0) e.rtptime = rng.int(2) === 0 ? rng.int(1000) : rng.int(0x100000000);
  return e;
}

describeRoundTrip('RTP-Info', parseRtpInfo, formatRtpInfo, {
  canonical: [
    [
      'url=rtsp://127.0.0.1:8657/cam0/main/stream=0;seq=29691;rtptime=957027478',
      [{ url: 'rtsp://127.0.0.1:8657/cam0/main/stream=0', seq: 29691, rtptime: 957027478 }],
    ],
    [
      'url=rtsp://cam/trackID=1;seq=9810;rtptime=3450012,url=rtsp://cam/trackID=2;seq=1234;rtptime=2230',
      [
        { url: 'rtsp://cam/trackID=1', seq: 9810, rtptime: 3450012 },
        { url: 'rtsp://cam/trackID=2', seq: 1234, rtptime: 2230 },
      ],
    ],
    [
      'url="rtsp://cam/a;b";rtptime=1,url="rtsp://cam/c,d"',
      [{ url: 'rtsp://cam/a;b', rtptime: 1 }, { url: 'rtsp://cam/c,d' }],
    ],
    ['url=trackID=0', [{ url: 'trackID=0' }]],
  ],
  aliases: [
    [
      'url=rtsp://cam/trackID=1;seq=9810;rtptime=3450012, url=rtsp://cam/trackID=2;seq=1234;rtptime=2230',
      'url=rtsp://cam/trackID=1;seq=9810;rtptime=3450012,url=rtsp://cam/trackID=2;seq=1234;rtptime=2230',
    ],
    ['url=rtsp://cam/live,stream=1;seq=1;rtptime=2', 'url="rtsp://cam/live,stream=1";seq=1;rtptime=2'],
    ['URL=rtsp://cam/a ; SEQ = 7 ; RTPTIME=0;,', 'url=rtsp://cam/a;seq=7;rtptime=0'],
    ['url=rtsp://cam/a;seq=1;x-ext=1;rtptime=4294967295', 'url=rtsp://cam/a;seq=1;rtptime=4294967295'],
  ],
});

describe('RTP-Info fuzz', () => {
  const rng1 = makeRng();
  it(`parse(format(x)) returns x (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 1000; i++) {
      const entries = Array.from({ length: 1 + rng1.int(4) }, () => genEntry(rng1));
      expect(parseRtpInfo(formatRtpInfo(entries))).toEqual(entries);
    }
  });

  const rng2 = makeRng();
  it(`never throws anything but RtspParseError (seed ${rng2.seed})`, () => {
    const sample = 'url=rtsp://cam/trackID=1;seq=9810;rtptime=3450012,url="rtsp://cam/a;b";seq=1';
    for (let i = 0; i < 3000; i++) {
      const input = i % 4 === 0 ? rng2.string(80) : mutate(rng2, sample, 'url=;,"\\ 0123456789seqrtptime\u0000');
      const status = statusOf(() => parseRtpInfo(input));
      expect(status === null || status === 400).toBe(true);
    }
  });
});
