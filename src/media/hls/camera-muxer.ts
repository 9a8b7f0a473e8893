import { FragmentMuxer, type FragmentMuxerStats } from '../mux/fragment-muxer.js';
import { keepPart, type NewPart } from '../mux/part-assembler.js';
import type { FanOutReader, TrackStart } from '../relay/fanout.js';
import { LiveWindow } from './live-window.js';

// One camera profile as LL-HLS: the relay's fan-out read as fMP4 parts (mux/fragment-muxer.ts), cut
// to PART-TARGET and segments of at most the target duration, kept in a bounded live window.

export interface CameraMuxerOptions {
  /** PART-TARGET, seconds. */
  partTarget: number;
  /** EXT-X-TARGETDURATION, whole seconds (the longest segment; a segment is a GOP). */
  targetDuration: number;
  /** Seconds of complete segments kept (at least three target durations). */
  keepSeconds: number;
  /** Bytes of media kept at most. */
  maxBytes: number;
  wallClock?: () => number;
}

export type CameraMuxerStats = FragmentMuxerStats;

/** Complete segments kept at most; the byte and seconds bounds usually come first. */
const MAX_SEGMENTS = 120;

export class CameraMuxer implements FanOutReader {
  readonly window: LiveWindow;
  private readonly muxer: FragmentMuxer;
  private readonly listeners = new Set<() => void>();
  private changed = false;

  /**
   * `sdp`: the relay's SDP of the stream (StreamHandle.sdp). Throws MediaFormatError when it has no H.264/H.265 video.
   */
  constructor(sdp: string, options: CameraMuxerOptions) {
    this.window = new LiveWindow({
      partTarget: options.partTarget,
      targetDuration: options.targetDuration,
      maxSegments: MAX_SEGMENTS,
      maxBytes: options.maxBytes,
      keepSeconds: options.keepSeconds,
    });
    this.muxer = new FragmentMuxer(sdp, options, {
      addPart: (part: NewPart) => {
        this.window.addPart(keepPart(part));
        this.changed = true;
      },
      ended: () => this.notify(),
    });
  }

  get stats(): CameraMuxerStats {
    return this.muxer.stats;
  }

  /** The init segment, once the first keyframe came. */
  get init(): Buffer | null {
    return this.muxer.init;
  }

  /** RFC 6381 codecs of the tracks (with the init segment). */
  get codecs(): string[] {
    return this.muxer.codecs;
  }

  get resolution(): { width: number; height: number } | null {
    return this.muxer.resolution;
  }

  /** Why the muxer stopped (the stream was evicted or its input could not be muxed); null while live. */
  get ended(): string | null {
    return this.muxer.ended;
  }

  setStarts(starts: TrackStart[]): void {
    this.muxer.setStarts(starts);
  }

  /** Calls `listener` after each new part and when the muxer ends; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get bytes(): number {
    return this.window.stats.bytes;
  }

  /** Media bits per second over the window (the multivariant playlist's BANDWIDTH). */
  bandwidth(): number {
    const playlist = this.window.playlist();
    const seconds =
      playlist.segments.reduce((sum, s) => sum + s.duration, 0) +
      playlist.openParts.reduce((sum, p) => sum + p.duration, 0);
    return seconds > 0 ? Math.max(1, Math.ceil((this.window.stats.bytes * 8) / seconds)) : 1;
  }

  // --- FanOutReader ---

  pendingBytes(): number {
    return 0;
  }

  deliver(track: number, packet: Buffer): void {
    this.muxer.deliver(track, packet);
    // Listeners hear of new parts once the packet is through, not from inside the assembler.
    if (this.changed) {
      this.changed = false;
      this.notify();
    }
  }

  deliverRtcp(): void {
    // The tracks' start instants come from the fan-out (setStarts); sender reports add nothing here.
  }

  evict(reason: string): void {
    this.muxer.end(reason);
  }

  end(reason: string): void {
    this.muxer.end(reason);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
