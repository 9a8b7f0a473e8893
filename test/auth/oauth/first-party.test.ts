import { describe, expect, it } from 'vitest';
import { firstPartyRedirectUri, isFirstPartyClient, ownOrigin } from '../../../src/auth/oauth/first-party.js';
import { isOwnHost } from '../../../src/config/lan-address.js';
import { makeRng } from '../../support/fuzz.js';

// The web app's redirect URI follows the Host the browser used, but only when that Host is this box
// on the API's port: table-tested with a fixed list of this box's addresses.

const ADDRESSES = ['127.0.0.1', '::1', '192.168.1.20', 'fe80::1'];
const hosts = (apiPort: number) => ({
  apiPort,
  isOwnHost: (host: string) => isOwnHost(host, ['nvr.example.org'], () => ADDRESSES),
});

describe('firstPartyRedirectUri', () => {
  const cases: Array<[string | undefined, number, string | null]> = [
    ['localhost:8443', 8443, 'https://localhost:8443/signin/callback'],
    ['LOCALHOST:8443', 8443, 'https://localhost:8443/signin/callback'],
    ['127.0.0.1:8443', 8443, 'https://127.0.0.1:8443/signin/callback'],
    ['192.168.1.20:8443', 8443, 'https://192.168.1.20:8443/signin/callback'],
    ['[::1]:8443', 8443, 'https://[::1]:8443/signin/callback'],
    ['nvr.example.org:8443', 8443, 'https://nvr.example.org:8443/signin/callback'],
    // Port 443: the browser leaves it out, and so does the URI.
    ['localhost', 443, 'https://localhost/signin/callback'],
    ['localhost:443', 443, 'https://localhost/signin/callback'],
    // Not this box, or not the API's port.
    ['evil.example:8443', 8443, null],
    ['localhost.evil.example:8443', 8443, null],
    ['192.168.1.21:8443', 8443, null],
    ['localhost:8444', 8443, null],
    ['localhost', 8443, null],
    // Not a Host header at all.
    [undefined, 8443, null],
    ['', 8443, null],
    ['user@localhost:8443', 8443, null],
    ['localhost:8443/x', 8443, null],
    ['localhost:8443 ', 8443, null],
    ['[::1', 8443, null],
    ['localhost:99999999', 8443, null],
  ];
  it.each(cases)('Host %j on port %i → %j', (host, port, expected) => {
    expect(firstPartyRedirectUri(host, hosts(port))).toBe(expected);
  });

  it('never names a host that is not this box, whatever the Host header holds (fuzz)', () => {
    const rng = makeRng();
    const alphabet = 'localhost127.0.1:[]@/\\#?%.-_ evil8443';
    for (let i = 0; i < 5000; i++) {
      const host = rng.string(30, alphabet);
      const uri = firstPartyRedirectUri(host, hosts(8443));
      if (uri === null) continue;
      const url = new URL(uri);
      expect(`${url.pathname}${url.search}${url.hash}`).toBe('/signin/callback');
      expect(url.port).toBe('8443');
      expect(
        isOwnHost(url.hostname, ['nvr.example.org'], () => ADDRESSES),
        `seed ${rng.seed}: ${host}`,
      ).toBe(true);
    }
  });

  it('gives the origin alone for the metadata, by the same rule', () => {
    expect(ownOrigin('[::1]:8443', hosts(8443))).toBe('https://[::1]:8443');
    expect(ownOrigin('localhost:443', hosts(443))).toBe('https://localhost');
    expect(ownOrigin('evil.example:8443', hosts(8443))).toBeNull();
  });

  it('knows its client id', () => {
    expect(isFirstPartyClient('gateway-web')).toBe(true);
    expect(isFirstPartyClient('gateway-web ')).toBe(false);
    expect(isFirstPartyClient('cli_x')).toBe(false);
  });
});
