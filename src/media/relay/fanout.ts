import { h264StartsKeyframe, h265StartsKeyframe } from '../h26x.js';
import { senderReportLength } from '../rtcp.js';
import { createRtpHeader, readRtpHeaderInto } from '../rtp.js';

// One camera stream, many readers (LAN viewers and the recorder). The camera session feeds packets
// in once; each is copied once (the upstream hands views into its socket chunks) and the same
// Buffer goes to every reader. The packets since the last keyframe are kept, so a new reader starts
// at once on a keyframe. A reader that falls behind loses packets, never the others' time: past its
// byte budget it skips to the next keyframe (a decodable restart), and one that stays behind too
// long is evicted.

export interface FanOutReader {
  /** Bytes written to this reader and not yet sent (e.g. a socket's writableLength). */
  pendingBytes(): number;
  /** Hands a packet over; the Buffer is shared with other readers and must not be modified. */
  deliver(track: number, packet: Buffer): void;
  /** Hands over a camera's RTCP sender report (shared, must not be modified). */
  deliverRtcp(track: number, report: Buffer): void;
  /** Called once when the reader stays behind for longer than allowed. */
  evict(reason: string): void;
}

export interface FanOutOptions {
  /** Index of the video track whose keyframes start groups of pictures. */
  videoTrack: number;
  codec: 'H264' | 'H265';
  /** H.265 with sprop-max-don-diff > 0: packets carry decoding-order numbers (RFC 7798). */
  donl?: boolean;
  /** Most bytes of the cached group of pictures; a longer GOP is not cached (readers wait). */
  maxGopBytes?: number;
  /** A reader with more than this pending skips ahead to the next keyframe. */
  maxPendingBytes?: number;
  /** A reader still over budget after this long is evicted. */
  maxBehindMs?: number;
  now?: () => number;
}

export interface FanOutStats {
  readers: number;
  gopPackets: number;
  gopBytes: number;
  delivered: number;
  dropped: number;
  evicted: number;
}

/** Where a new reader's stream of one track starts (for RTP-Info in a PLAY answer). */
export interface TrackStart {
  track: number;
  sequence: number;
  rtpTime: number;
}

interface ReaderState {
  reader: FanOutReader;
  /** Waiting for a keyframe: a new reader with no cached GOP, or one that fell behind. */
  waiting: boolean;
  behindSince: number | null;
}

export class FanOut {
  private readonly readers = new Map<FanOutReader, ReaderState>();
  private gop: Array<{ track: number; packet: Buffer }> = [];
  private gopBytes = 0;
  private gopTimestamp: number | null = null;
  /** False after an oversized GOP, until the next keyframe. */
  private gopValid = false;
  /** The camera's latest sender report per track, given to new readers so they can sync at once. */
  private readonly lastReports: Array<Buffer | undefined> = [];
  private readonly header = createRtpHeader();
  private readonly maxGopBytes: number;
  private readonly maxPendingBytes: number;
  private readonly maxBehindMs: number;
  private readonly now: () => number;
  private readonly startsKeyframe: (b: Buffer, o: number, l: number) => boolean;
  readonly stats: FanOutStats = { readers: 0, gopPackets: 0, gopBytes: 0, delivered: 0, dropped: 0, evicted: 0 };

  constructor(private readonly opts: FanOutOptions) {
    this.maxGopBytes = opts.maxGopBytes ?? 8 * 1024 * 1024;
    this.maxPendingBytes = opts.maxPendingBytes ?? 2 * 1024 * 1024;
    this.maxBehindMs = opts.maxBehindMs ?? 10_000;
    this.now = opts.now ?? Date.now;
    const donl = opts.donl === true;
    this.startsKeyframe = opts.codec === 'H265' ? (b, o, l) => h265StartsKeyframe(b, o, l, donl) : h264StartsKeyframe;
  }

  get readerCount(): number {
    return this.readers.size;
  }

