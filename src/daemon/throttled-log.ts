// A log line that someone else decides how often to trigger (a refused connection, a failed
// request): the first of a burst is written as it comes, the rest are only counted, and one summary
// line per interval says how many there were. A flood thus costs a few lines on the SD card, not
// one per attempt, while `total` keeps the exact count for /metrics.

export type LogLevel = 'info' | 'warn' | 'error';

/** The interval the daemon's throttled lines use: a flood costs at most a line a minute each. */
export const REPEAT_LOG_INTERVAL_MS = 60_000;

/** What of a pino (or Fastify) logger this uses. */
export type LevelLogger = Record<LogLevel, (fields: object, msg: string) => void>;

export interface ThrottledLogOptions {
  logger: LevelLogger;
  level: LogLevel;
  msg: string;
  /** At most one line per this many ms after the first of a burst. */
  intervalMs: number;
  /** The summary names up to this many distinct examples of `key` (addresses, routes). */
  maxExamples?: number;
  /** ms; injected for tests. */
  now?: () => number;
  /** Runs `fn` after `ms`; returns a cancel. Injected for tests (default: an unref'd setTimeout). */
  schedule?: (fn: () => void, ms: number) => () => void;
}

export interface ThrottledLog {
  /** Counts one occurrence; writes it with `fields` when no line was written for an interval. */
  hit(fields: Record<string, unknown>, key?: string): void;
  /** Occurrences since the start, logged or not. */
  readonly total: number;
  /** Writes the pending summary now and stops the timer (at shutdown). */
  close(): void;
}

const defaultSchedule = (fn: () => void, ms: number) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export function throttledLog(opts: ThrottledLogOptions): ThrottledLog {
  const now = opts.now ?? Date.now;
  const schedule = opts.schedule ?? defaultSchedule;
  const maxExamples = opts.maxExamples ?? 5;
  let total = 0;
  /** Occurrences not written since the last line. */
  let suppressed = 0;
  let examples = new Set<string>();
  /** When the current window (opened by a written line) started; null: no window open. */
  let windowStart: number | null = null;
  let cancel: (() => void) | null = null;

  const write = (fields: Record<string, unknown>, msg: string) => opts.logger[opts.level](fields, msg);

  const openWindow = () => {
    windowStart = now();
    cancel = schedule(endWindow, opts.intervalMs);
  };

  // At the end of a window: the summary if anything was held back (and a new window after it, so
  // a flood that goes on gets one line per interval); else the next occurrence is written at once.
  const endWindow = () => {
    cancel = null;
    if (suppressed === 0) {
      windowStart = null;
      return;
    }
    flushSummary();
    openWindow();
  };

  const flushSummary = () => {
    const since = windowStart ?? now();
    write(
      {
        suppressed,
        seconds: Math.round((now() - since) / 1000),
        ...(examples.size ? { examples: [...examples] } : {}),
        total,
      },
      `${opts.msg} (repeated; summary)`,
    );
    suppressed = 0;
    examples = new Set();
  };

  return {
    hit(fields, key) {
      total++;
      if (windowStart === null) {
        write(fields, opts.msg);
        openWindow();
        return;
      }
      suppressed++;
      if (key !== undefined && examples.size < maxExamples) examples.add(key);
    },
    get total() {
      return total;
    },
    close() {
      cancel?.();
      cancel = null;
      if (suppressed > 0) flushSummary();
      windowStart = null;
    },
  };
}
