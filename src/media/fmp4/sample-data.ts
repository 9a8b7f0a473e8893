import { MediaFormatError } from '../errors.js';

// The bytes of a fragment's video samples as its mdat holds them (each NAL unit after its 4-byte
// length), written as each picture is dated rather than when its fragment is cut. A picture's
// buffers are then garbage within a frame or two. Held until the fragment is cut (seconds), they
// would outlive the young generation of the JavaScript heap, to be copied, promoted and collected
// by full collections, many per second per camera. One buffer per track, reused from fragment to
// fragment: it grows to the largest fragment seen, up to its maxBytes.

/** Largest fragment payload by default (a part of seconds of a camera's stream is a few MB at most). */
export const MAX_SAMPLE_DATA_BYTES = 64 * 1024 * 1024;

export interface SampleDataOptions {
  /** First size of the buffer (default 64 KiB); it doubles as needed. */
  capacity?: number;
  /** Most bytes held (default MAX_SAMPLE_DATA_BYTES). */
  maxBytes?: number;
}

export class SampleData {
  private buf: Buffer;
  private used = 0;
  private readonly maxBytes: number;

  constructor(options: SampleDataOptions = {}) {
    this.maxBytes = options.maxBytes ?? MAX_SAMPLE_DATA_BYTES;
    this.buf = Buffer.allocUnsafeSlow(Math.min(options.capacity ?? 64 * 1024, this.maxBytes));
  }

  /** Bytes held. */
  get length(): number {
    return this.used;
  }

  /**
   * Adds one video sample's NAL units, each after its length; returns the sample's size. A sample
   * without NAL units, an empty NAL unit or more than maxBytes in all is a MediaFormatError, and
   * nothing of the sample is kept.
   */
  appendNalus(nalus: readonly Buffer[]): number {
    if (nalus.length === 0) throw new MediaFormatError('bad_sample', 'a video sample without NAL units');
    let size = 0;
    for (const nal of nalus) {
      if (nal.length === 0) throw new MediaFormatError('bad_sample', 'an empty NAL unit');
      size += 4 + nal.length;
    }
    this.reserve(size);
    let at = this.used;
    for (const nal of nalus) {
      this.buf.writeUInt32BE(nal.length, at);
      this.buf.set(nal, at + 4);
      at += 4 + nal.length;
    }
    this.used = at;
    return size;
  }

  /** A view of the bytes held: valid until the next clear() or append. */
  view(): Buffer {
    return this.buf.subarray(0, this.used);
  }

  clear(): void {
    this.used = 0;
  }

  private reserve(n: number): void {
    const needed = this.used + n;
    if (needed <= this.buf.length) return;
    if (needed > this.maxBytes) throw new MediaFormatError('bad_sample', `a fragment over ${this.maxBytes} bytes`);
    const grown = Buffer.allocUnsafeSlow(Math.min(this.maxBytes, Math.max(this.buf.length * 2, needed)));
    this.buf.copy(grown, 0, 0, this.used);
    this.buf = grown;
  }
}
