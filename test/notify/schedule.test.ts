import { describe, expect, it } from 'vitest';
import {
  describeResult,
  failureOf,
  inQuietHours,
  nextStep,
  retryAfterMs,
  wantsAlert,
  type SendResult,
} from '../../src/notify/schedule.js';

const answered = (status: number, retryAfter: string | null = null, text = ''): SendResult => ({
  kind: 'answered',
  status,
  retryAfter,
  text,
});
const now = 1_000_000;
const attempt = { attempt: 0, now, deadline: now + 60_000, hadImage: true, random: () => 0.5, maxBackoffMs: 60_000 };

describe('what an answer means', () => {
  it.each([
    [answered(201), null, { step: 'done' }],
    [answered(200), null, { step: 'done' }],
    [answered(404), 'gone', { step: 'remove_subscription' }],
    [answered(410), 'gone', { step: 'remove_subscription' }],
    [answered(413), 'too_large', { step: 'resend_without_image' }],
    [answered(429, '7'), 'rate_limited', { step: 'retry', at: now + 7000 }],
    [answered(301), 'redirect', { step: 'drop', reason: 'refused' }],
    [answered(307), 'redirect', { step: 'drop', reason: 'refused' }],
    [answered(400), 'rejected', { step: 'drop', reason: 'refused' }],
    [answered(403), 'rejected', { step: 'drop', reason: 'refused' }],
    [answered(500), 'server_error', { step: 'retry', at: now + 1000 + 500 }],
    [answered(503), 'server_error', { step: 'retry', at: now + 1000 + 500 }],
    [{ kind: 'failed', reason: 'unreachable', text: 'x' }, 'unreachable', { step: 'retry', at: now + 1500 }],
    [{ kind: 'failed', reason: 'timeout', text: 'x' }, 'timeout', { step: 'retry', at: now + 1500 }],
    [
      { kind: 'failed', reason: 'forbidden_address', text: 'x' },
      'forbidden_address',
      { step: 'drop', reason: 'refused' },
    ],
  ] as const)('%o: %s', (result, failure, step) => {
    expect(failureOf(result)).toBe(failure);
    expect(nextStep(result, attempt)).toEqual(step);
  });

  it('sends a 413 without a picture at most once: a second one is dropped', () => {
    expect(nextStep(answered(413), { ...attempt, hadImage: false })).toEqual({ step: 'drop', reason: 'refused' });
  });

  it('backs off exponentially with jitter, and drops what cannot be tried again before the deadline', () => {
    const at = (n: number, random: number) =>
      nextStep(answered(502), { ...attempt, attempt: n, random: () => random, deadline: now + 10 * 3600_000 });
    expect(at(0, 1)).toEqual({ step: 'retry', at: now + 2000 });
    expect(at(3, 1)).toEqual({ step: 'retry', at: now + 9000 });
    expect(at(10, 1)).toEqual({ step: 'retry', at: now + 61_000 });
    expect(at(10, 0)).toEqual({ step: 'retry', at: now + 1000 });
    expect(nextStep(answered(502), { ...attempt, deadline: now + 1200 })).toEqual({ step: 'drop', reason: 'expired' });
    expect(nextStep(answered(429, '120'), attempt)).toEqual({ step: 'drop', reason: 'expired' });
  });

  it('honours Retry-After as seconds or a date, and backs off without one', () => {
    expect(retryAfterMs('30', now)).toBe(30_000);
    expect(retryAfterMs(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(retryAfterMs(new Date(now - 5000).toUTCString(), now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
    expect(nextStep(answered(429), attempt)).toEqual({ step: 'retry', at: now + 1500 });
  });

  it('says in words what became of a test notification', () => {
    expect(describeResult(answered(201))).toBe('delivered to the push service (201)');
    expect(describeResult(answered(400, null, ' {"reason":\n "BadJwtToken"} '))).toBe(
      'the push service answered 400: {"reason": "BadJwtToken"}',
    );
    expect(describeResult(answered(410))).toBe(
      'the push service answered 410 (the subscription has expired or was cancelled; it is removed)',
    );
    expect(describeResult(answered(302))).toBe('the push service answered 302 (a redirect, which is not followed)');
    expect(describeResult({ kind: 'failed', reason: 'timeout', text: 'x did not answer within 10000 ms' })).toBe(
      'x did not answer within 10000 ms',
    );
  });
});

describe('which alerts a subscription wants', () => {
  const all = { types: ['human', 'vehicle'] as const, devices: null, quietHours: null };

  it('follows its types and cameras', () => {
    expect(wantsAlert(all, { type: 'human', deviceId: 'a' }, 0)).toBe(true);
    expect(wantsAlert(all, { type: 'motion', deviceId: 'a' }, 0)).toBe(false);
    expect(wantsAlert(all, { type: 'device_offline', deviceId: 'a' }, 0)).toBe(false);
    const some = { ...all, types: ['motion', 'device_offline'] as const, devices: ['a'] };
    expect(wantsAlert(some, { type: 'motion', deviceId: 'a' }, 0)).toBe(true);
    expect(wantsAlert(some, { type: 'device_offline', deviceId: 'a' }, 0)).toBe(true);
    expect(wantsAlert(some, { type: 'motion', deviceId: 'b' }, 0)).toBe(false);
  });

  it('keeps quiet within its quiet hours, across midnight too', () => {
    const night = { start: 22 * 60, end: 7 * 60 };
    expect(inQuietHours(night, 22 * 60)).toBe(true);
    expect(inQuietHours(night, 23 * 60 + 59)).toBe(true);
    expect(inQuietHours(night, 0)).toBe(true);
    expect(inQuietHours(night, 7 * 60 - 1)).toBe(true);
    expect(inQuietHours(night, 7 * 60)).toBe(false);
    expect(inQuietHours(night, 12 * 60)).toBe(false);
    const lunch = { start: 12 * 60, end: 13 * 60 };
    expect(inQuietHours(lunch, 12 * 60 + 30)).toBe(true);
    expect(inQuietHours(lunch, 13 * 60)).toBe(false);
    expect(inQuietHours(lunch, 11 * 60)).toBe(false);
    expect(wantsAlert({ ...all, quietHours: night }, { type: 'human', deviceId: 'a' }, 23 * 60)).toBe(false);
    expect(wantsAlert({ ...all, quietHours: night }, { type: 'human', deviceId: 'a' }, 8 * 60)).toBe(true);
  });
});
