import { describe, expect, it } from 'vitest';
import { cookieValue, hostCookie, parseFormBody, repeatedJsonName } from '../../src/api/forms.js';
import { consentPage, errorPage, escapeHtml, loginPage } from '../../src/api/oauth-pages.js';
import { makeRng } from '../support/fuzz.js';

describe('parseFormBody', () => {
  it.each([
    ['empty', '', {}],
    ['one field', 'a=1', { a: '1' }],
    ['plus and percent decoding', 'state=a+b%26c%3Dd', { state: 'a b&c=d' }],
    ['a repeated name becomes an array', 'code=a&code=b&code=c', { code: ['a', 'b', 'c'] }],
    ['a name without value', 'scope', { scope: '' }],
    // JSON.parse: an object literal would take __proto__ as its prototype, not as a field.
    [
      '__proto__ is a field like any other',
      '__proto__=x&constructor=y',
      JSON.parse('{"__proto__":"x","constructor":"y"}') as Record<string, string>,
    ],
    ['broken percent escapes stay as text', 'a=%zz%', { a: '%zz%' }],
  ])('%s', (_name, body, want) => {
    const got = parseFormBody(body);
    expect(Object.getPrototypeOf(got)).toBeNull();
    expect(Object.entries(got)).toEqual(Object.entries(want));
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): never throws; every value is a string or an array of two or more`, () => {
    for (let i = 0; i < 2000; i++) {
      const got = parseFormBody(rng.string(60, 'ab=&%+;_ \u00e9\u0000'));
      for (const v of Object.values(got)) {
        if (Array.isArray(v)) expect(v.length).toBeGreaterThan(1);
        else expect(typeof v).toBe('string');
      }
    }
  });
});

describe('repeatedJsonName', () => {
  it.each([
    ['no repeat', '{"a":1,"b":"x"}', null],
    ['a repeat', '{"code":"a","code":"b"}', 'code'],
    ['the first repeated one', '{"a":1,"b":2,"b":3,"a":4}', 'b'],
    ['names inside nested objects do not count', '{"a":{"x":1,"x":2},"b":[{"a":1}]}', null],
    ['a nested object then a repeat', '{"a":{"b":1},"a":2}', 'a'],
    ['braces, commas and quotes inside strings', '{"a":"},{\\"a\\":","b":"[,]"}', null],
    ['escaped quotes and unicode escapes in names', '{"c\\u006fde":1,"code":2}', 'code'],
    ['whitespace everywhere', ' { "a" : 1 ,\n "a" : 2 } ', 'a'],
    ['not an object', '[1,2,2]', null],
    ['empty object', '{}', null],
  ])('%s', (_name, text, want) => {
    JSON.parse(text); // the cases are valid JSON, as the function expects
    expect(repeatedJsonName(text)).toBe(want);
  });

  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): agrees with counting the names of objects built from random entries`, () => {
    for (let i = 0; i < 500; i++) {
      const names = Array.from({ length: rng.int(6) }, () => rng.string(3, 'ab"\\{},:[] '));
      const text = `{${names.map((n, k) => `${JSON.stringify(n)}:${k % 2 ? JSON.stringify({ [n]: [n, { x: n }] }) : JSON.stringify(n)}`).join(',')}}`;
      const firstRepeat = names.find((n, k) => names.indexOf(n) !== k) ?? null;
      expect(repeatedJsonName(text), text).toBe(firstRepeat);
    }
  });
});

describe('cookies', () => {
  it.each([
    [undefined, 'x', undefined],
    ['x=1', 'x', '1'],
    ['a=1; x=2; b=3', 'x', '2'],
    ['xx=1; x=2', 'x', '2'],
    ['x=1; x=2', 'x', '1'],
    ['x', 'x', undefined],
    ['  x = spaced  ', 'x', 'spaced'],
  ])('cookieValue(%j, %j) = %j', (header, name, want) => {
    expect(cookieValue(header, name)).toBe(want);
  });

  it('makes __Host- style cookies: Secure, host-only, root path, HttpOnly, SameSite=Strict', () => {
    expect(hostCookie('__Host-a', 'v', 60)).toBe('__Host-a=v; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=60');
  });
});

describe('pages', () => {
  const hostile = `<script>alert("x")</script>'&`;
  it('escapes every value taken from a request or the database', () => {
    expect(escapeHtml(hostile)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;');
    const pages = [
      loginPage({
        clientName: hostile,
        request: { state: hostile, [hostile]: 'v' },
        csrf: hostile,
        username: hostile,
        error: hostile,
      }),
      consentPage({
        clientName: hostile,
        username: hostile,
        destination: hostile,
        scopes: [{ name: hostile, meaning: hostile }],
        request: { state: hostile },
        csrf: hostile,
      }),
      errorPage({ title: hostile, error: hostile, description: hostile }),
    ];
    for (const html of pages) {
      expect(html).not.toContain('<script>');
      expect(html).not.toContain(`"x"`);
      expect(html).toContain('&lt;script&gt;');
    }
  });

  it('carries the request through the forms as hidden fields, and has no script at all', () => {
    const html = loginPage({ clientName: 'App', request: { client_id: 'cli_1', state: 'a b' }, csrf: 'c' });
    expect(html).toContain('<input type="hidden" name="client_id" value="cli_1">');
    expect(html).toContain('<input type="hidden" name="state" value="a b">');
    expect(html).toContain('<input type="hidden" name="csrf" value="c">');
    expect(html).not.toMatch(/<script|onload=|javascript:/i);
  });
});
