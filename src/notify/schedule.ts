import { backoffMs } from '../domain/backoff.js';
import type { AlertType } from '../domain/types.js';

// The delivery rules (pure): which alerts a subscription wants, what a push service's answer means
// for the push (sent, tried again, resent without its picture, dropped, the subscription removed),
// and when to try again. docs/notifications.md, "Delivery".

/** What became of one request to a push service (src/notify/sender.ts). */
export type SendResult =
  | { kind: 'answered'; status: number; retryAfter: string | null; text: string }
  | { kind: 'failed'; reason: 'unreachable' | 'timeout' | 'forbidden_address'; text: string };

/** Why an attempt failed, in /metrics (edge_gateway_push_failed_total{reason}). */
export const FAILURE_REASONS = [
  'unreachable',
  'timeout',
  'forbidden_address',
  'redirect',
  'gone',
  'too_large',
  'rate_limited',
  'rejected',
  'server_error',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** Why a push was given up, in /metrics (edge_gateway_push_dropped_total{reason}). */
export const DROP_REASONS = ['expired', 'refused', 'queue_full', 'alert_gone', 'endpoint_not_allowed'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export type NextStep =
  | { step: 'done' }
  /** 404, 410: the subscription is gone for good (RFC 8030 §7.3). */
  | { step: 'remove_subscription' }
  /** 413 of a push with a picture: sent again at once without it. */
  | { step: 'resend_without_image' }
  | { step: 'retry'; at: number }
  | { step: 'drop'; reason: DropReason };

/** What an answer counts as; null for a push delivered. */
export function failureOf(result: SendResult): FailureReason | null {
  if (result.kind === 'failed') return result.reason;
  const s = result.status;
  if (s >= 200 && s < 300) return null;
  if (s >= 300 && s < 400) return 'redirect';
  if (s === 404 || s === 410) return 'gone';
  if (s === 413) return 'too_large';
  if (s === 429) return 'rate_limited';
  if (s >= 500) return 'server_error';
  return 'rejected';
}

export interface Attempt {
  /** Attempts made before this one's answer (0 for the first). */
  attempt: number;
  now: number;
  /** The push's time to live ends here: no attempt after it. */
  deadline: number;
  hadImage: boolean;
  random: () => number;
  /** Longest wait between two attempts. */
  maxBackoffMs: number;
}

/** What to do after an answer. */
export function nextStep(result: SendResult, a: Attempt): NextStep {
  const failure = failureOf(result);
  const retryAt = (at: number): NextStep =>
    at < a.deadline ? { step: 'retry', at } : { step: 'drop', reason: 'expired' };
  const backoff = () => retryAt(a.now + 1000 + backoffMs(a.attempt, a.maxBackoffMs, a.random));
  switch (failure) {
    case null:
      return { step: 'done' };
    case 'gone':
      return { step: 'remove_subscription' };
    case 'too_large':
      return a.hadImage ? { step: 'resend_without_image' } : { step: 'drop', reason: 'refused' };
    case 'rate_limited': {
      const wait = result.kind === 'answered' ? retryAfterMs(result.retryAfter, a.now) : null;
      return wait === null ? backoff() : retryAt(a.now + wait);
    }
    case 'unreachable':
    case 'timeout':
    case 'server_error':
      return backoff();
    case 'forbidden_address':
    case 'redirect':
    case 'rejected':
      return { step: 'drop', reason: 'refused' };
  }
}

/** Retry-After (RFC 9110 §10.2.3): seconds, or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The outcome of a request in words, for the person who pressed "send a test notification". */
export function describeResult(result: SendResult): string {
  if (result.kind === 'failed') return result.text;
  const said = result.text.trim().replace(/\s+/g, ' ').slice(0, 200);
  const words = `the push service answered ${result.status}${said ? `: ${said}` : ''}`;
  switch (failureOf(result)) {
    case null:
      return `delivered to the push service (${result.status})`;
    case 'gone':
      return `${words} (the subscription has expired or was cancelled; it is removed)`;
    case 'redirect':
      return `${words} (a redirect, which is not followed)`;
    default:
      return words;
  }
}

// --- which alerts a subscription wants

/** Quiet hours as minutes of the day; end before start: they run across midnight. */
export interface Quiet {
  start: number;
  end: number;
}

export interface PushWishes {
  types: readonly AlertType[];
  devices: readonly string[] | null;
  quietHours: Quiet | null;
}

/** Whether a minute of the day (0–1439) is in the quiet hours: from start, up to but not including end. */
export function inQuietHours(q: Quiet, minute: number): boolean {
  return q.start <= q.end ? minute >= q.start && minute < q.end : minute >= q.start || minute < q.end;
}

/** The minute of the day of `ms` in the gateway's local time zone. */
export function localMinuteOf(ms: number): number {
  const d = new Date(ms);
  return d.getHours() * 60 + d.getMinutes();
}

/** Whether a subscription wants a push of this alert, raised at local minute `minute`. */
export function wantsAlert(w: PushWishes, alert: { type: AlertType; deviceId: string }, minute: number): boolean {
  if (!w.types.includes(alert.type)) return false;
  if (w.devices !== null && !w.devices.includes(alert.deviceId)) return false;
  return w.quietHours === null || !inQuietHours(w.quietHours, minute);
}
