// The unread bytes of one TCP stream, kept as the chunks the socket delivered. Reading a range
// that lies inside one chunk returns a view of that chunk instead of a copy, which is the common
// case for RTP frames: a socket read usually holds many whole frames.

export class ByteQueue {
  readonly #empty = Buffer.alloc(0);
  #chunks: Buffer[] = [];
  /** Index of the first live chunk; consumed chunks before it are dropped in batches. */
  #first = 0;
  /** Bytes of `#chunks[#first]` already consumed. */
  #offset = 0;
  #length = 0;
  // Where the last scan stopped, so a scan resumed after more bytes arrive does not walk the
  // chunk list again (byte-at-a-time input would otherwise be quadratic).
  #scanPos = -1;
  #scanChunk = 0;
  #scanOffset = 0;

  get length(): number {
    return this.#length;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  clear(): void {
    this.#chunks = [];
    this.#first = 0;
    this.#offset = 0;
    this.#length = 0;
    this.#scanPos = -1;
  }

  /** The byte at `pos` (< length) from the front; walks chunks, so only for small `pos`. */
  byteAt(pos: number): number {
    let ci = this.#first;
    let off = this.#offset + pos;
    for (;;) {
      const c = this.#chunks[ci];
      if (c === undefined) throw new RangeError('byteAt past the end');
      if (off < c.length) return c[off] ?? 0;
      off -= c.length;
      ci++;
    }
  }

  /**
   * Feeds bytes from position `from` (counted from the front) up to `end` to `visit`, stopping
   * when it returns true. Returns the position of that byte, or -1 when `end` was reached.
   */
  scan(from: number, end: number, visit: (byte: number) => boolean): number {
    let ci: number;
    let off: number;
    if (from === this.#scanPos) {
      ci = this.#scanChunk;
      off = this.#scanOffset;
    } else {
      ci = this.#first;
      off = this.#offset + from;
      while (ci < this.#chunks.length && off >= (this.#chunks[ci]?.length ?? 0)) off -= this.#chunks[ci++]?.length ?? 0;
    }
    let pos = from;
    const stop = Math.min(end, this.#length);
    let found = -1;
    while (pos < stop) {
      const c = this.#chunks[ci];
      if (c === undefined) break;
      if (off >= c.length) {
        ci++;
        off = 0;
        continue;
      }
      const b = c[off] ?? 0;
      off++;
      pos++;
      if (visit(b)) {
        found = pos - 1;
        break;
      }
    }
    this.#scanPos = pos;
    this.#scanChunk = ci;
    this.#scanOffset = off;
    return found;
  }

  /**
   * Removes and returns the first `n` bytes (n <= length). The result is a view of a pushed
   * chunk when the range lies inside one, else a fresh copy.
   */
  take(n: number): Buffer {
    if (n > this.#length) throw new RangeError('take past the end');
    const head = this.#chunks[this.#first];
    let out: Buffer;
    if (n === 0) {
      out = Buffer.alloc(0);
    } else if (head !== undefined && head.length - this.#offset >= n) {
      out = head.subarray(this.#offset, this.#offset + n);
    } else {
      out = Buffer.alloc(n);
      let written = 0;
      let ci = this.#first;
      let off = this.#offset;
      while (written < n) {
        const c = this.#chunks[ci++];
        if (c === undefined) break;
        written += c.copy(out, written, off, Math.min(c.length, off + n - written));
        off = 0;
      }
    }
    this.skip(n);
    return out;
  }

  skip(n: number): void {
    if (n > this.#length) throw new RangeError('skip past the end');
    this.#length -= n;
    this.#scanPos = -1;
    let left = n;
    while (left > 0) {
      const c = this.#chunks[this.#first];
      if (c === undefined) break;
      const avail = c.length - this.#offset;
      if (left < avail) {
        this.#offset += left;
        left = 0;
      } else {
        left -= avail;
        // Let the consumed chunk go now: waiting for the batched compaction below could keep
        // dozens of socket reads alive while a partial frame sits at the end of the queue.
        this.#chunks[this.#first] = this.#empty;
        this.#first++;
        this.#offset = 0;
      }
    }
    if (this.#first === this.#chunks.length) {
      this.#chunks = [];
      this.#first = 0;
    } else if (this.#first >= 64 && this.#first * 2 >= this.#chunks.length) {
      // Drop consumed chunks in batches: shifting one at a time is quadratic for tiny chunks.
      this.#chunks = this.#chunks.slice(this.#first);
      this.#first = 0;
    }
  }
}
