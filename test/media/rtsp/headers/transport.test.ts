import { describe, expect, it } from 'vitest';
import { formatTransport, parseTransport, type TransportSpec } from '../../../../src/media/rtsp/index.js';
import { makeRng, mutate, type Rng } from '../../../support/fuzz.js';
import { describeRoundTrip } from '../../../support/round-trip.js';
import { statusOf } from '../fixtures.js';

describe('parseTransport', () => {
  const cases: Array<[string, string, TransportSpec[]]> = [
    [
      'ffmpeg TCP',
      'RTP/AVP/TCP;unicast;interleaved=0-1',
      [{ protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] }],
    ],
    [
      'ffmpeg UDP',
      'RTP/AVP/UDP;unicast;client_port=19282-19283',
      [{ protocol: 'RTP/AVP/UDP', lowerTransport: 'UDP', delivery: 'unicast', clientPort: [19282, 19283] }],
    ],
    [
      'GStreamer UDP',
      'RTP/AVP;unicast;client_port=52720-52721',
      [{ protocol: 'RTP/AVP', lowerTransport: 'UDP', delivery: 'unicast', clientPort: [52720, 52721] }],
    ],
    [
      'gst-rtsp-server answer',
      'RTP/AVP;unicast;client_port=52720-52721;server_port=54198-54199;ssrc=4E3C7E48;mode="PLAY"',
      [
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'unicast',
          clientPort: [52720, 52721],
          serverPort: [54198, 54199],
          ssrc: '4E3C7E48',
          mode: 'PLAY',
        },
      ],
    ],
    [
      'multicast',
      'RTP/AVP;multicast;destination=232.0.1.2;source=192.168.1.64;port=5000-5001;ttl=16',
      [
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'multicast',
          destination: '232.0.1.2',
          source: '192.168.1.64',
          port: [5000, 5001],
          ttl: 16,
        },
      ],
    ],
    [
      'alternatives',
      'RTP/AVP/TCP;unicast;interleaved=0-1, RTP/AVP;unicast;client_port=5000-5001',
      [
        { protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] },
        { protocol: 'RTP/AVP', lowerTransport: 'UDP', delivery: 'unicast', clientPort: [5000, 5001] },
      ],
    ],
    [
      'single port and channel',
      'RTP/AVP/TCP;interleaved=4;client_port=5000',
      [
        {
          protocol: 'RTP/AVP/TCP',
          lowerTransport: 'TCP',
          delivery: null,
          interleaved: [4, 5],
          clientPort: [5000, 5001],
        },
      ],
    ],
    [
      'case and white space',
      'rtp/avp/tcp; UNICAST ; Interleaved = 2-3 ;mode=record;',
      [{ protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [2, 3], mode: 'RECORD' }],
    ],
    [
      'short lower-case ssrc',
      'RTP/AVP;unicast;ssrc=1a2b',
      [{ protocol: 'RTP/AVP', lowerTransport: 'UDP', delivery: 'unicast', ssrc: '00001A2B' }],
    ],
    [
      'unknown parameters kept',
      'RTP/AVP;unicast;client_port=5000-5001;append;layers=2;x-foo="a;b,c";X-Bar=',
      [
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'unicast',
          clientPort: [5000, 5001],
          extra: [
            ['append', null],
            ['layers', '2'],
            ['x-foo', '"a;b,c"'],
            ['X-Bar', ''],
          ],
        },
      ],
    ],
    [
      'unsupported alternative skipped',
      'x-real-rdt/tcp;unicast, RTP/AVP/TCP;unicast;interleaved=0-1',
      [{ protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] }],
    ],
    [
      'a bare destination',
      'RTP/AVP;unicast;destination;client_port=5000-5001',
      [{ protocol: 'RTP/AVP', lowerTransport: 'UDP', delivery: 'unicast', destination: '', clientPort: [5000, 5001] }],
    ],
    [
      'SRTP',
      'RTP/SAVP;unicast;client_port=6000-6001',
      [{ protocol: 'RTP/SAVP', lowerTransport: 'UDP', delivery: 'unicast', clientPort: [6000, 6001] }],
    ],
    [
      'quoted destination, mode list',
      'RTP/AVP;multicast;destination="ff15::1";mode="PLAY, RECORD"',
      [
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'multicast',
          destination: 'ff15::1',
          mode: 'PLAY, RECORD',
        },
      ],
    ],
  ];
  for (const [name, value, expected] of cases) {
    it(`parses ${name}`, () => {
      expect(parseTransport(value)).toEqual(expected);
    });
  }

  const errors: Array<[string, number]> = [
    ['', 400],
    [' , ', 400],
    ['RTP', 400],
    [';unicast', 400],
    ['RTP/AVP;interleaved=256-257', 400],
    ['RTP/AVP;interleaved=255', 400],
    ['RTP/AVP;interleaved', 400],
    ['RTP/AVP;interleaved=-1', 400],
    ['RTP/AVP;client_port=70000-70001', 400],
    ['RTP/AVP;client_port=abc', 400],
    ['RTP/AVP;client_port=1-2-3', 400],
    ['RTP/AVP;unicast;multicast', 400],
    ['RTP/AVP;unicast=1', 400],
    ['RTP/AVP;client_port=1-2;client_port=3-4', 400],
    ['RTP/AVP;ssrc=XYZ', 400],
    ['RTP/AVP;ssrc=123456789', 400],
    ['RTP/AVP;ttl=300', 400],
    ['RTP/AVP;destination="unterminated', 400],
    ['RTP/AVP;destination=', 400],
    ['RTP/AVP;mode=', 400],
    ['RTP/AVP;=5', 400],
    ['RTP/AVP;unicast\u0000', 400],
    ['x-real-rdt/tcp;unicast', 461],
    ['RTP/AVP/SCTP;unicast', 461],
  ];
  for (const [value, status] of errors) {
    it(`answers ${status} to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseTransport(value))).toBe(status);
    });
  }
});

describe('formatTransport', () => {
  it('formats what cameras and players expect', () => {
    expect(
      formatTransport([{ protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] }]),
    ).toBe('RTP/AVP/TCP;unicast;interleaved=0-1');
    expect(
      formatTransport([
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'unicast',
          clientPort: [52720, 52721],
          serverPort: [54198, 54199],
          ssrc: '4E3C7E48',
          mode: 'PLAY',
        },
      ]),
    ).toBe('RTP/AVP;unicast;client_port=52720-52721;server_port=54198-54199;ssrc=4E3C7E48;mode=PLAY');
    expect(
      formatTransport([
        {
          protocol: 'RTP/AVP/TCP',
          lowerTransport: 'TCP',
          delivery: 'unicast',
          interleaved: [0, 1],
          mode: 'PLAY,RECORD',
        },
      ]),
    ).toBe('RTP/AVP/TCP;unicast;interleaved=0-1;mode="PLAY,RECORD"');
    expect(
      formatTransport([
        { protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] },
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'unicast',
          clientPort: [5000, 5001],
          extra: [['append', null]],
        },
      ]),
    ).toBe('RTP/AVP/TCP;unicast;interleaved=0-1,RTP/AVP;unicast;client_port=5000-5001;append');
  });

  it('refuses specs that cannot be written faithfully', () => {
    const base: TransportSpec = { protocol: 'RTP/AVP', lowerTransport: 'UDP', delivery: 'unicast' };
    expect(() => formatTransport([])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, lowerTransport: 'TCP' }])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, interleaved: [0, 256] }])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, clientPort: [1.5, 2] }])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, ssrc: 'abcd' }])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, destination: 'a;b' }])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, extra: [['x', 'a;b']] }])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, extra: [['client_port', '1-2']] }])).toThrow(TypeError);
    expect(() => formatTransport([{ ...base, ttl: 256 }])).toThrow(TypeError);
  });
});

function genPair(rng: Rng, max: number): [number, number] {
  return [rng.int(max + 1), rng.int(max + 1)];
}

function genSpec(rng: Rng): TransportSpec {
  const profile = rng.pick(['RTP/AVP', 'RTP/SAVP', 'RTP/AVPF', 'RTP/SAVPF'] as const);
  const lower = rng.pick(['', '/TCP', '/UDP'] as const);
  const spec: TransportSpec = {
    protocol: `${profile}${lower}`,
    lowerTransport: lower === '/TCP' ? 'TCP' : 'UDP',
    delivery: rng.pick(['unicast', 'multicast', null] as const),
  };
  if (rng.int(2) === 0) spec.interleaved = genPair(rng, 255);
  if (rng.int(2) === 0) spec.clientPort = genPair(rng, 65535);
  if (rng.int(2) === 0) spec.serverPort = genPair(rng, 65535);
  if (rng.int(3) === 0) spec.port = genPair(rng, 65535);
  if (rng.int(2) === 0) spec.ssrc = rng.string(8, '0123456789ABCDEF').padStart(8, '0');
  if (rng.int(2) === 0) spec.mode = rng.pick(['PLAY', 'RECORD', 'PLAY,RECORD']);
  if (rng.int(3) === 0) spec.destination = rng.pick(['232.0.1.2', '192.168.1.20', 'ff15::1', 'cam.local', '']);
  if (rng.int(3) === 0) spec.source = rng.pick(['10.0.0.1', 'fe80::1%eth0']);
  if (rng.int(3) === 0) spec.ttl = rng.int(256);
  if (rng.int(3) === 0) {
    spec.extra = [];
    for (let n = 1 + rng.int(3); n > 0; n--) {
      const value = rng.pick([null, rng.string(6, 'abc123-_.'), `"${rng.string(6, 'ab;,= ')}"`]);
      spec.extra.push([`x-${rng.string(5, 'abcdefgh')}`, value]);
    }
  }
  return spec;
}

describeRoundTrip('Transport', parseTransport, formatTransport, {
  canonical: [
    [
      'RTP/AVP/TCP;unicast;interleaved=0-1',
      [{ protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] }],
    ],
    [
      'RTP/AVP;unicast;client_port=52720-52721',
      [{ protocol: 'RTP/AVP', lowerTransport: 'UDP', delivery: 'unicast', clientPort: [52720, 52721] }],
    ],
    [
      'RTP/AVP;unicast;client_port=52720-52721;server_port=54198-54199;ssrc=4E3C7E48;mode=PLAY',
      [
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'unicast',
          clientPort: [52720, 52721],
          serverPort: [54198, 54199],
          ssrc: '4E3C7E48',
          mode: 'PLAY',
        },
      ],
    ],
    [
      'RTP/AVP/TCP;unicast;interleaved=0-1,RTP/AVP;unicast;client_port=5000-5001;append',
      [
        { protocol: 'RTP/AVP/TCP', lowerTransport: 'TCP', delivery: 'unicast', interleaved: [0, 1] },
        {
          protocol: 'RTP/AVP',
          lowerTransport: 'UDP',
          delivery: 'unicast',
          clientPort: [5000, 5001],
          extra: [['append', null]],
        },
      ],
    ],
    [
      'RTP/AVP/TCP;unicast;interleaved=0-1;mode="PLAY,RECORD"',
      [
        {
          protocol: 'RTP/AVP/TCP',
          lowerTransport: 'TCP',
          delivery: 'unicast',
          interleaved: [0, 1],
          mode: 'PLAY,RECORD',
        },
      ],
    ],
  ],
  aliases: [
    // gst-rtsp-server quotes a single mode.
    [
      'RTP/AVP;unicast;client_port=52720-52721;server_port=54198-54199;ssrc=4E3C7E48;mode="PLAY"',
      'RTP/AVP;unicast;client_port=52720-52721;server_port=54198-54199;ssrc=4E3C7E48;mode=PLAY',
    ],
    ['rtp/avp/tcp; UNICAST ; Interleaved = 2-3 ;mode=record;', 'RTP/AVP/TCP;unicast;interleaved=2-3;mode=RECORD'],
    ['RTP/AVP;unicast;ssrc=1a2b', 'RTP/AVP;unicast;ssrc=00001A2B'],
    ['x-real-rdt/tcp;unicast, RTP/AVP/TCP;unicast;interleaved=0-1', 'RTP/AVP/TCP;unicast;interleaved=0-1'],
  ],
});

describe('Transport fuzz', () => {
  const rng1 = makeRng();
  it(`parse(format(x)) returns x for generated specs (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 500; i++) {
      const specs = Array.from({ length: 1 + rng1.int(3) }, () => genSpec(rng1));
      expect(parseTransport(formatTransport(specs))).toEqual(specs);
    }
  });

  const rng2 = makeRng();
  it(`never throws anything but RtspParseError on mutated or random input (seed ${rng2.seed})`, () => {
    const samples = [
      'RTP/AVP;unicast;client_port=52720-52721;server_port=54198-54199;ssrc=4E3C7E48;mode="PLAY"',
      'RTP/AVP/TCP;unicast;interleaved=0-1, RTP/AVP;multicast;destination=232.0.1.2;ttl=16;x="a"',
    ];
    for (let i = 0; i < 3000; i++) {
      const input = i % 4 === 0 ? rng2.string(80) : mutate(rng2, rng2.pick(samples), ';,="-/\\ 0123456789aTCP\u0000');
      const status = statusOf(() => parseTransport(input));
      expect(status === null || status === 400 || status === 461).toBe(true);
    }
  });
});
