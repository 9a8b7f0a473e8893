/** Exponential backoff with full jitter: the n-th retry waits a random time up to min(max, base·2ⁿ). */
export function backoffMs(attempt: number, maxMs: number, random: () => number, baseMs = 1000): number {
  return Math.round(random() * Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 20)));
}
