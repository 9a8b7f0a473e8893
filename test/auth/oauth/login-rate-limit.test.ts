import { describe, expect, it } from 'vitest';
import { LoginRateLimiter, rateLimitKeyForIp } from '../../../src/auth/oauth/login-rate-limit.js';
import { makeRng } from '../../support/fuzz.js';

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
