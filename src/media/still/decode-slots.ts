import { StillBusyError } from './errors.js';

// At most `concurrent` decodes at once and `queued` waiting for a slot; past that a request is
// refused at once (a flood of snapshot requests for many cameras must not become a pile of ffmpeg
// processes on a Pi, nor an unbounded queue).

export interface DecodeSlotStats {
  running: number;
  waiting: number;
  refused: number;
}

export class DecodeSlots {
  readonly stats: DecodeSlotStats = { running: 0, waiting: 0, refused: 0 };
  private readonly waiters: Array<() => void> = [];

  constructor(
    private readonly concurrent: number,
    private readonly queued: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.stats.running < this.concurrent) this.stats.running++;
    else {
      if (this.waiters.length >= this.queued) {
        this.stats.refused++;
        throw new StillBusyError(`${this.stats.running} snapshot decodes running and ${this.waiters.length} waiting`);
      }
      // The slot is handed over by the task that ends (running is not lowered in between).
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        this.stats.waiting = this.waiters.length;
      });
    }
    try {
      return await task();
    } finally {
      const next = this.waiters.shift();
      this.stats.waiting = this.waiters.length;
      if (next) next();
      else this.stats.running--;
    }
  }
}
