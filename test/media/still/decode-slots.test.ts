import { describe, expect, it } from 'vitest';
import { DecodeSlots } from '../../../src/media/still/decode-slots.js';
import { StillBusyError } from '../../../src/media/still/errors.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('DecodeSlots', () => {
  it('runs at most `concurrent` tasks, queues `queued` more, refuses the rest at once', async () => {
    const slots = new DecodeSlots(2, 3);
    let running = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const task = () =>
      new Promise<number>((resolve) => {
        running++;
        most = Math.max(most, running);
        releases.push(() => {
          running--;
          resolve(1);
        });
      });
    const all = Array.from({ length: 8 }, () => slots.run(task).catch((e: unknown) => e));
    await tick();
    expect(slots.stats).toEqual({ running: 2, waiting: 3, refused: 3 });
    // A task started while a slot is being handed over must not make three run at once.
    let extra = 3;
    while (releases.length > 0) {
      releases.shift()!();
      if (extra-- > 0) void slots.run(task).catch(() => undefined);
      await tick();
      expect(running).toBeLessThanOrEqual(2);
    }
    const results = await Promise.all(all);
    expect(results.filter((r) => r instanceof StillBusyError)).toHaveLength(3);
    expect(results.filter((r) => r === 1)).toHaveLength(5);
    expect(most).toBe(2);
  });

  it('a failing task gives its slot back', async () => {
    const slots = new DecodeSlots(1, 0);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(() => Promise.resolve('ok'))).resolves.toBe('ok');
    expect(slots.stats.running).toBe(0);
  });
});
