import type { LiveDecoderError, LiveFailure } from './errors.js';
import { DEFAULT_JPEG_QUALITY } from './decode.js';
import type { LiveDecoder } from './live-decoder.js';

// The long-lived decoders (live-decoder.ts), one per (codec, width, group: the keyframes' SPS, so
// one size and pixel format; keyframe-picture.ts): at most `max`
// processes, each stopped after idleMs without a picture. A decoder that fails is gone; the next
// one for its key starts after a backoff that doubles with each failure in a row (a decoder that
// cannot work must not become a process started for every request). When no decoder can be had
// (all `max` busy with other sizes, or backing off) decode() answers null and the caller decodes
// the picture by a short-lived ffmpeg run.

export interface LiveDecoderStats {
  /** Processes running now. */
  running: number;
  starts: number;
  /** Pictures decoded by them. */
  pictures: number;
  failures: Record<LiveFailure, number>;
}

export interface LiveDecodersOptions {
  max: number;
  idleMs: number;
  start: (format: 'h264' | 'hevc', width: number | null, quality: number) => LiveDecoder;
  /** First wait after a failure; doubled for each failure in a row, up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  now?: () => number;
}

interface Entry {
  decoder: LiveDecoder;
  idle: NodeJS.Timeout | null;
  lastUsed: number;
}

/** Keys remembered for their backoff at most (the oldest is forgotten first). */
const MAX_BACKOFF_KEYS = 256;

export class LiveDecoders {
  readonly stats: LiveDecoderStats = {
    running: 0,
    starts: 0,
    pictures: 0,
    failures: { timeout: 0, exited: 0, stray_output: 0, bad_output: 0, spawn: 0 },
  };
  private readonly decoders = new Map<string, Entry>();
  private readonly backoff = new Map<string, { failures: number; until: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: LiveDecodersOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The keyframe as a JPEG from the decoder of its kind; null when none can take it now. */
  decode(
    format: 'h264' | 'hevc',
    input: Buffer,
    width: number | null,
    group: string,
    quality = DEFAULT_JPEG_QUALITY,
  ): Promise<Buffer> | null {
    const key = `${format}/${width ?? 'full'}/q${quality}/${group}`;
    const entry = this.decoders.get(key) ?? this.startFor(key, format, width, quality);
    // (A decoder leaves the map the moment it fails or stops: one found here is alive.)
    if (!entry) return null;
    if (entry.idle) clearTimeout(entry.idle);
    entry.idle = null;
    entry.lastUsed = this.now();
    return entry.decoder.decode(input).then((jpeg) => {
      this.stats.pictures++;
      this.backoff.delete(key);
      this.whenIdle(key, entry);
      return jpeg;
    });
  }

  /** Stops every decoder (the gateway is stopping). */
  stop(): void {
    for (const entry of [...this.decoders.values()]) entry.decoder.stop();
  }

  private startFor(key: string, format: 'h264' | 'hevc', width: number | null, quality: number): Entry | null {
    const waiting = this.backoff.get(key);
    if (waiting && this.now() < waiting.until) return null;
    if (this.decoders.size >= this.opts.max && !this.stopLeastRecentIdle()) return null;
    const entry: Entry = { decoder: this.opts.start(format, width, quality), idle: null, lastUsed: this.now() };
    this.stats.starts++;
    this.decoders.set(key, entry);
    this.stats.running = this.decoders.size;
    entry.decoder.onEnd((err) => {
      if (entry.idle) clearTimeout(entry.idle);
      if (this.decoders.get(key) === entry) this.decoders.delete(key);
      this.stats.running = this.decoders.size;
      if (err) this.failed(key, err);
    });
    return entry;
  }

  private failed(key: string, err: LiveDecoderError): void {
    this.stats.failures[err.reason]++;
    const failures = (this.backoff.get(key)?.failures ?? 0) + 1;
    const base = this.opts.backoffMs ?? 1000;
    const wait = Math.min(this.opts.maxBackoffMs ?? 300_000, base * 2 ** Math.min(failures - 1, 20));
    this.backoff.delete(key);
    this.backoff.set(key, { failures, until: this.now() + wait });
    if (this.backoff.size > MAX_BACKOFF_KEYS) this.backoff.delete(this.backoff.keys().next().value as string);
  }

  private whenIdle(key: string, entry: Entry): void {
    if (entry.decoder.load > 0 || !entry.decoder.alive || this.decoders.get(key) !== entry) return;
    entry.idle = setTimeout(() => entry.decoder.stop(), this.opts.idleMs);
    entry.idle.unref();
  }

  /** Makes room for another size: stops the decoder unused longest among those with nothing to do. */
  private stopLeastRecentIdle(): boolean {
    let oldest: Entry | null = null;
    for (const entry of this.decoders.values())
      if (entry.decoder.load === 0 && (!oldest || entry.lastUsed < oldest.lastUsed)) oldest = entry;
    if (!oldest) return false;
    oldest.decoder.stop();
    return true;
  }
}
