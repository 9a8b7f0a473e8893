import { describe, expect, it } from 'vitest';
import { b64TokenFault, locateBearer, parseBearer, type BearerResult } from '../../src/auth/bearer.js';
import { makeRng, mutate } from '../support/fuzz.js';

const JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';

type Case = [name: string, rawHeaders: string[], query: string, expected: BearerResult];

describe('parseBearer', () => {
  const cases: Case[] = [
    ['no headers', [], '', { kind: 'none' }],
    ['other headers only', ['Host', 'gw', 'Accept', '*/*'], '', { kind: 'none' }],
    ['bearer token', ['Authorization', `Bearer ${JWT}`], '', { kind: 'token', token: JWT }],
    ['scheme case-insensitive', ['authorization', `bEaReR ${JWT}`], '', { kind: 'token', token: JWT }],
    ['header name case-insensitive', ['AUTHORIZATION', `Bearer ${JWT}`], '', { kind: 'token', token: JWT }],
    ['surrounding whitespace', ['Authorization', `  Bearer   ${JWT} \t`], '', { kind: 'token', token: JWT }],
    [
      'b64token with padding and symbols',
      ['Authorization', 'Bearer aZ09-._~+/=='],
      '',
      { kind: 'token', token: 'aZ09-._~+/==' },
    ],
    ['unrelated query', ['Authorization', `Bearer ${JWT}`], 'limit=10&cursor=abc', { kind: 'token', token: JWT }],
    [
      'long token is still a token',
      ['Authorization', `Bearer ${'a'.repeat(9000)}`],
      '',
      { kind: 'token', token: 'a'.repeat(9000) },
    ],
    ['Basic is foreign', ['Authorization', 'Basic dXNlcjpwYXNz'], '', { kind: 'none' }],
    ['Digest is foreign', ['Authorization', 'Digest username="x"'], '', { kind: 'none' }],
    ['Bearer prefix of another scheme', ['Authorization', `Bearerish ${JWT}`], '', { kind: 'none' }],
  ];
  it.each(cases)('%s', (_name, rawHeaders, query, expected) => {
    expect(parseBearer({ rawHeaders, query })).toEqual(expected);
  });

  const malformed: Array<[name: string, rawHeaders: string[], query: string]> = [
    ['duplicate headers', ['Authorization', `Bearer ${JWT}`, 'authorization', `Bearer ${JWT}`], ''],
    ['duplicate headers, one foreign', ['Authorization', 'Basic eA==', 'Authorization', `Bearer ${JWT}`], ''],
    ['Bearer without token', ['Authorization', 'Bearer'], ''],
    ['Bearer with only spaces', ['Authorization', 'Bearer    '], ''],
    ['empty header', ['Authorization', ''], ''],
    ['extra part after token', ['Authorization', `Bearer ${JWT} extra`], ''],
    ['comma-separated params', ['Authorization', `Bearer ${JWT}, Basic eA==`], ''],
    ['padding in the middle', ['Authorization', 'Bearer ab=cd'], ''],
    ['quote', ['Authorization', 'Bearer "abc"'], ''],
    ['non-ASCII', ['Authorization', 'Bearer abcé'], ''],
    ['access_token in query', [], 'access_token=abc'],
    ['access_token in query with header too', ['Authorization', `Bearer ${JWT}`], 'a=1&access_token=abc'],
    ['percent-encoded access_token name', [], 'access%5Ftoken=abc'],
    ['access_token without value', [], 'access_token'],
  ];
  it.each(malformed)('malformed: %s', (_name, rawHeaders, query) => {
    const result = parseBearer({ rawHeaders, query });
    expect(result.kind).toBe('malformed');
    if (result.kind === 'malformed') {
      expect(result.reason.length).toBeGreaterThan(0);
      // The reason goes into a WWW-Authenticate quoted-string and must never echo the token.
      expect(result.reason).not.toMatch(/["\\]/);
      expect(result.reason).not.toContain('abc');
    }
  });
});

describe('locateBearer and b64TokenFault: parseBearer in two steps', () => {
  it('locates a token without looking at its characters', () => {
    for (const token of [JWT, 'tok"en', 'abcé', 'ab=cd', `${JWT} extra`]) {
      expect(locateBearer({ rawHeaders: ['Authorization', `Bearer ${token}`], query: '' })).toEqual({
        kind: 'unchecked',
        token,
      });
    }
  });

  it('refuses what parseBearer refuses before the characters, with the same reasons', () => {
    const inputs = [
      { rawHeaders: [], query: 'access_token=abc' },
      { rawHeaders: ['Authorization', `Bearer ${JWT}`, 'authorization', `Bearer ${JWT}`], query: '' },
      { rawHeaders: ['Authorization', 'Bearer'], query: '' },
      { rawHeaders: ['Authorization', ''], query: '' },
      { rawHeaders: ['Authorization', 'Basic eA=='], query: '' },
      { rawHeaders: [], query: '' },
    ];
    for (const input of inputs) expect(locateBearer(input)).toEqual(parseBearer(input));
  });

  const faults: Array<[token: string, fault: string | null]> = [
    [JWT, null],
    ['aZ09-._~+/==', null],
    ['ab=cd', 'token has characters not allowed by RFC 6750'],
    ['tok"en', 'token has characters not allowed by RFC 6750'],
    [`${JWT} extra`, 'unexpected data after the token'],
    [`${JWT}\textra`, 'unexpected data after the token'],
  ];
  it.each(faults)('b64TokenFault(%j) = %j', (token, fault) => {
    expect(b64TokenFault(token)).toBe(fault);
  });
});

describe('parseBearer fuzz', () => {
  const rng = makeRng();
  it(`never throws and returns one of the union kinds (seed ${rng.seed})`, () => {
    const alphabet = 'Bearer abcXYZ019-._~+/= \t,"\u00e9\u0000';
    const queryAlphabet = 'access_token=&%5F?a1#';
    for (let i = 0; i < 5000; i++) {
      const rawHeaders: string[] = [];
      const count = rng.int(4);
      for (let h = 0; h < count; h++) {
        rawHeaders.push(mutate(rng, rng.pick(['Authorization', 'authorization', 'Host', 'X-Auth']), 'Authorization-x'));
        rawHeaders.push(rng.int(3) === 0 ? rng.string(40) : mutate(rng, `Bearer ${JWT}`, alphabet));
      }
      if (rng.int(10) === 0) rawHeaders.push('Authorization');
      const query =
        rng.int(2) === 0 ? '' : mutate(rng, rng.pick(['a=1', 'access_token=x', 'cursor=abc&limit=5']), queryAlphabet);
      const result = parseBearer({ rawHeaders, query });
      const context = `seed ${rng.seed}, iteration ${i}: ${JSON.stringify({ rawHeaders, query })}`;
      // The two steps the API's hook takes (the second only for a token it has not verified before) agree with it.
      const located = locateBearer({ rawHeaders, query });
      const fault = located.kind === 'unchecked' ? b64TokenFault(located.token) : null;
      const stepwise =
        located.kind !== 'unchecked'
          ? located
          : fault === null
            ? { kind: 'token', token: located.token }
            : { kind: 'malformed', reason: fault };
      expect(stepwise, context).toEqual(result);
      expect(['none', 'token', 'malformed'], context).toContain(result.kind);
      if (result.kind === 'token') expect(result.token, context).toMatch(/^[A-Za-z0-9\-._~+/]+=*$/);
      if (result.kind === 'malformed') expect(result.reason.length, context).toBeGreaterThan(0);
    }
  });
});
