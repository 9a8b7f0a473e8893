import { describe, expect, it } from 'vitest';
import { chooseChallenge, formatChallenge, parseChallenges, type Challenge } from '../../../../src/media/rtsp/index.js';
import { makeRng } from '../../../support/fuzz.js';
import { describeRoundTrip } from '../../../support/round-trip.js';
import { genChallenge, mutatedAuthHeaders, RFC7616 } from '../auth-fixtures.js';
import { statusOf } from '../fixtures.js';

describe('RFC 7616 §3.9.1 (Mufasa, Circle of Life)', () => {
  const { realm, nonce, opaque, headers } = RFC7616;

  it('parses both challenges and prefers SHA-256', () => {
    const challenges = parseChallenges(headers);
    expect(challenges).toEqual([
      { scheme: 'Digest', realm, nonce, algorithm: 'SHA-256', qop: ['auth', 'auth-int'], opaque },
      { scheme: 'Digest', realm, nonce, algorithm: 'MD5', qop: ['auth', 'auth-int'], opaque },
    ]);
    expect(chooseChallenge(challenges)).toBe(challenges[0]);
  });
});

describe('RFC 2617 §3.5 (Mufasa, Circle Of Life)', () => {
  const challenge =
    'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"';

  it('reads the challenge as MD5 with qop auth and auth-int', () => {
    expect(parseChallenges([challenge])).toEqual([
      {
        scheme: 'Digest',
        realm: 'testrealm@host.com',
        nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
        algorithm: 'MD5',
        qop: ['auth', 'auth-int'],
        opaque: '5ccc069c403ebaf9f0171e9517f40e41',
      },
    ]);
  });
});

