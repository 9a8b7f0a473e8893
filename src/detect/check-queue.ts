/**
 * The bounded queue of pending checks. When a check arrives at a full queue, the oldest pending
 * check of the camera with the most pending checks is dropped (ties: the camera whose oldest check
 * is older), so one camera in constant motion cannot starve the others, and what is dropped is what
 * has waited longest and is least useful for a live alert.
 */
export class CheckQueue<T> {
  private readonly items: { camera: string; item: T }[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`queue capacity must be a whole number >= 1, got ${capacity}`);
  }

  get size(): number {
    return this.items.length;
  }

  /** Adds a check; answers the checks dropped to make room (empty while there is room). */
  push(camera: string, item: T): T[] {
    this.items.push({ camera, item });
    const dropped: T[] = [];
    while (this.items.length > this.capacity) {
      const index = this.items.findIndex((e) => e.camera === this.busiestCamera());
      dropped.push(this.items.splice(index, 1)[0]!.item);
    }
    return dropped;
  }

  shift(): T | undefined {
    return this.items.shift()?.item;
  }

  /** Empties the queue, answering what was in it (oldest first). */
  drain(): T[] {
    return this.items.splice(0).map((e) => e.item);
  }

  /** Pending checks per camera. */
  perCamera(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const e of this.items) counts.set(e.camera, (counts.get(e.camera) ?? 0) + 1);
    return counts;
  }

  private busiestCamera(): string {
    let best = '';
    let most = 0;
    // Map iteration follows first insertion, i.e. the camera whose oldest pending check is oldest first.
    for (const [camera, n] of this.perCamera()) {
      if (n > most) [best, most] = [camera, n];
    }
    return best;
  }
}
