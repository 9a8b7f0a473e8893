import { scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SCRYPT_PARAMS,
  LoginRateLimiter,
  MAX_PASSWORD_LENGTH,
  PasswordPolicyError,
  hashPassword,
  needsRehash,
  rateLimitKeyForIp,
  verifyPassword,
  type ScryptParams,
} from '../../../src/auth/oauth/password.js';
import { makeRng } from '../../support/fuzz.js';

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
    const expected = scryptSync(Buffer.from('pässword'.normalize('NFC')), Buffer.from(salt, 'base64url'), 32, { N: 16, r: 1, p: 1 });
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
    expect(stored.startsWith(`scrypt$${DEFAULT_SCRYPT_PARAMS.N}$${DEFAULT_SCRYPT_PARAMS.r}$${DEFAULT_SCRYPT_PARAMS.p}$`)).toBe(true);
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
    for (const [candidate, expected] of cases) expect(await verifyPassword(candidate, stored), candidate).toBe(expected);
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

describe('LoginRateLimiter', () => {
  const opts = { freeFailures: 3, baseLockMs: 1000, maxLockMs: 8000, forgetAfterMs: 60_000, maxKeys: 100 };

  it('allows the free failures, then locks with doubling times up to the cap', () => {
    const limiter = new LoginRateLimiter(opts);
    let t = 0;
    expect(limiter.check('alice', t)).toEqual({ allowed: true });
    expect(limiter.fail('alice', t)).toEqual({ allowed: true });
    expect(limiter.fail('alice', t)).toEqual({ allowed: true });
    expect(limiter.fail('alice', t)).toEqual({ allowed: true });
    const locks: number[] = [];
    for (let i = 0; i < 6; i++) {
      const decision = limiter.fail('alice', t);
      expect(decision.allowed).toBe(false);
      if (decision.allowed) return;
      locks.push(decision.retryAfterMs);
      expect(limiter.check('alice', t)).toEqual(decision);
      expect(limiter.check('alice', t + decision.retryAfterMs - 1)).toEqual({ allowed: false, retryAfterMs: 1 });
      t += decision.retryAfterMs;
      expect(limiter.check('alice', t)).toEqual({ allowed: true });
    }
    expect(locks).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('keeps keys apart', () => {
    const limiter = new LoginRateLimiter(opts);
    for (let i = 0; i < 4; i++) limiter.fail('alice', 0);
    expect(limiter.check('alice', 0).allowed).toBe(false);
    expect(limiter.check('bob', 0)).toEqual({ allowed: true });
  });

  it('succeed forgets the failures', () => {
    const limiter = new LoginRateLimiter(opts);
    for (let i = 0; i < 4; i++) limiter.fail('alice', 0);
    limiter.succeed('alice');
    expect(limiter.check('alice', 0)).toEqual({ allowed: true });
    expect(limiter.size).toBe(0);
    expect(limiter.fail('alice', 0)).toEqual({ allowed: true });
  });

  it('forgets a key whose last failure is old', () => {
    const limiter = new LoginRateLimiter(opts);
    for (let i = 0; i < 4; i++) limiter.fail('alice', 0);
    expect(limiter.check('alice', 59_999)).toEqual({ allowed: true });
    expect(limiter.size).toBe(1);
    expect(limiter.check('alice', 60_000)).toEqual({ allowed: true });
    expect(limiter.size).toBe(0);
    // Starts over: the free failures again.
    expect(limiter.fail('alice', 60_000)).toEqual({ allowed: true });
  });

  it('remembers while failures keep coming', () => {
    const limiter = new LoginRateLimiter(opts);
    let t = 0;
    for (let i = 0; i < 20; i++) {
      limiter.fail('alice', t);
      t += 50_000;
    }
    expect(limiter.fail('alice', t)).toEqual({ allowed: false, retryAfterMs: 8000 });
  });

  it('reserve counts an attempt as it arrives: a burst gets the free failures and the locking one, no more', () => {
    const limiter = new LoginRateLimiter(opts);
    // Nothing is released or failed in between: all attempts are in flight at once.
    const decisions = Array.from({ length: 200 }, () => limiter.reserve('alice', 0));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(opts.freeFailures + 1);
    expect(decisions.slice(opts.freeFailures + 1).every((d) => !d.allowed && d.retryAfterMs === 1000)).toBe(true);
    // Refused attempts are not counted: the lock is still the first one.
    expect(limiter.check('alice', 999)).toEqual({ allowed: false, retryAfterMs: 1 });
    expect(limiter.reserve('alice', 1000)).toEqual({ allowed: true });
    expect(limiter.check('alice', 1000)).toEqual({ allowed: false, retryAfterMs: 2000 });
  });

  it('release gives one reserved attempt back, and the lock it set', () => {
    const limiter = new LoginRateLimiter(opts);
    for (let i = 0; i < opts.freeFailures; i++) limiter.reserve('addr', 0);
    expect(limiter.reserve('addr', 0)).toEqual({ allowed: true });
    expect(limiter.check('addr', 0).allowed).toBe(false);
    limiter.release('addr'); // that one was a good login
    expect(limiter.check('addr', 0)).toEqual({ allowed: true });
    // The earlier failures stay counted: the next failure locks again.
    expect(limiter.fail('addr', 0)).toEqual({ allowed: false, retryAfterMs: 1000 });
    for (let i = 0; i < opts.freeFailures + 1; i++) limiter.release('addr');
    expect(limiter.size).toBe(0);
    limiter.release('addr'); // nothing to give back: no harm
    limiter.release('never-seen');
    expect(limiter.size).toBe(0);
    expect(limiter.reserve('addr', 0)).toEqual({ allowed: true });
  });

  it('check never adds a key', () => {
    const limiter = new LoginRateLimiter(opts);
    for (let i = 0; i < 1000; i++) limiter.check(`user${i}`, i);
    expect(limiter.size).toBe(0);
  });

  it('holds at most maxKeys, evicting the oldest failure first', () => {
    const limiter = new LoginRateLimiter({ ...opts, maxKeys: 3 });
    limiter.fail('a', 1);
    limiter.fail('b', 2);
    limiter.fail('c', 3);
    limiter.fail('a', 4); // a is now the newest
    limiter.fail('d', 5); // evicts b
    expect(limiter.size).toBe(3);
    for (let i = 0; i < 3; i++) limiter.fail('a', 6);
    expect(limiter.check('a', 6).allowed).toBe(false);
    limiter.fail('e', 7); // evicts c
    expect(limiter.size).toBe(3);
    expect(limiter.check('a', 7).allowed).toBe(false);
  });

  it('drops forgotten keys when a new one comes', () => {
    const limiter = new LoginRateLimiter(opts);
    limiter.fail('a', 0);
    limiter.fail('b', 1);
    // 'recent' has failed 4 times, the last within forgetAfterMs of 70 s: it stays.
    for (let i = 0; i < 4; i++) limiter.fail('recent', 20_000);
    limiter.fail('c', 70_000);
    expect(limiter.size).toBe(2);
    expect(limiter.fail('recent', 70_000)).toEqual({ allowed: false, retryAfterMs: 2000 });
  });

  it('stays bounded under a spray of keys', () => {
    const limiter = new LoginRateLimiter({ ...opts, maxKeys: 50 });
    for (let i = 0; i < 10_000; i++) limiter.fail(`k${i % 977}`, i);
    expect(limiter.size).toBe(50);
  });

  it('survives a clock that steps back', () => {
    const limiter = new LoginRateLimiter(opts);
    for (let i = 0; i < 4; i++) limiter.fail('alice', 1_000_000);
    const decision = limiter.check('alice', 0);
    expect(decision).toEqual({ allowed: false, retryAfterMs: opts.maxLockMs });
  });

  it.each([
    [{ maxKeys: 0 }],
    [{ baseLockMs: 0 }],
    [{ baseLockMs: 10, maxLockMs: 5 }],
    [{ freeFailures: -1 }],
    [{ forgetAfterMs: Number.NaN }],
    [{ maxKeys: 1.5 }],
  ])('refuses options %j', (bad) => {
    expect(() => new LoginRateLimiter(bad)).toThrow(RangeError);
  });

  it('has usable defaults', () => {
    const limiter = new LoginRateLimiter();
    for (let i = 0; i < 5; i++) expect(limiter.fail('u', 0).allowed).toBe(true);
    expect(limiter.fail('u', 0)).toEqual({ allowed: false, retryAfterMs: 1000 });
  });
});

describe('rateLimitKeyForIp', () => {
  const cases: Array<[string, string]> = [
    ['192.0.2.7', 'ip:192.0.2.7'],
    ['::ffff:192.0.2.7', 'ip:192.0.2.7'],
    ['::FFFF:192.0.2.7', 'ip:192.0.2.7'],
    ['::ffff:c000:207', 'ip:192.0.2.7'],
    ['2001:db8::1', 'ip6:2001:0db8:0000:0000::/64'],
    ['2001:db8:0:0:ffff:1:2:3', 'ip6:2001:0db8:0000:0000::/64'],
    ['2001:DB8:0:0:1::', 'ip6:2001:0db8:0000:0000::/64'],
    ['2001:db8:0:1::1', 'ip6:2001:0db8:0000:0001::/64'],
    ['fe80::1%eth0', 'ip6:fe80:0000:0000:0000::/64'],
    ['::1', 'ip6:0000:0000:0000:0000::/64'],
    ['::', 'ip6:0000:0000:0000:0000::/64'],
    ['64:ff9b::192.0.2.7', 'ip6:0064:ff9b:0000:0000::/64'],
    ['not an ip', 'ip:not an ip'],
  ];
  it.each(cases)('%s → %s', (ip, key) => {
    expect(rateLimitKeyForIp(ip)).toBe(key);
  });

  it('gives one key to a whole /64', () => {
    const rng = makeRng();
    const keys = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const host = Array.from({ length: 4 }, () => rng.int(0x10000).toString(16)).join(':');
      keys.add(rateLimitKeyForIp(`2001:db8:aa:bb:${host}`));
    }
    expect([...keys]).toEqual(['ip6:2001:0db8:00aa:00bb::/64']);
  });
});
