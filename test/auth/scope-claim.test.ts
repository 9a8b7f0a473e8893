import { describe, expect, it } from 'vitest';
import { hasScope, parseScope } from '../../src/auth/scope-claim.js';
import { makeRng, mutate } from '../support/fuzz.js';

describe('parseScope', () => {
  const cases: Array<[string, unknown, string[]]> = [
    ['single scope', 'devices:read', ['devices:read']],
    ['several scopes', 'devices:read alerts:write', ['devices:read', 'alerts:write']],
    ['repeated spaces', '  devices:read   alerts:write ', ['devices:read', 'alerts:write']],
    ['duplicates collapse', 'a a a', ['a']],
    ['empty string', '', []],
    ['only spaces', '   ', []],
    ['tab is not a separator, token dropped', 'devices:read\talerts:write', []],
    ['quote and backslash are not scope characters', 'a"b c\\d e', ['e']],
    ['non-ASCII dropped', 'caméras devices:read', ['devices:read']],
    ['number', 42, []],
    ['array of strings', ['devices:read'], []],
    ['object', { scope: 'devices:read' }, []],
    ['null', null, []],
    ['undefined', undefined, []],
    ['boolean', true, []],
  ];
  it.each(cases)('%s', (_name, claim, expected) => {
    expect([...parseScope(claim)].sort()).toEqual([...expected].sort());
  });
});

describe('hasScope', () => {
  const cases: Array<[string, string, boolean]> = [
    ['devices:read', 'devices:read', true],
    ['alerts:read devices:read', 'devices:read', true],
    ['devices:readx', 'devices:read', false],
    ['xdevices:read', 'devices:read', false],
    ['devices', 'devices:read', false],
    ['devices:read', 'devices', false],
    ['DEVICES:READ', 'devices:read', false],
    ['', 'devices:read', false],
  ];
  it.each(cases)('granted %j, needed %j → %s', (claim, needed, expected) => {
    expect(hasScope(parseScope(claim), needed)).toBe(expected);
  });
});

describe('parseScope fuzz', () => {
  const rng = makeRng();
  it(`never throws and returns only valid scope tokens (seed ${rng.seed})`, () => {
    const alphabet = 'abcdz:_-. \t"\\\u00e9\u0000*';
    const samples = ['devices:read alerts:write', 'users:read', ' a  b ', ''];
    for (let i = 0; i < 5000; i++) {
      let claim: unknown;
      switch (rng.int(4)) {
        case 0:
          claim = mutate(rng, rng.pick(samples), alphabet);
          break;
        case 1:
          claim = rng.string(64);
          break;
        case 2:
          claim = rng.bytes(64).toString('latin1');
          break;
        default:
          claim = rng.pick<unknown>([null, undefined, 0, NaN, [], {}, ['a'], true, Symbol('s'), () => 'a']);
      }
      const granted = parseScope(claim);
      expect(granted, `seed ${rng.seed}, claim ${JSON.stringify(String(claim))}`).toBeInstanceOf(Set);
      for (const s of granted) expect(s, `seed ${rng.seed}`).toMatch(/^[\x21\x23-\x5B\x5D-\x7E]+$/);
    }
  });
});
