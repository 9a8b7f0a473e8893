import type { BaseLogger } from 'pino';
import { backoffMs } from '../../domain/backoff.js';
import { formatSdp, mediaCodecs } from '../sdp.js';
import { rewriteForRelay } from './sdp-rewrite.js';
import type { FailureAt } from '../../domain/system-facts.js';
import type { StreamProfile } from '../../domain/types.js';
import { FanOut, type FanOutReader, type TrackStart } from './fanout.js';
import type { TrafficRate } from './traffic.js';
import { UpstreamSession } from './upstream.js';
import { StreamUnavailableError, UpstreamError } from './errors.js';

// One shared camera session per device profile, opened when the first reader comes and closed
// idleCloseS after the last leaves; every reader (viewers, the recorder) shares it through a FanOut.
// When the camera drops, the session is re-opened with backoff and jitter; readers stay attached and
// get the stream again from the next keyframe if the codecs did not change (else they are evicted).

export interface CameraSource {
  url: string;
  username: string | null;
  password: string | null;
}

export interface StreamsOptions {
  /** Where a device profile's stream is (from the store); null when the device has none. */
  locate: (deviceId: string, profile: StreamProfile) => CameraSource | null;
  logger: BaseLogger;
  idleCloseS?: number;
  /** Longest wait between reconnection attempts; short, so viewers get the camera back within seconds. */
  maxBackoffMs?: number;
  random?: () => number;
  /** Per-reader limits of the fan-outs (defaults in fanout.ts); tests make them small. */
  readerLimits?: { maxPendingBytes?: number; maxBehindMs?: number };
  /** Least time between two keyframe requests to one camera stream (default 2000). */
  keyframeRequestIntervalMs?: number;
}

export interface StreamHandle {
  /** The SDP for viewers: controls `trackID=N`, no camera address or credentials. */
  readonly sdp: string;
  readonly trackCount: number;
  /** Where a reader attached now starts, per track (for RTP-Info); call in the same tick as attach. */
  startOfNextReader(): TrackStart[];
  /** Adds a reader; returns the function that removes it. */
  attach(reader: FanOutReader): () => void;
  /** A group of pictures is cached: a reader attached now starts on a keyframe at once. */
  hasCachedKeyframe(): boolean;
  /** The cached keyframe's video packets (FanOut.cachedKeyframePackets); empty when none. */
  cachedKeyframePackets(): Array<{ track: number; packet: Buffer }>;
  /**
   * Asks the camera for a keyframe (a viewer's decoder lost its picture and no cached keyframe can
   * serve it). At most one request per camera stream every keyframeRequestIntervalMs, whatever
   * the number of viewers asking; false when this one was not sent.
   */
  requestKeyframe(): boolean;
}

class Stream implements StreamHandle {
  sdp = '';
  trackCount = 0;
  fanout: FanOut | null = null;
  /** Counts of fan-outs replaced after a codec change. */
  readonly retired = { delivered: 0, dropped: 0, evicted: 0 };
  upstream: UpstreamSession | null = null;
  private codecsKey = '';
  private idleTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private closed = false;
  private videoTrack = 0;
  private lastKeyframeRequest = -Infinity;
  ready: Promise<void>;

  constructor(
    readonly key: string,
    private source: CameraSource,
    /** Where the stream is now: read again at each reconnection, so a camera given a new URL is followed. */
    private readonly locate: () => CameraSource | null,
    private readonly opts: StreamsOptions,
    private readonly onGone: (s: Stream) => void,
    /** The camera session failed: it could not be opened, or it was lost. */
    private readonly onError: (err: Error) => void,
  ) {
    this.ready = this.firstConnect();
  }

