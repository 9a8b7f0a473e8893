import { h264StartsKeyframe, h265StartsKeyframe } from '../h26x.js';
import { senderReportLength } from '../rtcp.js';
import { roll, rtpTimeAt, secondsAt, senderReportAnchor, type ClockAnchor } from '../rtp-clock.js';
import { createRtpHeader, readRtpHeaderInto } from '../rtp.js';
import { TrafficMeter } from './traffic.js';

// One camera stream, many readers (LAN viewers and the recorder). The camera session feeds packets
// in once and the same Buffer goes to every reader: the upstream hands views into its socket reads,
// each read its own memory that nothing writes again, so a packet is never copied here (a copy per
// packet would be a new ArrayBuffer every few packets, and V8 runs a full collection about every
// second for that external memory with 16 cameras). The packets since the last keyframe are kept,
// so a new reader starts at once on a keyframe. A reader that falls behind loses packets, never the
// others' time: past its byte budget it skips to the next keyframe (a decodable restart), and one
// that stays behind too long is evicted.

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
  /** RTP clock rate of each track (from the SDP; null when unknown), for RTP-Info across tracks. */
  clockRates?: ReadonlyArray<number | null>;
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

/**
 * Where a new reader's stream of one track starts (for RTP-Info in a PLAY answer): the sequence
 * number of its first packet (unknown while nothing is cached), and the track's RTP time at the
 * instant the reader's stream starts, the same instant for every track where the camera's clocks
 * are known (see rtp-clock.ts).
 */
export interface TrackStart {
  track: number;
  sequence?: number;
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
  /** Each track's clock from its latest sender report (NTP timeline). */
  private srClocks: Array<ClockAnchor | undefined> = [];
  /** Each track's clock from the RTP-Info of the camera's PLAY answer (all at one instant). */
  private playClocks: ClockAnchor[] | null = null;
  private lastVideoRtpTime: number | null = null;
  private lastVideoSsrc: number | null = null;
  private readonly header = createRtpHeader();
  private readonly maxGopBytes: number;
  private readonly maxPendingBytes: number;
  private readonly maxBehindMs: number;
  private readonly now: () => number;
  private readonly startsKeyframe: (b: Buffer, o: number, l: number) => boolean;
  readonly stats: FanOutStats = { readers: 0, gopPackets: 0, gopBytes: 0, delivered: 0, dropped: 0, evicted: 0 };
  /** Bytes and pictures the camera sent, per second (the System screen's bitrate and frame rate). */
  readonly traffic = new TrafficMeter();

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

  /** A group of pictures is cached: a reader added now starts at once on its keyframe. */
  get hasCachedKeyframe(): boolean {
    return this.gopValid;
  }

  /**
   * The cached keyframe's video packets (those sharing its RTP timestamp, in arrival order), for a
   * still picture; empty when no group of pictures is cached. The Buffers are shared: read only.
   */
  cachedKeyframePackets(): Array<{ track: number; packet: Buffer }> {
    const out: Array<{ track: number; packet: Buffer }> = [];
    if (!this.gopValid) return out;
    for (const p of this.gop) {
      if (p.track !== this.opts.videoTrack) continue;
      if (!readRtpHeaderInto(p.packet, this.header) || this.header.timestamp !== this.gopTimestamp) break;
      out.push(p);
    }
    return out;
  }

