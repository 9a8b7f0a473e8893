import { describe, expect, it } from 'vitest';
import {
  appendQueryParams,
  codeRedirect,
  matchRedirectUri,
  validateRegisteredRedirectUri,
  type RedirectUriKind,
  type RedirectUriProblem,
} from '../../../src/auth/oauth/redirect-uri.js';
import { makeRng, mutate } from '../../support/fuzz.js';

describe('validateRegisteredRedirectUri', () => {
  const good: Array<[string, RedirectUriKind]> = [
    ['https://app.example/cb', 'https'],
    ['https://app.example/', 'https'],
    ['https://app.example:8443/oauth/cb', 'https'],
    ['https://app.example/cb?tenant=42', 'https'],
    ['https://192.168.1.20/cb', 'https'],
    ['https://localhost/cb', 'https'],
    ['http://127.0.0.1/cb', 'loopback'],
    ['http://127.0.0.1:51004/oauth2redirect/example-provider', 'loopback'],
    ['http://[::1]:61023/oauth2redirect/example-provider', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['com.example.app:/oauth2redirect/example-provider', 'private_use'],
    ['com.example.app:/cb?x=1', 'private_use'],
  ];
  it.each(good)('accepts %s', (uri, kind) => {
    expect(validateRegisteredRedirectUri(uri)).toEqual({ ok: true, kind });
  });

  const bad: Array<[string, string, RedirectUriProblem]> = [
    ['empty', '', 'empty'],
    ['too long', `https://app.example/${'a'.repeat(2000)}`, 'too_long'],
    ['space', 'https://app.example/c b', 'bad_characters'],
    ['tab (the URL parser drops it)', 'https://app.example/c\tb', 'bad_characters'],
    ['newline', 'https://app.example/cb\n', 'bad_characters'],
    ['non-ASCII', 'https://äpp.example/cb', 'bad_characters'],
    ['fragment', 'https://app.example/cb#x', 'fragment'],
    ['empty fragment', 'https://app.example/cb#', 'fragment'],
    ['relative', '/cb', 'unparseable'],
    ['no scheme', 'app.example/cb', 'unparseable'],
    ['https without host', 'https://', 'unparseable'],
    ['userinfo', 'https://user@app.example/cb', 'userinfo'],
    ['userinfo with password', 'https://user:pw@app.example/cb', 'userinfo'],
    ['empty userinfo', 'https://@app.example/cb', 'userinfo'],
    ['loopback as userinfo', 'http://127.0.0.1@evil.example/cb', 'userinfo'],
    ['registered host as userinfo', 'https://app.example@evil.example/cb', 'userinfo'],
    ['http, not loopback', 'http://app.example/cb', 'http_not_loopback'],
    ['http localhost', 'http://localhost/cb', 'http_not_loopback'],
    ['http localhost with port', 'http://localhost:8080/cb', 'http_not_loopback'],
    ['http other 127/8 address', 'http://127.0.0.2/cb', 'http_not_loopback'],
    ['http private LAN address', 'http://192.168.1.20/cb', 'http_not_loopback'],
    ['upper-case scheme', 'HTTPS://app.example/cb', 'not_normalized'],
    ['upper-case host', 'https://App.example/cb', 'not_normalized'],
    ['default port', 'https://app.example:443/cb', 'not_normalized'],
    ['no path', 'https://app.example', 'not_normalized'],
    ['dot segments', 'https://app.example/a/../cb', 'not_normalized'],
    ['encoded dot segments', 'https://app.example/a/%2e%2e/cb', 'not_normalized'],
    ['backslash', 'https://app.example\\cb', 'not_normalized'],
    ['shortened loopback', 'http://127.1/cb', 'not_normalized'],
    ['long IPv6 loopback', 'http://[0:0:0:0:0:0:0:1]/cb', 'not_normalized'],
    ['loopback without path', 'http://127.0.0.1:8080', 'not_normalized'],
    ['javascript', 'javascript:alert(1)', 'scheme_not_allowed'],
    ['data', 'data:text/html,hi', 'scheme_not_allowed'],
    ['file', 'file:///etc/passwd', 'scheme_not_allowed'],
    ['wss', 'wss://app.example/cb', 'scheme_not_allowed'],
    ['private-use scheme without a dot', 'myapp:/cb', 'scheme_not_allowed'],
    ['private-use with authority', 'com.example.app://cb', 'private_use_form'],
    ['private-use without slash', 'com.example.app:cb', 'private_use_form'],
    ['private-use upper case', 'Com.Example.App:/cb', 'not_normalized'],
    ['private-use with userinfo', 'com.example.app://u@cb/x', 'userinfo'],
    ['query with code', 'https://app.example/cb?code=1', 'reserved_query_parameter'],
    ['query with state', 'https://app.example/cb?a=1&state=x', 'reserved_query_parameter'],
    ['query with error', 'https://app.example/cb?error=x', 'reserved_query_parameter'],
    ['query with iss', 'https://app.example/cb?iss=x', 'reserved_query_parameter'],
  ];
  it.each(bad)('refuses %s', (_name, uri, problem) => {
    const result = validateRegisteredRedirectUri(uri);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toBe(problem);
    expect(result.message.length).toBeGreaterThan(0);
  });

  it('names localhost in the message', () => {
    const result = validateRegisteredRedirectUri('http://localhost/cb');
    expect(!result.ok && result.message).toMatch(/localhost/);
  });

  it('suggests the normalized form', () => {
    const result = validateRegisteredRedirectUri('https://APP.example/cb');
    expect(!result.ok && result.message).toContain('https://app.example/cb');
  });
});

describe('matchRedirectUri', () => {
  const registered = [
    'https://app.example/cb',
    'https://app.example/q?tenant=42',
    'http://127.0.0.1:8080/native/cb',
    'http://[::1]/v6/cb',
    'com.example.app:/oauth/cb',
  ];
  const cases: Array<[string, string, boolean]> = [
    ['exact https', 'https://app.example/cb', true],
    ['exact with query', 'https://app.example/q?tenant=42', true],
    ['exact private-use', 'com.example.app:/oauth/cb', true],
    ['exact loopback', 'http://127.0.0.1:8080/native/cb', true],
    // RFC 8252 §7.3: any port for loopback IP literals.
    ['loopback, other port', 'http://127.0.0.1:51004/native/cb', true],
    ['loopback, no port', 'http://127.0.0.1/native/cb', true],
    ['IPv6 loopback, port added', 'http://[::1]:61023/v6/cb', true],
    ['loopback, port with a leading zero', 'http://127.0.0.1:08080/native/cb', false],
    ['loopback, port out of range', 'http://127.0.0.1:65536/native/cb', false],
    ['loopback, other path', 'http://127.0.0.1:51004/native/cb2', false],
    ['loopback, trailing slash', 'http://127.0.0.1:51004/native/cb/', false],
    ['loopback, query added', 'http://127.0.0.1:51004/native/cb?x=1', false],
    ['loopback, IPv4 for an IPv6 registration', 'http://127.0.0.1:61023/v6/cb', false],
    ['loopback, IPv6 for an IPv4 registration', 'http://[::1]:8080/native/cb', false],
    ['localhost is not loopback', 'http://localhost:8080/native/cb', false],
    ['localhost, registered port', 'http://localhost:8080/native/cb', false],
    ['https for a loopback registration', 'https://127.0.0.1:8080/native/cb', false],
    ['loopback userinfo', 'http://127.0.0.1:8080@evil.example/native/cb', false],
    // Known redirect URI attacks: near matches that must not pass.
    ['suffix on the path', 'https://app.example/cb/evil', false],
    ['suffix on the host', 'https://app.example.evil.example/cb', false],
    ['prefix on the host', 'https://evilapp.example/cb', false],
    ['subdomain', 'https://evil.app.example/cb', false],
    ['userinfo @', 'https://app.example@evil.example/cb', false],
    ['userinfo @ with port', 'https://app.example:443@evil.example/cb', false],
    ['empty userinfo', 'https://@app.example/cb', false],
    ['fragment', 'https://app.example/cb#evil', false],
    ['empty fragment', 'https://app.example/cb#', false],
    ['host case change', 'https://APP.example/cb', false],
    ['path case change', 'https://app.example/CB', false],
    ['scheme case change', 'HTTPS://app.example/cb', false],
    ['http instead of https', 'http://app.example/cb', false],
    ['https port for a port-less registration', 'https://app.example:8443/cb', false],
    ['explicit default port', 'https://app.example:443/cb', false],
    ['path traversal', 'https://app.example/cb/../evil', false],
    ['encoded traversal', 'https://app.example/cb/%2e%2e/evil', false],
    ['encoded slash', 'https://app.example/cb%2Fevil', false],
    ['encoded letter', 'https://app.example/c%62', false],
    ['backslash', 'https://app.example\\@evil.example/cb', false],
    ['trailing slash', 'https://app.example/cb/', false],
    ['trailing dot in host', 'https://app.example./cb', false],
    ['query added', 'https://app.example/cb?x=1', false],
    ['empty query added', 'https://app.example/cb?', false],
    ['query dropped', 'https://app.example/q', false],
    ['query changed', 'https://app.example/q?tenant=43', false],
    ['query extended', 'https://app.example/q?tenant=42&x=1', false],
    ['query reordered / code smuggled', 'https://app.example/q?code=1&tenant=42', false],
    ['private-use with another path', 'com.example.app:/oauth/cb2', false],
    ['private-use scheme case', 'COM.EXAMPLE.APP:/oauth/cb', false],
    ['javascript', 'javascript:alert(1)', false],
    ['whitespace around', ' https://app.example/cb', false],
    ['newline inside (dropped by URL parser)', 'https://app.exa\nmple/cb', false],
    ['not a URI', 'not a uri', false],
    ['empty', '', false],
  ];
  it.each(cases)('%s: %s', (_name, requested, expected) => {
    expect(matchRedirectUri(requested, registered)).toBe(expected);
  });

  it('an unregistered loopback port is allowed only for loopback registrations', () => {
    expect(matchRedirectUri('https://app.example:9999/cb', ['https://app.example/cb'])).toBe(false);
    expect(matchRedirectUri('com.example.app:/cb', ['com.example.app:/cb'])).toBe(true);
    expect(matchRedirectUri('http://127.0.0.1:9999/cb', ['http://127.0.0.1:8080/cb'])).toBe(true);
  });

  it('never matches against an invalid registered URI, even the same string', () => {
    expect(matchRedirectUri('http://localhost/cb', ['http://localhost/cb'])).toBe(false);
    expect(matchRedirectUri('https://app.example/cb#x', ['https://app.example/cb#x'])).toBe(false);
    expect(matchRedirectUri('http://127.0.0.1:5/cb', ['http://127.0.0.1:8080/cb#'])).toBe(false);
  });

  it('nothing registered, nothing matches', () => {
    expect(matchRedirectUri('https://app.example/cb', [])).toBe(false);
  });
});

describe('appendQueryParams and codeRedirect', () => {
  const cases: Array<[string, string, ReadonlyArray<readonly [string, string | undefined]>, string]> = [
    ['no query', 'https://app.example/cb', [['code', 'abc']], 'https://app.example/cb?code=abc'],
    [
      'existing query kept as is',
      'https://app.example/cb?a=%20b&c',
      [['code', 'x']],
      'https://app.example/cb?a=%20b&c&code=x',
    ],
    ['query ending with ?', 'https://app.example/cb?', [['code', 'x']], 'https://app.example/cb?code=x'],
    ['query ending with &', 'https://app.example/cb?a=1&', [['code', 'x']], 'https://app.example/cb?a=1&code=x'],
    [
      'undefined values left out',
      'https://app.example/cb',
      [
        ['code', 'x'],
        ['state', undefined],
      ],
      'https://app.example/cb?code=x',
    ],
    ['nothing to add', 'https://app.example/cb', [], 'https://app.example/cb'],
    [
      'form encoding',
      'com.example.app:/cb',
      [['state', 'a b&c=d/é']],
      'com.example.app:/cb?state=a+b%26c%3Dd%2F%C3%A9',
    ],
  ];
  it.each(cases)('%s', (_name, uri, params, expected) => {
    expect(appendQueryParams(uri, params)).toBe(expected);
  });

  it('refuses a URI with a fragment', () => {
    expect(() => appendQueryParams('https://app.example/cb#f', [['code', 'x']])).toThrow(TypeError);
  });

  it('returns state unchanged', () => {
    const state = 'xyz ~!*()\'"<>%20+&=?';
    const url = new URL(codeRedirect('https://app.example/cb?tenant=1', 'c0de', state, 'https://gw.example'));
    expect(url.searchParams.get('state')).toBe(state);
    expect(url.searchParams.get('code')).toBe('c0de');
    expect(url.searchParams.get('iss')).toBe('https://gw.example');
    expect(url.searchParams.get('tenant')).toBe('1');
  });

  it('leaves out state and iss when absent', () => {
    expect(codeRedirect('http://127.0.0.1:5000/cb', 'c', undefined)).toBe('http://127.0.0.1:5000/cb?code=c');
  });
});

describe('redirect URI fuzz', () => {
  const rng = makeRng();
  it(`mutations match only when equal, or loopback up to the port (seed ${rng.seed})`, () => {
    const registered = [
      'https://app.example/cb',
      'http://127.0.0.1:8080/cb',
      'http://[::1]/cb',
      'com.example.app:/cb?x=1',
    ];
    const alphabet = 'aA.:/@#?&=%2e\\ \t\n[]1-_~' + '\u00e9\u0000';
    for (let i = 0; i < 5000; i++) {
      const base = rng.pick(registered);
      const requested = rng.int(10) === 0 ? rng.bytes(80).toString('latin1') : mutate(rng, base, alphabet);
      let matched = false;
      expect(() => {
        matched = matchRedirectUri(requested, registered);
      }).not.toThrow();
      expect(() => validateRegisteredRedirectUri(requested)).not.toThrow();
      if (!matched) continue;
      if (registered.includes(requested)) continue;
      // The only other way to match: a loopback URI differing from a registered one in the port.
      const stripped = requested.replace(/^http:\/\/(127\.0\.0\.1|\[::1\])(:[0-9]+)?/, 'http://$1');
      const registeredStripped = registered.map((r) =>
        r.replace(/^http:\/\/(127\.0\.0\.1|\[::1\])(:[0-9]+)?/, 'http://$1'),
      );
      expect(registeredStripped).toContain(stripped);
      expect(requested.startsWith('http://127.0.0.1') || requested.startsWith('http://[::1]')).toBe(true);
    }
  });
});