  /**
   * The first session is tried up to four times, 0.3, 0.6 and 1.2 s apart, before the viewer is told
   * 503, when the camera dropped the connection or answered 503: cameras sometimes do either while
   * they prepare the stream (gst-rtsp-server answers 503 for 0.6–1.5 s after a client that had the
   * shared stream left, while it tears the stream down). Anything else is told at once: refused
   * credentials or paths will not change, and a camera that is unreachable or does not answer has
   * already had its time (the viewer's player asks again if it wants to).
   */
  private async firstConnect(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.connect(true);
      } catch (err) {
        const kind = err instanceof UpstreamError ? err.kind : null;
        if (attempt >= 4 || this.closed || (kind !== 'closed' && kind !== 'busy')) throw err;
        await new Promise((r) => setTimeout(r, 300 * 2 ** (attempt - 1)));
      }
    }
  }

  private async connect(first: boolean): Promise<void> {
    if (!first) {
      const now = this.locate();
      if (!now) throw new StreamUnavailableError(`${this.key} has no stream now`);
      this.source = now;
    }
    // onClose can fire during open() (a failed handshake), before `up` is assigned.
    let opened: UpstreamSession | null = null;
    const up = await UpstreamSession.open({
      ...this.source,
      logger: this.opts.logger,
      onPacket: (track, packet) => this.fanout?.push(track, packet),
      onRtcp: (track, packet) => this.fanout?.pushRtcp(track, packet),
      onClose: (err) => {
        if (opened) this.lost(opened, err);
      },
    });
    opened = up;
    if (this.closed) {
      up.close();
      return;
    }
    const sdp = up.sdp;
    if (!sdp) throw new StreamUnavailableError('camera sent no SDP');
    const codecs = mediaCodecs(sdp);
    const key = JSON.stringify(codecs.map((c) => [c.media, c.encoding, c.clockRate, c.channels]));
    const video = codecs.find((c) => c.media === 'video' && (c.encoding === 'H264' || c.encoding === 'H265'));
    if (!video) {
      up.close();
      throw new StreamUnavailableError('the camera stream has no H.264 or H.265 video');
    }
    if (!first && key !== this.codecsKey && this.fanout) {
      // New codec parameters: viewers' decoders cannot follow; they are disconnected, and get the
      // new SDP when they come back.
      const old = this.fanout;
      old.evictAll('the camera changed its codec parameters');
      this.retired.delivered += old.stats.delivered;
      this.retired.dropped += old.stats.dropped;
      this.retired.evicted += old.stats.evicted;
      this.fanout = null;
    }
    this.codecsKey = key;
    this.sdp = formatSdp(rewriteForRelay(sdp, { trackControls: (i) => `trackID=${i}` }));
    this.trackCount = sdp.media.length;
    this.videoTrack = video.index;
    const donl = video.encoding === 'H265' && Number(video.fmtp.get('sprop-max-don-diff') ?? '0') > 0;
    const clockRates = sdp.media.map((_, index) => codecs.find((c) => c.index === index)?.clockRate ?? null);
    this.fanout ??= new FanOut({
      ...this.opts.readerLimits,
      videoTrack: video.index,
      codec: video.encoding as 'H264' | 'H265',
      donl,
      clockRates,
    });
    this.fanout.reset();
    this.fanout.setPlayClocks(up.playRtpTimes);
    this.upstream = up;
    this.attempt = 0;
    this.opts.logger.info({ stream: this.key, tracks: this.trackCount }, 'camera stream open');
  }

  private lost(up: UpstreamSession, err: UpstreamError): void {
    if (this.upstream !== up || this.closed) return;
    this.upstream = null;
    this.opts.logger.warn({ stream: this.key, err: err.message }, 'camera stream lost; reconnecting');
    this.onError(err);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    const wait = Math.max(
      250,
      backoffMs(this.attempt++, this.opts.maxBackoffMs ?? 5000, this.opts.random ?? Math.random),
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.closed) return;
      this.connect(false).catch((e: Error) => {
        this.opts.logger.debug({ stream: this.key, err: e.message }, 'camera stream retry failed');
        this.onError(e);
        if (!this.closed) this.scheduleRetry();
      });
    }, wait);
    this.retryTimer.unref();
  }

  /**
   * Another stream now stands for this one (the camera was given a new URL): its readers are told
   * to go, since their decoders were set up for what the old one sent, and the session ends; the
   * next reader opens the new one.
   */
  replace(reason: string): void {
    this.fanout?.evictAll(reason);
    this.close();
  }

  startOfNextReader(): TrackStart[] {
    return this.fanout?.startOfNextReader() ?? [];
  }

  attach(reader: FanOutReader): () => void {
    const fanout = this.fanout;
    if (!fanout) throw new StreamUnavailableError('stream not ready');
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    fanout.add(reader);
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      fanout.remove(reader);
      if (fanout.readerCount === 0) this.armIdleClose();
    };
  }

  hasCachedKeyframe(): boolean {
    return this.fanout?.hasCachedKeyframe ?? false;
  }

  cachedKeyframePackets(): Array<{ track: number; packet: Buffer }> {
    return this.fanout?.cachedKeyframePackets() ?? [];
  }

  requestKeyframe(): boolean {
    const now = Date.now();
    const ssrc = this.fanout?.videoSsrc ?? null;
    if (
      !this.upstream ||
      ssrc === null ||
      now - this.lastKeyframeRequest < (this.opts.keyframeRequestIntervalMs ?? 2000)
    )
      return false;
    this.lastKeyframeRequest = now;
    return this.upstream.requestKeyframe(this.videoTrack, ssrc);
  }

  armIdleClose(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(), (this.opts.idleCloseS ?? 10) * 1000);
    this.idleTimer.unref();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.upstream?.close();
    this.upstream = null;
    this.opts.logger.info({ stream: this.key }, 'camera stream closed');
    this.onGone(this);
  }
}