  /** SSRC of the camera's video (for a keyframe request to it); null before its first packet. */
  get videoSsrc(): number | null {
    return this.lastVideoSsrc;
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
   * Where each track of a reader added now starts (see TrackStart). Call it just before add(), in
   * the same tick. Without known camera clocks, each track's RTP time is that of its first cached
   * packet (tracks then start at different instants, as before the clocks are known).
   */
  startOfNextReader(): TrackStart[] {
    const firsts: TrackStart[] = [];
    if (this.gopValid) {
      for (const p of this.gop) {
        if (firsts.some((s) => s.track === p.track)) continue;
        if (!readRtpHeaderInto(p.packet, this.header)) continue;
        firsts.push({ track: p.track, sequence: this.header.sequence, rtpTime: this.header.timestamp });
      }
    }
    const clocks = this.knownClocks();
    const videoClock = clocks?.[this.opts.videoTrack];
    if (!clocks || !videoClock) return firsts;
    // The reader's stream starts at the cached keyframe, or (nothing cached) at the latest picture,
    // or (none yet) at the clocks' own instant.
    const instant = secondsAt(
      videoClock,
      (this.gopValid ? this.gopTimestamp : this.lastVideoRtpTime) ?? videoClock.rtpTime,
    );
    const starts: TrackStart[] = [];
    for (let track = 0; track < clocks.length; track++) {
      const first = firsts.find((s) => s.track === track);
      const clock = clocks[track];
      if (!clock) {
        if (first) starts.push(first);
        continue;
      }
      starts.push({ track, ...(first ? { sequence: first.sequence } : {}), rtpTime: rtpTimeAt(clock, instant) });
    }
    return starts;
  }

  /**
   * The camera's RTP-Info from its PLAY answer: each track's RTP time at one instant (undefined
   * where it gave none). Used for RTP-Info until sender reports for every track have come.
   */
  setPlayClocks(rtpTimes: ReadonlyArray<number | undefined>): void {
    const rates = this.opts.clockRates ?? [];
    if (rates.length === 0 || rtpTimes.length !== rates.length) return;
    const clocks: ClockAnchor[] = [];
    for (const [track, rate] of rates.entries()) {
      const rtpTime = rtpTimes[track];
      if (!rate || rtpTime === undefined) return;
      clocks.push({ rtpTime, seconds: 0, rate });
    }
    this.playClocks = clocks;
  }

  /** Sender-report clocks once every track has one, else those of the PLAY answer, else null. */
  private knownClocks(): ReadonlyArray<ClockAnchor | undefined> | null {
    const rates = this.opts.clockRates ?? [];
    if (rates.length > 0 && rates.every((rate, track) => !rate || this.srClocks[track] !== undefined)) {
      const clocks = rates.map((_, track) => this.srClocks[track]);
      if (clocks[this.opts.videoTrack]) return clocks;
    }
    return this.playClocks;
  }

  /** Feeds one RTCP packet from the camera (a view); its sender report, if any, goes to readers. */
  pushRtcp(track: number, view: Buffer): void {
    const length = senderReportLength(view);
    if (length === 0) return;
    const report = Buffer.from(view.subarray(0, length));
    this.lastReports[track] = report;
    const rate = this.opts.clockRates?.[track];
    if (rate) this.srClocks[track] = senderReportAnchor(report, rate);
    for (const state of this.readers.values()) {
      if (!state.waiting) state.reader.deliverRtcp(track, report);
    }
  }

  remove(reader: FanOutReader): void {
    this.readers.delete(reader);
    this.stats.readers = this.readers.size;
  }

  /**
   * Feeds one RTP packet from the camera. It is kept as given (in the cached group of pictures) and
   * shared with every reader: its bytes must never change afterwards.
   */
  push(track: number, packet: Buffer): void {
    if (!readRtpHeaderInto(packet, this.header)) return;
    const rtpTime = this.header.timestamp;
    const now = this.now();
    let newPicture = false;
    if (track === this.opts.videoTrack) {
      // The packets of one picture share its RTP timestamp; the first with a new one starts the next.
      newPicture = rtpTime !== this.lastVideoRtpTime;
      this.lastVideoRtpTime = rtpTime;
      this.lastVideoSsrc = this.header.ssrc;
    }
    this.traffic.count(packet.length, newPicture, now);
    const playClock = this.playClocks?.[track];
    if (playClock) roll(playClock, rtpTime);
    const srClock = this.srClocks[track];
    if (srClock) roll(srClock, rtpTime);
    const keyframe =
      track === this.opts.videoTrack &&
      this.startsKeyframe(packet, this.header.payloadOffset, this.header.payloadLength) &&
      // The parameter sets and the first slice of one picture share a timestamp: one group.
      this.header.timestamp !== this.gopTimestamp;
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
    this.srClocks = [];
    this.playClocks = null;
    this.lastVideoRtpTime = null;
    for (const state of this.readers.values()) state.waiting = true;
  }
}
