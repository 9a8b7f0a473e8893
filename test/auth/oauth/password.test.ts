import { scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PasswordPolicyError } from '../../../src/auth/oauth/errors.js';
import {
  DEFAULT_SCRYPT_PARAMS,
  MAX_PASSWORD_LENGTH,
  hashPassword,
  needsRehash,
  verifyPassword,
  type ScryptParams,
} from '../../../src/auth/oauth/password.js';

// Cheap parameters keep the suite fast; one test below uses the defaults.
const CHEAP: ScryptParams = { N: 16, r: 1, p: 1 };

describe('hashPassword', () => {
  it('writes scrypt$N$r$p$salt$hash', async () => {
    const stored = await hashPassword('correct horse', CHEAP);
    expect(stored).toMatch(/^scrypt\$16\$1\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  });

  it('uses a fresh salt each time', async () => {
    const a = await hashPassword('same', CHEAP);
    const b = await hashPassword('same', CHEAP);
    expect(a).not.toBe(b);
    expect(await verifyPassword('same', a)).toBe(true);
    expect(await verifyPassword('same', b)).toBe(true);
  });

  it('is scrypt of the NFC password with the stored salt', async () => {
    const stored = await hashPassword('pässword', CHEAP);
    const [, , , , salt, hash] = stored.split('$') as [string, string, string, string, string, string];
    const expected = scryptSync(Buffer.from('pässword'.normalize('NFC')), Buffer.from(salt, 'base64url'), 32, {
      N: 16,
      r: 1,
      p: 1,
    });
    expect(hash).toBe(expected.toString('base64url'));
  });

  it('refuses empty and overlong passwords', async () => {
    await expect(hashPassword('', CHEAP)).rejects.toThrow(PasswordPolicyError);
    await expect(hashPassword('x'.repeat(MAX_PASSWORD_LENGTH + 1), CHEAP)).rejects.toThrow(PasswordPolicyError);
    await expect(hashPassword('x'.repeat(MAX_PASSWORD_LENGTH), CHEAP)).resolves.toMatch(/^scrypt\$/);
  });

  it.each<[string, ScryptParams]>([
    ['N not a power of two', { N: 24, r: 1, p: 1 }],
    ['N of 1', { N: 1, r: 1, p: 1 }],
    ['N too large', { N: 2 ** 21, r: 1, p: 1 }],
    ['r of 0', { N: 16, r: 0, p: 1 }],
    ['p too large', { N: 16, r: 1, p: 17 }],
    ['too much memory', { N: 2 ** 20, r: 8, p: 1 }],
    ['fraction', { N: 16, r: 1.5, p: 1 }],
  ])('refuses parameters: %s', async (_name, params) => {
    await expect(hashPassword('pw', params)).rejects.toThrow(RangeError);
  });

  it('works with the default parameters', async () => {
    const stored = await hashPassword('default params');
    expect(
      stored.startsWith(`scrypt$${DEFAULT_SCRYPT_PARAMS.N}$${DEFAULT_SCRYPT_PARAMS.r}$${DEFAULT_SCRYPT_PARAMS.p}$`),
    ).toBe(true);
    expect(await verifyPassword('default params', stored)).toBe(true);
    expect(needsRehash(stored)).toBe(false);
  });
});

describe('verifyPassword', () => {
  it('accepts the password and nothing near it', async () => {
    const stored = await hashPassword('Tr0ub4dor&3', CHEAP);
    const cases: Array<[string, boolean]> = [
      ['Tr0ub4dor&3', true],
      ['tr0ub4dor&3', false],
      ['Tr0ub4dor&3 ', false],
      [' Tr0ub4dor&3', false],
      ['Tr0ub4dor&', false],
      ['Tr0ub4dor&33', false],
      ['', false],
    ];
    for (const [candidate, expected] of cases)
      expect(await verifyPassword(candidate, stored), candidate).toBe(expected);
  });

  it('treats composed and decomposed forms as the same password', async () => {
    const composed = 'caf\u00e9';
    const decomposed = 'cafe\u0301';
    const stored = await hashPassword(composed, CHEAP);
    expect(await verifyPassword(decomposed, stored)).toBe(true);
  });

  it('handles non-ASCII and very long passwords', async () => {
    const pw = '🔑'.repeat(200) + 'ß';
    const stored = await hashPassword(pw, CHEAP);
    expect(await verifyPassword(pw, stored)).toBe(true);
    expect(await verifyPassword('x'.repeat(MAX_PASSWORD_LENGTH + 1), stored)).toBe(false);
  });

  it('returns false for an unknown user after doing the work', async () => {
    expect(await verifyPassword('anything', null, CHEAP)).toBe(false);
  });

  it('reads hashes made with other parameters', async () => {
    const stored = await hashPassword('pw', { N: 32, r: 2, p: 2 });
    expect(await verifyPassword('pw', stored, CHEAP)).toBe(true);
  });

  describe('unknown or damaged formats → false', () => {
    // A fixed hash of 'pw' with CHEAP, so the cases can be listed before any test runs.
    const good = `scrypt$16$1$1$${Buffer.alloc(16, 3).toString('base64url')}$${scryptSync('pw', Buffer.alloc(16, 3), 32, { N: 16, r: 1, p: 1 }).toString('base64url')}`;
    it('the fixed hash itself verifies', async () => {
      expect(await verifyPassword('pw', good)).toBe(true);
    });
    const [, n, r, p, salt, hash] = good.split('$') as [string, string, string, string, string, string];
    const cases: Array<[string, string]> = [
      ['empty', ''],
      ['plain text', 'pw'],
      ['argon2', '$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2g'],
      ['bcrypt', '$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234'],
      ['other prefix', good.replace(/^scrypt/, 'SCRYPT')],
      ['missing part', ['scrypt', n, r, p, salt].join('$')],
      ['extra part', `${good}$x`],
      ['N not a power of two', ['scrypt', '24', r, p, salt, hash].join('$')],
      ['N with leading zero', ['scrypt', '016', r, p, salt, hash].join('$')],
      ['N huge', ['scrypt', String(2 ** 30), r, p, salt, hash].join('$')],
      ['N as hex', ['scrypt', '0x10', r, p, salt, hash].join('$')],
      ['r zero', ['scrypt', n, '0', p, salt, hash].join('$')],
      ['p negative', ['scrypt', n, r, '-1', salt, hash].join('$')],
      ['memory too large', ['scrypt', String(2 ** 20), '32', p, salt, hash].join('$')],
      ['salt with padding', ['scrypt', n, r, p, `${salt}==`, hash].join('$')],
      ['salt standard base64', ['scrypt', n, r, p, salt.replace(/[-_]/g, '+') + '+', hash].join('$')],
      ['salt too short', ['scrypt', n, r, p, 'AAAA', hash].join('$')],
      ['hash too short', ['scrypt', n, r, p, salt, 'AAAA'].join('$')],
      ['hash cut by one character', ['scrypt', n, r, p, salt, hash.slice(0, -1)].join('$')],
      ['hash of other bytes', ['scrypt', n, r, p, salt, Buffer.alloc(32, 1).toString('base64url')].join('$')],
    ];
    it.each(cases)('%s', async (_name, stored) => {
      expect(await verifyPassword('pw', stored)).toBe(false);
    });
  });
});

describe('needsRehash', () => {
  const cases: Array<[string, ScryptParams, boolean]> = [
    ['same parameters', CHEAP, false],
    ['higher N wanted', { N: 32, r: 1, p: 1 }, true],
    ['higher r wanted', { N: 16, r: 2, p: 1 }, true],
    ['higher p wanted', { N: 16, r: 1, p: 2 }, true],
    ['lower parameters wanted: keep the stronger hash', { N: 2, r: 1, p: 1 }, false],
  ];
  it.each(cases)('%s', async (_name, wanted, expected) => {
    const stored = await hashPassword('pw', CHEAP);
    expect(needsRehash(stored, wanted)).toBe(expected);
  });

  it('cheap test hashes need a rehash under the defaults', async () => {
    expect(needsRehash(await hashPassword('pw', CHEAP))).toBe(true);
  });

  it('unreadable hashes need one', () => {
    expect(needsRehash('')).toBe(true);
    expect(needsRehash('$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA')).toBe(true);
  });

  it('other salt or hash sizes need one', () => {
    const salt = Buffer.alloc(32, 7).toString('base64url');
    const hash = Buffer.alloc(32, 9).toString('base64url');
    expect(needsRehash(`scrypt$16$1$1$${salt}$${hash}`, CHEAP)).toBe(true);
  });
});
