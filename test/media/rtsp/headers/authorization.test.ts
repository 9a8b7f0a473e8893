import { describe, expect, it } from 'vitest';
import { answerChallenge, formatAuthorization, parseAuthorization } from '../../../../src/media/rtsp/index.js';
import { makeRng } from '../../../support/fuzz.js';
import { describeRoundTrip } from '../../../support/round-trip.js';
import { genAuthorization, mutatedAuthHeaders } from '../auth-fixtures.js';
import { statusOf } from '../fixtures.js';

describe('RFC 7616 §3.9.2', () => {
  it('decodes the username*', () => {
    const auth = parseAuthorization(
      `Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm="api@example.org", uri="/doe.json", algorithm=SHA-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", nc=00000001, cnonce="NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", qop=auth, response="ae66e67d6b427bd3f120414a82e4acff38e8ecd9101d6c861229025f607a79dd", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS"`,
    );
    expect(auth.scheme === 'Digest' && auth.username).toBe('Jäsøn Doe');
  });
});

describe('Authorization', () => {
  it('reads and writes Basic (RFC 7617 §2)', () => {
    expect(parseAuthorization('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==')).toEqual({
      scheme: 'Basic',
      username: 'Aladdin',
      password: 'open sesame',
    });
    expect(formatAuthorization({ scheme: 'Basic', username: 'Aladdin', password: 'open sesame' })).toBe(
      'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==',
    );
    expect(
      parseAuthorization(formatAuthorization({ scheme: 'Basic', username: 'admin', password: 'a:b:c ünï' })),
    ).toEqual({ scheme: 'Basic', username: 'admin', password: 'a:b:c ünï' });
    expect(() => formatAuthorization({ scheme: 'Basic', username: 'a:b', password: '' })).toThrow(TypeError);
  });

  const digest = 'Digest username="u", realm="r", nonce="n", uri="rtsp://cam/", response="0123abcd"';
  const errors: Array<[string, number]> = [
    ['', 400],
    ['Bearer abc.def', 401],
    ['Negotiate YWJj', 401],
    ['Basic !!!', 400],
    ['Basic', 400],
    [`Basic ${Buffer.from('no colon').toString('base64')}`, 400],
    ['Basic abc, Basic def', 400],
    ['Digest username="u", realm="r", nonce="n", uri="rtsp://cam/"', 400],
    [digest.replace('0123abcd', 'xyz'), 400],
    [`${digest}, qop=auth`, 400],
    [`${digest}, qop=auth, nc=00000001`, 400],
    [`${digest}, qop=auth, nc=zz, cnonce="c"`, 400],
    [`${digest}, algorithm=MD5-sess`, 400],
    [`${digest}, algorithm=SHA-512-256`, 400],
    [`${digest}, username*=UTF-8''u`, 400],
    [digest.replace('username="u"', "username*=ISO-8859-1''u"), 400],
    [digest.replace('username="u"', "username*=UTF-8''%ZZ"), 400],
    ['Digest abc', 400],
  ];
  for (const [value, status] of errors) {
    it(`answers ${status} to ${JSON.stringify(value)}`, () => {
      expect(statusOf(() => parseAuthorization(value))).toBe(status);
    });
  }

  it('writes Digest fields the way RTSP servers expect', () => {
    expect(
      formatAuthorization({
        scheme: 'Digest',
        username: 'ad"min',
        realm: 'r',
        nonce: 'n',
        uri: 'rtsp://cam/',
        response: 'abcd',
        algorithm: 'MD5',
        cnonce: 'c',
        opaque: 'o',
        qop: 'auth',
        nc: '00000001',
      }),
    ).toBe(
      'Digest username="ad\\"min", realm="r", nonce="n", uri="rtsp://cam/", response="abcd", algorithm=MD5, cnonce="c", opaque="o", qop=auth, nc=00000001',
    );
    expect(() =>
      formatAuthorization({ scheme: 'Digest', username: 'u', realm: 'r\r\n', nonce: 'n', uri: 'u', response: 'ab' }),
    ).toThrow(TypeError);
    expect(() =>
      formatAuthorization({ scheme: 'Digest', username: 'u', realm: 'r', nonce: 'n', uri: 'u', response: 'not hex' }),
    ).toThrow(TypeError);
  });
});

describe('answerChallenge', () => {
  it('answers Basic challenges with Basic credentials', () => {
    expect(
      answerChallenge(
        { scheme: 'Basic', realm: 'r' },
        { username: 'Aladdin', password: 'open sesame', method: 'DESCRIBE', uri: 'rtsp://gw.local:8554/cam1/main' },
      ),
    ).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
  });
});

