import { describe, expect, it } from 'vitest';
import { digestAuthorization, parseDigestChallenge } from '../../../src/onvif/soap/http-digest.js';

describe('parseDigestChallenge', () => {
  it.each<[string, string | string[] | undefined, ReturnType<typeof parseDigestChallenge>]>([
    ['none', undefined, null],
    ['Basic only', 'Basic realm="cam"', null],
    [
      'a digest with qop',
      'Digest realm="IP Camera", nonce="abc", qop="auth,auth-int", opaque="xyz"',
      { realm: 'IP Camera', nonce: 'abc', qop: 'auth', opaque: 'xyz', algorithm: null },
    ],
    [
      'an unquoted MD5 digest without qop',
      'Digest realm="r", nonce=n1, algorithm=MD5',
      { realm: 'r', nonce: 'n1', qop: null, opaque: null, algorithm: 'MD5' },
    ],
    ['SHA-256 only (not answered)', 'Digest realm="r", nonce="n", algorithm=SHA-256', null],
    ['no nonce', 'Digest realm="r"', null],
    [
      'the digest among several headers',
      ['Basic realm="x"', 'Digest realm="r", nonce="n", qop="auth"'],
      { realm: 'r', nonce: 'n', qop: 'auth', opaque: null, algorithm: null },
    ],
  ])('%s', (_name, header, challenge) => {
    expect(parseDigestChallenge(header)).toEqual(challenge);
  });
});

describe('digestAuthorization', () => {
  it('answers the RFC 2617 §3.5 example', () => {
    const challenge = parseDigestChallenge(
      'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    )!;
    const header = digestAuthorization(
      challenge,
      { username: 'Mufasa', password: 'Circle Of Life' },
      'GET',
      '/dir/index.html',
      '0a4f113b',
    );
    expect(header).toContain('response="6629fae49393a05397450978507c4ef1"');
    expect(header).toMatch(
      /^Digest username="Mufasa", realm="testrealm@host.com", .*qop=auth, nc=00000001, cnonce="0a4f113b", opaque="5ccc069c403ebaf9f0171e9517f40e41"$/,
    );
  });
});
