// What a started gateway must undo when it stops, newest first: the API stops taking requests
// before the parts it calls close, and the store closes last. A part's constructor registers its
// own close as soon as it exists, so a start that fails half-way undoes exactly what it did.

export type Undo = () => unknown;

export class ShutdownStack {
  private readonly undos: Undo[] = [];

  /** Runs `undo` at shutdown, before everything deferred earlier. */
  defer(undo: Undo): void {
    this.undos.unshift(undo);
  }

  /** Every undo in turn; the first failure stops the run and is thrown. */
  async run(): Promise<void> {
    for (const undo of this.undos.splice(0)) await undo();
  }

  /** Every undo in turn, failures ignored (a start that failed: its own error is the one to tell). */
  async runQuietly(): Promise<void> {
    for (const undo of this.undos.splice(0))
      await Promise.resolve()
        .then(undo)
        .catch(() => undefined);
  }
}
