// One kind of news and who listens to it: subscribe while shown, unsubscribe when gone.

/** Subscribes `listener`; returns the unsubscribe. */
export type Subscribe<T> = (listener: (value: T) => void) => () => void;

export class Hub<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** A property, not a method: handed down on its own (as a Subscribe) it keeps its hub. */
  readonly on: Subscribe<T> = (listener) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  emit(value: T): void {
    for (const listener of this.listeners) listener(value);
  }
}