describe('parseChallenges', () => {
  const cases: Array<[string, string[], Challenge[]]> = [
    [
      'a Hikvision-style pair',
      [
        'Digest realm="IP Camera(C6934)", nonce="8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61", stale="FALSE"',
        'Basic realm="IP Camera(C6934)"',
      ],
      [
        {
          scheme: 'Digest',
          realm: 'IP Camera(C6934)',
          nonce: '8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61',
          algorithm: 'MD5',
          qop: [],
          stale: false,
        },
        { scheme: 'Basic', realm: 'IP Camera(C6934)' },
      ],
    ],
    [
      'several challenges in one header, unknown schemes skipped',
      [
        'Negotiate YWJjZA==, Digest realm="a", nonce="n", algorithm=md5-sess, qop=auth, Bearer realm="x", Basic realm="a", charset="UTF-8"',
      ],
      [
        { scheme: 'Digest', realm: 'a', nonce: 'n', algorithm: 'MD5-sess', qop: ['auth'] },
        { scheme: 'Basic', realm: 'a', charset: 'UTF-8' },
      ],
    ],
    [
      'an unsupported algorithm skipped',
      ['Digest realm="a", nonce="n", algorithm=SHA-512-256', 'Digest realm="a", nonce="n", algorithm=sha-256'],
      [{ scheme: 'Digest', realm: 'a', nonce: 'n', algorithm: 'SHA-256', qop: [] }],
    ],
    [
      'unquoted values, missing commas, escapes, every field',
      [
        'digest REALM="say \\"hi\\" \\\\o/"  nonce=abc/def== ,opaque=x, stale=true, domain="/ rtsp://cam/", userhash=TRUE, charset=UTF-8',
      ],
      [
        {
          scheme: 'Digest',
          realm: 'say "hi" \\o/',
          nonce: 'abc/def==',
          algorithm: 'MD5',
          qop: [],
          opaque: 'x',
          stale: true,
          domain: '/ rtsp://cam/',
          userhash: true,
          charset: 'UTF-8',
        },
      ],
    ],
    ['a bare Basic', ['Basic'], [{ scheme: 'Basic', realm: '' }]],
    [
      'a good header beside a malformed one',
      ['Digest realm=IP Camera, nonce=abc', 'Digest realm="IP Camera", nonce="abc"'],
      [{ scheme: 'Digest', realm: 'IP Camera', nonce: 'abc', algorithm: 'MD5', qop: [] }],
    ],
    ['nothing usable', ['Bearer realm="x"', 'NTLM'], []],
  ];
  for (const [name, values, expected] of cases) {
    it(`parses ${name}`, () => {
      expect(parseChallenges(values)).toEqual(expected);
    });
  }

  for (const value of [
    'Digest realm="a"',
    'Digest nonce="n"',
    'Digest realm="unterminated, nonce="n"',
    'realm="a"',
    'Digest realm="a", realm="b", nonce="n"',
    'Digest @',
    'Digest realm="a\u0000", nonce="n"',
  ]) {
    it(`answers 400 to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseChallenges([value]))).toBe(400);
    });
  }
});

describe('chooseChallenge', () => {
  const [sha, md5, md5sess, basic, authIntOnly, rfc2069] = parseChallenges([
    'Digest realm="r", nonce="n", algorithm=SHA-256, qop="auth"',
    'Digest realm="r", nonce="n", algorithm=MD5, qop="auth"',
    'Digest realm="r", nonce="n", algorithm=MD5-sess, qop="auth"',
    'Basic realm="r"',
    'Digest realm="r", nonce="n", algorithm=SHA-256, qop="auth-int"',
    'Digest realm="r", nonce="n"',
  ]) as [Challenge, Challenge, Challenge, Challenge, Challenge, Challenge];

  it('prefers SHA-256 over MD5 over Basic, whatever the order', () => {
    expect(chooseChallenge([basic, md5, sha])).toBe(sha);
    expect(chooseChallenge([basic, md5sess, md5])).toBe(md5);
    expect(chooseChallenge([basic, rfc2069])).toBe(rfc2069);
    expect(chooseChallenge([basic])).toBe(basic);
  });

  it('passes over challenges it cannot answer', () => {
    expect(chooseChallenge([authIntOnly, md5])).toBe(md5);
    expect(chooseChallenge([authIntOnly])).toBeNull();
    expect(chooseChallenge([])).toBeNull();
  });
});

describe('formatChallenge', () => {
  it('writes Digest and Basic challenges', () => {
    expect(
      formatChallenge({
        scheme: 'Digest',
        realm: 'Edge Gateway',
        nonce: 'abc',
        algorithm: 'SHA-256',
        qop: ['auth'],
        opaque: 'o',
        stale: true,
      }),
    ).toBe('Digest realm="Edge Gateway", nonce="abc", algorithm=SHA-256, qop="auth", opaque="o", stale=TRUE');
    expect(formatChallenge({ scheme: 'Digest', realm: 'r', nonce: 'n', algorithm: 'MD5', qop: [] })).toBe(
      'Digest realm="r", nonce="n", algorithm=MD5',
    );
    expect(formatChallenge({ scheme: 'Basic', realm: 'a "b"', charset: 'UTF-8' })).toBe(
      'Basic realm="a \\"b\\"", charset=UTF-8',
    );
    expect(() => formatChallenge({ scheme: 'Basic', realm: 'a\nb' })).toThrow(TypeError);
  });
});

describeRoundTrip(
  'WWW-Authenticate',
  (text) => parseChallenges([text]),
  (list) => list.map(formatChallenge).join(', '),
  {
    canonical: [
      ['Basic realm="IP Camera(C6934)"', [{ scheme: 'Basic', realm: 'IP Camera(C6934)' }]],
      ['Basic realm="a \\"b\\"", charset=UTF-8', [{ scheme: 'Basic', realm: 'a "b"', charset: 'UTF-8' }]],
      ['Basic realm=""', [{ scheme: 'Basic', realm: '' }]],
      [
        'Digest realm="r", nonce="n", algorithm=MD5',
        [{ scheme: 'Digest', realm: 'r', nonce: 'n', algorithm: 'MD5', qop: [] }],
      ],
      [
        'Digest realm="Edge Gateway", nonce="abc", algorithm=SHA-256, qop="auth", opaque="o", stale=TRUE',
        [
          {
            scheme: 'Digest',
            realm: 'Edge Gateway',
            nonce: 'abc',
            algorithm: 'SHA-256',
            qop: ['auth'],
            opaque: 'o',
            stale: true,
          },
        ],
      ],
      [
        'Digest realm="say \\"hi\\" \\\\o/", nonce="abc/def==", algorithm=MD5-sess, qop="auth,auth-int", opaque="x", stale=FALSE, domain="/ rtsp://cam/", charset=UTF-8, userhash=true',
        [
          {
            scheme: 'Digest',
            realm: 'say "hi" \\o/',
            nonce: 'abc/def==',
            algorithm: 'MD5-sess',
            qop: ['auth', 'auth-int'],
            opaque: 'x',
            stale: false,
            domain: '/ rtsp://cam/',
            charset: 'UTF-8',
            userhash: true,
          },
        ],
      ],
      [
        'Digest realm="cam", nonce="abc123", algorithm=SHA-256, qop="auth", opaque="op", Digest realm="cam", nonce="abc123", algorithm=MD5, qop="auth", opaque="op", Basic realm="cam"',
        [
          { scheme: 'Digest', realm: 'cam', nonce: 'abc123', algorithm: 'SHA-256', qop: ['auth'], opaque: 'op' },
          { scheme: 'Digest', realm: 'cam', nonce: 'abc123', algorithm: 'MD5', qop: ['auth'], opaque: 'op' },
          { scheme: 'Basic', realm: 'cam' },
        ],
      ],
    ],
    aliases: [
      // Hikvision: no algorithm, a quoted boolean.
      [
        'Digest realm="IP Camera(C6934)", nonce="8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61", stale="FALSE"',
        'Digest realm="IP Camera(C6934)", nonce="8ef6b7c5a1e03b2d4f1c7a9e0d3b5f61", algorithm=MD5, stale=FALSE',
      ],
      // RFC 7616's field order and its blank after the comma inside qop.
      [
        'Digest realm="a", qop="auth, auth-int", algorithm=sha-256, nonce="n"',
        'Digest realm="a", nonce="n", algorithm=SHA-256, qop="auth,auth-int"',
      ],
      [
        'digest REALM=r  nonce=abc/def== ,opaque=x, userhash=TRUE',
        'Digest realm="r", nonce="abc/def==", algorithm=MD5, opaque="x", userhash=true',
      ],
      ['Basic', 'Basic realm=""'],
      ['Negotiate YWJjZA==, Basic realm="a", charset="UTF-8", Bearer realm="x"', 'Basic realm="a", charset=UTF-8'],
    ],
  },
);

describe('WWW-Authenticate fuzz', () => {
  const rng1 = makeRng();
  it(`parseChallenges(formatChallenge(x)) returns x (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 1000; i++) {
      const list = Array.from({ length: 1 + rng1.int(3) }, () => genChallenge(rng1));
      expect(parseChallenges(list.map(formatChallenge))).toEqual(list);
      expect(parseChallenges([list.map(formatChallenge).join(', ')])).toEqual(list);
    }
  });

  const rng2 = makeRng();
  it(`never throws anything but RtspParseError on mutated or random input (seed ${rng2.seed})`, () => {
    for (const input of mutatedAuthHeaders(rng2)) {
      const status = statusOf(() => parseChallenges([input]));
      expect(status === null || status === 400).toBe(true);
    }
  });
});
