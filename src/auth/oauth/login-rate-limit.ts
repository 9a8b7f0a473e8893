// Failed-login throttling: a limiter per key, and the key of a client address. Pure: no timers;
// the caller passes the clock in.

import { isIPv4, isIPv6 } from 'node:net';

export interface LoginRateLimiterOptions {
  /** Failures allowed before the first lock. */
  freeFailures: number;
  /** Length of the first lock; each further failure doubles it. */
  baseLockMs: number;
  maxLockMs: number;
  /** A key whose last failure is this old starts over. */
  forgetAfterMs: number;
  /** Keys held at most; the one whose last failure is oldest goes first. */
  maxKeys: number;
}

export const DEFAULT_LOGIN_RATE_LIMIT: Readonly<LoginRateLimiterOptions> = Object.freeze({
  freeFailures: 5,
  baseLockMs: 1_000,
  maxLockMs: 15 * 60_000,
  forgetAfterMs: 24 * 60 * 60_000,
  maxKeys: 10_000,
});

export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

interface Entry {
  /** Failed attempts, and attempts reserved and not (yet) released. */
  failures: number;
  lastFailureAt: number;
}

/**
 * Failed-login throttling per key (use one instance keyed by username and one keyed by
 * rateLimitKeyForIp(ip)). After `freeFailures` failures every further failure locks the key for
 * a doubling time up to `maxLockMs`, so guessing slows to a few attempts an hour without a user
 * who mistypes a few times ever noticing. Memory is bounded: at most `maxKeys` entries.
 *
 * A login counts its attempt with `reserve` as it arrives, before the slow password check, and
 * gives it back with `release` (or `succeed`) when the password was right: counting afterwards
 * would let every request of a parallel burst pass the check before the first failure is counted.
 */
export class LoginRateLimiter {
  private readonly opts: LoginRateLimiterOptions;
  // Kept in order of last failure (re-inserted on each), so the first entry is the oldest.
  private readonly entries = new Map<string, Entry>();

  constructor(options: Partial<LoginRateLimiterOptions> = {}) {
    const opts = { ...DEFAULT_LOGIN_RATE_LIMIT, ...options };
    for (const [name, value] of Object.entries(opts)) {
      if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
    }
    if (opts.maxKeys < 1) throw new RangeError('maxKeys must be at least 1');
    if (opts.baseLockMs < 1 || opts.maxLockMs < opts.baseLockMs)
      throw new RangeError('need 1 <= baseLockMs <= maxLockMs');
    this.opts = opts;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether an attempt for `key` may go ahead at `now` (ms). Asking never adds a key. */
  check(key: string, now: number): RateLimitDecision {
    const entry = this.entries.get(key);
    if (entry === undefined) return { allowed: true };
    if (this.isForgotten(entry, now)) {
      this.entries.delete(key);
      return { allowed: true };
    }
    return this.decide(entry, now);
  }

  /**
   * Whether an attempt for `key` may go ahead at `now`; if so it is counted as failed at once
   * (the caller releases it when it succeeds). A refused attempt is not counted.
   */
  reserve(key: string, now: number): RateLimitDecision {
    const decision = this.check(key, now);
    if (decision.allowed) this.fail(key, now);
    return decision;
  }

  /** Gives back one reserved attempt that turned out good. */
  release(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    entry.failures -= 1;
    if (entry.failures <= 0) this.entries.delete(key);
  }

  /** Records a failed attempt; returns the decision for the next one. */
  fail(key: string, now: number): RateLimitDecision {
    let entry = this.entries.get(key);
    if (entry !== undefined && this.isForgotten(entry, now)) entry = undefined;
    this.entries.delete(key);
    if (entry === undefined) {
      this.makeRoom(now);
      entry = { failures: 0, lastFailureAt: now };
    }
    entry.failures += 1;
    // A clock that stepped back must not move the last failure into the past and shorten the memory.
    entry.lastFailureAt = Math.max(entry.lastFailureAt, now);
    this.entries.set(key, entry);
    return this.decide(entry, now);
  }

  /**
   * Forgets the key's failures. Call it for the username after a successful login; for the
   * address release the login's own attempt instead, or an attacker holding one account could
   * reset their address's count at will.
   */
  succeed(key: string): void {
    this.entries.delete(key);
  }

  /**
   * The end of the key's lock (0: none). Derived from the count rather than stored, so a released
   * attempt also takes back the lock it set.
   */
  private lockedUntil(entry: Entry): number {
    const over = entry.failures - this.opts.freeFailures;
    if (over <= 0) return 0;
    return entry.lastFailureAt + Math.min(this.opts.maxLockMs, this.opts.baseLockMs * 2 ** Math.min(over - 1, 40));
  }

  private decide(entry: Entry, now: number): RateLimitDecision {
    const lockedUntil = this.lockedUntil(entry);
    if (now >= lockedUntil) return { allowed: true };
    // Capped in case the clock stepped back after the lock was set.
    return { allowed: false, retryAfterMs: Math.min(lockedUntil - now, this.opts.maxLockMs) };
  }

  private isForgotten(entry: Entry, now: number): boolean {
    return now >= this.lockedUntil(entry) && now - entry.lastFailureAt >= this.opts.forgetAfterMs;
  }

  private makeRoom(now: number): void {
    // The map is ordered by last failure, so forgotten entries sit at the front: dropping them
    // here keeps memory down when things are quiet, at amortised O(1) per failure.
    for (const [key, entry] of this.entries) {
      if (!this.isForgotten(entry, now)) break;
      this.entries.delete(key);
    }
    // Then the oldest even if still locked: the bound on memory wins over remembering one more
    // attacker. Pushing out a victim's lock takes maxKeys fresh failures, each a login attempt.
    while (this.entries.size >= this.opts.maxKeys) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) return;
      this.entries.delete(oldest.value);
    }
  }
}

/**
 * The rate-limit key of a client address: the IPv4 address (also when it arrives IPv4-mapped),
 * or the /64 of an IPv6 address, since one host on a SLAAC network can use any address in its
 * /64 and would otherwise get a fresh budget per address. Anything else is keyed as given.
 */
export function rateLimitKeyForIp(ip: string): string {
  if (isIPv4(ip)) return `ip:${ip}`;
  const bare = ip.replace(/%.*$/, '');
  if (!isIPv6(bare)) return `ip:${ip}`;
  const groups = expandIPv6(bare);
  if (groups === null) return `ip:${ip}`;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const hi = groups[6] ?? 0;
    const lo = groups[7] ?? 0;
    return `ip:${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return `ip6:${groups
    .slice(0, 4)
    .map((g) => g.toString(16).padStart(4, '0'))
    .join(':')}::/64`;
}

/** Eight 16-bit groups of a textual IPv6 address already accepted by isIPv6. */
function expandIPv6(address: string): number[] | null {
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    // A trailing dotted quad ("::ffff:1.2.3.4") is the last two groups written another way.
    if (!isIPv4(last)) return null;
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string | undefined): number[] =>
    part === undefined || part === '' ? [] : part.split(':').map((g) => parseInt(g, 16));
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}