describeRoundTrip('Authorization', parseAuthorization, formatAuthorization, {
  canonical: [
    ['Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==', { scheme: 'Basic', username: 'Aladdin', password: 'open sesame' }],
    ['Basic OnB3', { scheme: 'Basic', username: '', password: 'pw' }],
    [
      'Digest username="u", realm="r", nonce="n", uri="rtsp://cam/", response="0123abcd"',
      { scheme: 'Digest', username: 'u', realm: 'r', nonce: 'n', uri: 'rtsp://cam/', response: '0123abcd' },
    ],
    [
      'Digest username="ad\\"min", realm="r", nonce="n", uri="rtsp://cam/", response="abcd", algorithm=MD5, cnonce="c", opaque="o", qop=auth, nc=00000001',
      {
        scheme: 'Digest',
        username: 'ad"min',
        realm: 'r',
        nonce: 'n',
        uri: 'rtsp://cam/',
        response: 'abcd',
        algorithm: 'MD5',
        cnonce: 'c',
        opaque: 'o',
        qop: 'auth',
        nc: '00000001',
      },
    ],
    [
      'Digest username="Jäsøn Doe", realm="api@example.org", nonce="n", uri="/doe.json", response="AE66", algorithm=SHA-256-sess, cnonce="c", qop=auth-int, nc=0000000a, userhash=false',
      {
        scheme: 'Digest',
        username: 'Jäsøn Doe',
        realm: 'api@example.org',
        nonce: 'n',
        uri: '/doe.json',
        response: 'AE66',
        algorithm: 'SHA-256-sess',
        cnonce: 'c',
        qop: 'auth-int',
        nc: '0000000a',
        userhash: false,
      },
    ],
  ],
  aliases: [
    ['basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==', 'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=='],
    // RFC 7616 §3.9.1's field order.
    [
      'Digest username="Mufasa", realm="r", uri="/dir/index.html", algorithm=MD5, nonce="n", nc=00000001, cnonce="c", qop=auth, response="8ca523f5e9506fed4657c9700eebdbec", opaque="o"',
      'Digest username="Mufasa", realm="r", nonce="n", uri="/dir/index.html", response="8ca523f5e9506fed4657c9700eebdbec", algorithm=MD5, cnonce="c", opaque="o", qop=auth, nc=00000001',
    ],
    // ffmpeg 5.1 quotes algorithm and qop.
    [
      'Digest username="Mufasa", realm="cam", nonce="abc123", uri="rtsp://127.0.0.1:8660/x", response="ec64f7accf0e02706e7f24d8ff2ed62e", algorithm="MD5", opaque="op", qop="auth", cnonce="ea0a51cc9e75af2f", nc=00000001',
      'Digest username="Mufasa", realm="cam", nonce="abc123", uri="rtsp://127.0.0.1:8660/x", response="ec64f7accf0e02706e7f24d8ff2ed62e", algorithm=MD5, cnonce="ea0a51cc9e75af2f", opaque="op", qop=auth, nc=00000001',
    ],
    [
      "DIGEST username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm=r, nonce=n, uri=/x, response=ab, algorithm=md5, userhash=TRUE",
      'Digest username="Jäsøn Doe", realm="r", nonce="n", uri="/x", response="ab", algorithm=MD5, userhash=true',
    ],
    [
      'Digest username="u", realm="r", nonce="n", uri="/", response="ab", qop=AUTH, nc=1, cnonce="c"',
      'Digest username="u", realm="r", nonce="n", uri="/", response="ab", cnonce="c", qop=auth, nc=1',
    ],
  ],
});

describe('Authorization fuzz', () => {
  const rng1 = makeRng();
  it(`parseAuthorization(formatAuthorization(x)) returns x (seed ${rng1.seed})`, () => {
    for (let i = 0; i < 1000; i++) {
      const a = genAuthorization(rng1);
      expect(parseAuthorization(formatAuthorization(a))).toEqual(a);
    }
  });

  const rng2 = makeRng();
  it(`never throws anything but RtspParseError on mutated or random input (seed ${rng2.seed})`, () => {
    for (const input of mutatedAuthHeaders(rng2)) {
      const status = statusOf(() => parseAuthorization(input));
      expect(status === null || status === 400 || status === 401).toBe(true);
    }
  });
});