export interface RelayStreamsStats {
  cameraSessions: number;
  readers: number;
  delivered: number;
  dropped: number;
  evicted: number;
}

function addFanOutStats(into: RelayStreamsStats, stream: Stream): void {
  const live = stream.fanout?.stats;
  into.readers += live?.readers ?? 0;
  into.delivered += (live?.delivered ?? 0) + stream.retired.delivered;
  into.dropped += (live?.dropped ?? 0) + stream.retired.dropped;
  into.evicted += (live?.evicted ?? 0) + stream.retired.evicted;
}

export class RelayStreams {
  private readonly streams = new Map<string, Stream>();
  /** Each device's last stream failure (one entry per camera that had a stream, until it is removed). */
  private readonly lastErrors = new Map<string, FailureAt>();
  /** Packet counts of streams already closed, so the totals only grow (Prometheus counters). */
  private readonly closedTotals = { delivered: 0, dropped: 0, evicted: 0 };

  constructor(private readonly opts: StreamsOptions) {}

  /** The shared stream of a device profile, opening the camera session if needed. */
  async acquire(deviceId: string, profile: StreamProfile): Promise<StreamHandle> {
    const key = `${deviceId}/${profile}`;
    let stream = this.streams.get(key);
    if (!stream) {
      const source = this.opts.locate(deviceId, profile);
      if (!source) throw new StreamUnavailableError(`device ${deviceId} has no ${profile} stream`);
      const failed = (err: Error) =>
        this.lastErrors.set(deviceId, { message: `${profile} stream: ${err.message}`, at: Date.now() });
      stream = new Stream(
        key,
        source,
        () => this.opts.locate(deviceId, profile),
        this.opts,
        (s) => {
          if (this.streams.get(s.key) !== s) return;
          this.streams.delete(s.key);
          const gone = { cameraSessions: 0, readers: 0, delivered: 0, dropped: 0, evicted: 0 };
          addFanOutStats(gone, s);
          this.closedTotals.delivered += gone.delivered;
          this.closedTotals.dropped += gone.dropped;
          this.closedTotals.evicted += gone.evicted;
        },
        failed,
      );
      this.streams.set(key, stream);
      stream.ready.catch((err: Error) => {
        this.opts.logger.warn({ stream: key, err: err.message }, 'camera stream could not be opened');
        failed(err);
        stream?.close();
      });
    }
    try {
      await stream.ready;
    } catch (err) {
      throw err instanceof StreamUnavailableError ? err : new StreamUnavailableError((err as Error).message);
    }
    // Nobody may attach after all (the DESCRIBE was the only request): close when idle.
    if (stream.fanout?.readerCount === 0) stream.armIdleClose();
    return stream;
  }

  /**
   * The camera's address changed (a plain RTSP camera given a new URL): its open sessions end and
   * their readers are evicted (the recorder and viewers come back, and get the new stream).
   */
  reopen(deviceId: string): void {
    for (const [key, stream] of [...this.streams])
      if (key.startsWith(`${deviceId}/`)) stream.replace("the camera's stream URL changed");
  }

  /** The shared stream of a device profile if it is open now (never opens one). */
  peek(deviceId: string, profile: StreamProfile): StreamHandle | null {
    const stream = this.streams.get(`${deviceId}/${profile}`);
    return stream?.upstream ? stream : null;
  }

  /**
   * What the camera sends on the device profile's session over the last few seconds
   * (TrafficMeter); null when no session is open, or it opened too recently to tell.
   */
  traffic(deviceId: string, profile: StreamProfile, now = Date.now()): TrafficRate | null {
    const stream = this.streams.get(`${deviceId}/${profile}`);
    return stream?.upstream ? (stream.fanout?.traffic.rate(now) ?? null) : null;
  }

  /** The device was removed: its last failure goes (its sessions ended when it went offline). */
  forget(deviceId: string): void {
    this.lastErrors.delete(deviceId);
  }

  /** Why the device's stream last failed (opening or lost), whatever its state now; null: never. */
  lastError(deviceId: string): FailureAt | null {
    return this.lastErrors.get(deviceId) ?? null;
  }

  /** Open camera sessions, for /metrics and tests. */
  get openCount(): number {
    return [...this.streams.values()].filter((s) => s.upstream !== null).length;
  }

  /** Readers and packet counts over all streams, including those closed since the start. */
  stats(): RelayStreamsStats {
    const now = { ...this.closedTotals, cameraSessions: this.openCount, readers: 0 };
    for (const s of this.streams.values()) addFanOutStats(now, s);
    return now;
  }

  close(): void {
    for (const s of [...this.streams.values()]) s.close();
  }
}
