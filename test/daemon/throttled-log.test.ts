import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { throttledLog, type ThrottledLogOptions } from '../../src/daemon/throttled-log.js';

/** A clock and a timer queue moved by hand, and the lines written. */
function setup(extra: Partial<ThrottledLogOptions> = {}) {
  let t = 1_000_000;
  let timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  );
  const log = throttledLog({
    logger,
    level: 'warn',
    msg: 'relay: too many connections from one address',
    intervalMs: 10_000,
    now: () => t,
    schedule: (fn, ms) => {
      const timer = { at: t + ms, fn, cancelled: false };
      timers.push(timer);
      return () => void (timer.cancelled = true);
    },
    ...extra,
  });
  const advance = (ms: number) => {
    const until = t + ms;
    for (;;) {
      const due = timers.filter((x) => !x.cancelled && x.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      t = due.at;
      timers = timers.filter((x) => x !== due);
      due.fn();
    }
    t = until;
  };
  return { log, lines, advance, pending: () => timers.filter((x) => !x.cancelled).length };
}

describe('throttledLog', () => {
  it('writes the first of a burst, then one summary with the count and a few examples', () => {
    const { log, lines, advance } = setup();
    for (let i = 0; i < 1000; i++) log.hit({ address: `10.0.0.${i % 50}` }, `10.0.0.${i % 50}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'relay: too many connections from one address',
      address: '10.0.0.0',
    });
    advance(10_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      level: 40,
      msg: 'relay: too many connections from one address (repeated; summary)',
      suppressed: 999,
      seconds: 10,
      total: 1000,
    });
    expect(lines[1]?.examples).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']);
    expect(log.total).toBe(1000);
  });

  it('a flood that goes on gets one line per interval, and the count stays exact', () => {
    const { log, lines, advance } = setup();
    for (let s = 0; s < 100; s++) {
      for (let i = 0; i < 50; i++) log.hit({ n: i });
      advance(1000);
    }
    // 100 s of flood: the first line and a summary every 10 s.
    expect(lines.length).toBeLessThanOrEqual(1 + 10);
    expect(lines.length).toBeGreaterThanOrEqual(10);
    const summarised = lines.slice(1).reduce((a, l) => a + (l.suppressed as number), 0);
    expect(1 + summarised).toBe(5000);
    expect(log.total).toBe(5000);
  });

  it('after a quiet interval the next one is written at once, with no empty summary', () => {
    const { log, lines, advance, pending } = setup();
    log.hit({ n: 1 });
    advance(10_000);
    expect(lines).toHaveLength(1);
    expect(pending()).toBe(0);
    advance(60_000);
    log.hit({ n: 2 });
    expect(lines.map((l) => l.n)).toEqual([1, 2]);
  });

  it('close writes what is held back and leaves no timer', () => {
    const { log, lines, pending } = setup();
    log.hit({ n: 1 });
    log.hit({ n: 2 }, 'k');
    log.close();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ suppressed: 1, examples: ['k'], total: 2 });
    expect(pending()).toBe(0);
    log.close();
    expect(lines).toHaveLength(2);
  });
});
