import { describe, expect, it } from 'vitest';
import {
  answerChallenge,
  digestResponse,
  parseAuthorization,
  parseChallenges,
  verifyDigest,
  type DigestAlgorithm,
} from '../../../../src/media/rtsp/index.js';
import { RFC7616, server } from '../auth-fixtures.js';

// The RFCs' own examples, from the challenge to the server's check: the digest arithmetic is
// right when every step agrees with the published response.

describe('RFC 7616 §3.9.1 (Mufasa, Circle of Life)', () => {
  const { realm, nonce, opaque, cnonce, headers } = RFC7616;
  const vectors: Array<[DigestAlgorithm, string]> = [
    ['MD5', '8ca523f5e9506fed4657c9700eebdbec'],
    ['SHA-256', '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1'],
  ];

  for (const [algorithm, response] of vectors) {
    it(`computes, answers and verifies the ${algorithm} response`, () => {
      const input = {
        algorithm,
        username: 'Mufasa',
        password: 'Circle of Life',
        realm,
        nonce,
        method: 'GET',
        uri: '/dir/index.html',
        qop: 'auth',
        nc: '00000001',
        cnonce,
      };
      expect(digestResponse(input)).toBe(response);
      expect(digestResponse({ ...input, nc: 1 })).toBe(response);

      const ch = parseChallenges(headers).find((c) => c.scheme === 'Digest' && c.algorithm === algorithm);
      if (ch === undefined) throw new Error('challenge missing');
      const header = answerChallenge(ch, {
        username: 'Mufasa',
        password: 'Circle of Life',
        method: 'GET',
        uri: '/dir/index.html',
        cnonce,
        nc: 1,
      });
      expect(parseAuthorization(header)).toEqual({
        scheme: 'Digest',
        username: 'Mufasa',
        realm,
        nonce,
        uri: '/dir/index.html',
        response,
        algorithm,
        cnonce,
        opaque,
        qop: 'auth',
        nc: '00000001',
      });

      // The RFC's own Authorization header, field order and all.
      const rfc = `Digest username="Mufasa", realm="${realm}", uri="/dir/index.html", algorithm=${algorithm}, nonce="${nonce}", nc=00000001, cnonce="${cnonce}", qop=auth, response="${response}", opaque="${opaque}"`;
      expect(
        verifyDigest(rfc, server({ method: 'GET', uri: '/dir/index.html', realm }, { Mufasa: 'Circle of Life' })),
      ).toEqual({ ok: true, username: 'Mufasa', algorithm });
    });
  }
});

describe('RFC 2617 §3.5 (Mufasa, Circle Of Life)', () => {
  const authorization =
    'Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41"';

  it('computes and verifies the response', () => {
    expect(
      digestResponse({
        username: 'Mufasa',
        password: 'Circle Of Life',
        realm: 'testrealm@host.com',
        nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
        method: 'GET',
        uri: '/dir/index.html',
        qop: 'auth',
        nc: '00000001',
        cnonce: '0a4f113b',
      }),
    ).toBe('6629fae49393a05397450978507c4ef1');
    expect(
      verifyDigest(
        authorization,
        server({ method: 'GET', uri: '/dir/index.html', realm: 'testrealm@host.com' }, { Mufasa: 'Circle Of Life' }),
      ),
    ).toEqual({
      ok: true,
      username: 'Mufasa',
      algorithm: 'MD5',
    });
  });
});