  /** Adds a reader; it gets the cached group of pictures at once, or waits for the next keyframe. */
  add(reader: FanOutReader): void {
    const state: ReaderState = { reader, waiting: !this.gopValid, behindSince: null };
    this.readers.set(reader, state);
    this.stats.readers = this.readers.size;
    if (!this.gopValid) return;
    for (let track = 0; track < this.lastReports.length; track++) {
      const report = this.lastReports[track];
      if (report) reader.deliverRtcp(track, report);
    }
    for (const p of this.gop) reader.deliver(p.track, p.packet);
  }

  /**
   * The first packet of each track a reader added now would get (from the cached group of
   * pictures); empty while there is none. Call it just before add(), in the same tick.
   */
  startOfNextReader(): TrackStart[] {
    if (!this.gopValid) return [];
    const starts: TrackStart[] = [];
    for (const p of this.gop) {
      if (starts.some((s) => s.track === p.track)) continue;
      if (!readRtpHeaderInto(p.packet, this.header)) continue;
      starts.push({ track: p.track, sequence: this.header.sequence, rtpTime: this.header.timestamp });
    }
    return starts;
  }

  /** Feeds one RTCP packet from the camera (a view); its sender report, if any, goes to readers. */
  pushRtcp(track: number, view: Buffer): void {
    const length = senderReportLength(view);
    if (length === 0) return;
    const report = Buffer.from(view.subarray(0, length));
    this.lastReports[track] = report;
    for (const state of this.readers.values()) {
      if (!state.waiting) state.reader.deliverRtcp(track, report);
    }
  }

  remove(reader: FanOutReader): void {
    this.readers.delete(reader);
    this.stats.readers = this.readers.size;
  }

  /** Feeds one RTP packet from the camera (a view: it is copied here, once). */
  push(track: number, view: Buffer): void {
    if (!readRtpHeaderInto(view, this.header)) return;
    const keyframe =
      track === this.opts.videoTrack &&
      this.startsKeyframe(view, this.header.payloadOffset, this.header.payloadLength) &&
      // The parameter sets and the first slice of one picture share a timestamp: one group.
      this.header.timestamp !== this.gopTimestamp;
    const packet = Buffer.from(view);
    if (keyframe) {
      this.gop = [];
      this.gopBytes = 0;
      this.gopTimestamp = this.header.timestamp;
      this.gopValid = true;
    }
    if (this.gopValid) {
      this.gop.push({ track, packet });
      this.gopBytes += packet.length;
      if (this.gopBytes > this.maxGopBytes) {
        this.gop = [];
        this.gopBytes = 0;
        this.gopValid = false;
      }
    }
    this.stats.gopPackets = this.gop.length;
    this.stats.gopBytes = this.gopBytes;

    const now = this.now();
    for (const state of this.readers.values()) {
      const behind = state.reader.pendingBytes() > this.maxPendingBytes;
      if (behind) {
        state.behindSince ??= now;
        if (now - state.behindSince > this.maxBehindMs) {
          this.readers.delete(state.reader);
          this.stats.evicted++;
          this.stats.readers = this.readers.size;
          state.reader.evict(`more than ${this.maxPendingBytes} bytes behind for ${this.maxBehindMs} ms`);
          continue;
        }
      } else {
        state.behindSince = null;
      }
      // Behind: skip to the next keyframe; whatever is dropped meanwhile would not decode anyway.
      if (behind || (state.waiting && !keyframe)) {
        state.waiting = true;
        this.stats.dropped++;
        continue;
      }
      state.waiting = false;
      state.reader.deliver(track, packet);
      this.stats.delivered++;
    }
  }

  /** Evicts every reader (the stream cannot go on for them). */
  evictAll(reason: string): void {
    const readers = [...this.readers.values()];
    this.readers.clear();
    this.stats.readers = 0;
    this.stats.evicted += readers.length;
    for (const state of readers) state.reader.evict(reason);
  }

  /** Forgets the cached group (the camera session restarted: old packets would confuse decoders). */
  reset(): void {
    this.gop = [];
    this.gopBytes = 0;
    this.gopTimestamp = null;
    this.gopValid = false;
    this.lastReports.length = 0;
    for (const state of this.readers.values()) state.waiting = true;
  }
}
