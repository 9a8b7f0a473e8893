import type { BaseLogger } from 'pino';
import type { StreamProfile } from '../../domain/types.js';
import { MediaFormatError } from '../errors.js';
import type { StreamHandle } from '../relay/streams.js';
import { StreamUnavailableError } from '../relay/errors.js';
import { CameraMuxer } from './camera-muxer.js';
import { HlsNotFoundError, HlsUnavailableError, type HlsRefusal } from './errors.js';
import { HlsSessions, type HlsSession } from './sessions.js';

// The HLS side of the relay: viewers' sessions, one CameraMuxer per camera profile that a session
// watches (attached to the relay's shared camera stream like an RTSP viewer), and the requests
// held open for blocking reloads and preload hints. Everything is bounded: muxers, sessions and
// blocked requests by count (refusals are counted), each muxer's media by bytes and seconds, each
// blocked request by time. A muxer is closed once no session has asked for anything for idleS.

/** What a muxer needs of the relay's camera stream: its SDP and a place among its readers. */
export type HlsStreamHandle = Pick<StreamHandle, 'sdp' | 'trackCount' | 'startOfNextReader' | 'attach'>;

export interface HlsServiceOptions {
  acquire(deviceId: string, profile: StreamProfile): Promise<HlsStreamHandle>;
  logger: BaseLogger;
  maxMuxers: number;
  maxSessions: number;
  maxBlockedRequests: number;
  /** PART-TARGET, seconds. */
  partTarget: number;
  /** EXT-X-TARGETDURATION, whole seconds. */
  targetDuration: number;
  maxBytesPerMuxer: number;
  /** A session (and then its muxer) ends this long after its last request. */
  idleS: number;
  /** A session ends this long after its start (rtsp.max_session_s). */
  maxSessionS: number;
  now?: () => number;
  sweepMs?: number;
}

export interface HlsServiceStats {
  muxers: number;
  sessions: number;
  blockedRequests: number;
  /** Media bytes held by all muxers. */
  bytes: number;
  refused: Record<HlsRefusal, number>;
  evictedSegments: number;
}

interface MuxerEntry {
  key: string;
  muxer: CameraMuxer;
  detach: () => void;
}

export class HlsService {
  readonly sessions: HlsSessions;
  private readonly muxers = new Map<string, MuxerEntry>();
  private readonly opening = new Map<string, Promise<MuxerEntry>>();
  private readonly muxerOfSession = new WeakMap<HlsSession, CameraMuxer>();
  private readonly refused: Record<HlsRefusal, number> = {
    too_many_muxers: 0,
    too_many_sessions: 0,
    too_many_blocked: 0,
    stream_unavailable: 0,
    timeout: 0,
  };
  private blocked = 0;
  private closedEvictions = 0;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly opts: HlsServiceOptions) {
    this.now = opts.now ?? Date.now;
    this.sessions = new HlsSessions({
      maxSessions: opts.maxSessions,
      maxSessionS: opts.maxSessionS,
      idleS: opts.idleS,
    });
    this.timer = setInterval(() => this.sweep(), opts.sweepMs ?? 1000);
    this.timer.unref();
  }

  /** How long a blocked request waits at most: three target durations (RFC 8216bis 6.2.5.2). */
  get blockMs(): number {
    return 3 * this.opts.targetDuration * 1000;
  }

  /**
   * Starts a session on a verified ticket: the camera profile's muxer (opened if needed) and its
   * first complete segment, waited for (bounded). HlsUnavailableError when a bound is reached or the camera
   * cannot be had.
   */
  async start(
    ticket: string,
    deviceId: string,
    profile: StreamProfile,
    signal?: AbortSignal,
  ): Promise<{ session: HlsSession; muxer: CameraMuxer }> {
    let started = this.sessions.start(ticket, deviceId, profile, this.now());
    // The ticket's session whose stream ended (the camera changed codecs) is over: start afresh.
    const ended = started && !started.created ? this.muxerOfSession.get(started.session)?.ended : null;
    if (started && ended !== null && ended !== undefined && started.session.inFlight === 0) {
      this.sessions.end(started.session.id);
      started = this.sessions.start(ticket, deviceId, profile, this.now());
    }
    if (!started) throw this.refuse('too_many_sessions', `${this.opts.maxSessions} HLS sessions are open`);
    const { session, created } = started;
    // Not idle while the camera connects and the first segment comes.
    session.inFlight++;
    try {
      const { muxer } = await this.muxerFor(deviceId, profile);
      this.muxerOfSession.set(session, muxer);
      // One complete segment first: a player that ignores parts (ffmpeg) finds nothing to play in a
      // playlist of parts only, and the multivariant playlist's BANDWIDTH then covers a whole GOP.
      await this.block(
        session,
        muxer,
        () => (muxer.init && muxer.window.playlist().segments.length > 0 ? true : undefined),
        signal,
      );
      return { session, muxer };
    } catch (err) {
      // A failed start ends the session it made, unless another request for the ticket waits on it.
      if (created && session.inFlight === 1) this.sessions.end(session.id);
      throw err;
    } finally {
      session.inFlight--;
      session.lastSeen = this.now();
    }
  }

  /** The session under this ticket and id, and its muxer; HlsNotFoundError when unknown, over, or its stream ended. */
  find(ticket: string, sessionId: string): { session: HlsSession; muxer: CameraMuxer } {
    const session = this.sessions.find(ticket, sessionId, this.now());
    const muxer = session && this.muxerOfSession.get(session);
    if (!session || !muxer) throw new HlsNotFoundError('no such HLS session');
    if (muxer.ended !== null) throw new HlsNotFoundError(`the stream ended: ${muxer.ended}`);
    return { session, muxer };
  }

  /**
   * `check()` now, or once a new part makes it defined: a blocking playlist reload or a request for
   * the hinted part. Bounded in number (HlsUnavailableError too_many_blocked) and time (timeout);
   * ends early when `signal` aborts (the client went away). `check` may throw (HlsRequestError).
   */
  async block<T>(
    session: HlsSession,
    muxer: CameraMuxer,
    check: () => T | undefined,
    signal?: AbortSignal,
  ): Promise<T> {
    const ready = check();
    if (ready !== undefined) return ready;
    if (muxer.ended !== null) throw new HlsNotFoundError(`the stream ended: ${muxer.ended}`);
    if (this.blocked >= this.opts.maxBlockedRequests)
      throw this.refuse('too_many_blocked', `${this.opts.maxBlockedRequests} HLS requests are waiting already`);
    this.blocked++;
    session.inFlight++;
    try {
      return await new Promise<T>((resolve, reject) => {
        const finish = (settle: () => void): void => {
          clearTimeout(timer);
          off();
          signal?.removeEventListener('abort', aborted);
          settle();
        };
        const aborted = (): void => finish(() => reject(new HlsNotFoundError('the client went away')));
        const timer = setTimeout(
          () => finish(() => reject(this.refuse('timeout', `nothing new within ${this.blockMs} ms`))),
          this.blockMs,
        );
        const off = muxer.onChange(() => {
          if (muxer.ended !== null)
            return finish(() => reject(new HlsNotFoundError(`the stream ended: ${muxer.ended}`)));
          try {
            const value = check();
            if (value !== undefined) finish(() => resolve(value));
          } catch (err) {
            finish(() => reject(err instanceof Error ? err : new Error(String(err))));
          }
        });
        if (signal?.aborted) aborted();
        else signal?.addEventListener('abort', aborted, { once: true });
      });
    } finally {
      this.blocked--;
      session.inFlight--;
      session.lastSeen = this.now();
    }
  }

  /** Viewers' sessions of the device's streams. */
  viewersOf(deviceId: string): number {
    return this.sessions.viewersOf(deviceId, this.now());
  }

  stats(): HlsServiceStats {
    let bytes = 0;
    let evicted = this.closedEvictions;
    for (const { muxer } of this.muxers.values()) {
      bytes += muxer.bytes;
      evicted += muxer.window.evictedSegments;
    }
    return {
      muxers: this.muxers.size,
      sessions: this.sessions.size,
      blockedRequests: this.blocked,
      bytes,
      refused: { ...this.refused },
      evictedSegments: evicted,
    };
  }

  close(): void {
    clearInterval(this.timer);
    for (const entry of [...this.muxers.values()]) this.closeMuxer(entry, 'the gateway is stopping');
  }

  private refuse(reason: HlsRefusal, message: string): HlsUnavailableError {
    this.refused[reason]++;
    return new HlsUnavailableError(reason, message);
  }

  private muxerFor(deviceId: string, profile: StreamProfile): Promise<MuxerEntry> {
    const key = `${deviceId}/${profile}`;
    const existing = this.muxers.get(key);
    if (existing && existing.muxer.ended === null) return Promise.resolve(existing);
    if (existing) this.closeMuxer(existing, existing.muxer.ended ?? 'ended');
    const pending = this.opening.get(key);
    if (pending) return pending;
    if (this.muxers.size + this.opening.size >= this.opts.maxMuxers)
      return Promise.reject(
        this.refuse('too_many_muxers', `${this.opts.maxMuxers} camera streams are served as HLS already`),
      );
    const opening = this.openMuxer(key, deviceId, profile).finally(() => this.opening.delete(key));
    this.opening.set(key, opening);
    return opening;
  }

  private async openMuxer(key: string, deviceId: string, profile: StreamProfile): Promise<MuxerEntry> {
    try {
      const handle = await this.opts.acquire(deviceId, profile);
      const muxer = new CameraMuxer(handle.sdp, {
        partTarget: this.opts.partTarget,
        targetDuration: this.opts.targetDuration,
        keepSeconds: 3 * this.opts.targetDuration,
        maxBytes: this.opts.maxBytesPerMuxer,
      });
      // In one tick: where the reader's stream starts, then the reader.
      muxer.setStarts(handle.startOfNextReader());
      const entry: MuxerEntry = { key, muxer, detach: handle.attach(muxer) };
      this.muxers.set(key, entry);
      this.opts.logger.info({ stream: key, codecs: muxer.codecs }, 'HLS muxer started');
      return entry;
    } catch (err) {
      if (err instanceof StreamUnavailableError || err instanceof MediaFormatError)
        throw this.refuse('stream_unavailable', err.message);
      throw err;
    }
  }

  private closeMuxer(entry: MuxerEntry, reason: string): void {
    if (this.muxers.get(entry.key) !== entry) return;
    this.muxers.delete(entry.key);
    entry.detach();
    entry.muxer.end(reason);
    this.closedEvictions += entry.muxer.window.evictedSegments;
    this.opts.logger.info({ stream: entry.key, reason }, 'HLS muxer closed');
  }

  /** Drops idle and ended sessions, then the muxers nobody watches or that ended. */
  private sweep(): void {
    const watched = new Set<CameraMuxer>();
    for (const session of this.sessions.sweep(this.now())) {
      const muxer = this.muxerOfSession.get(session);
      if (muxer) watched.add(muxer);
    }
    for (const entry of [...this.muxers.values()]) {
      if (entry.muxer.ended !== null) this.closeMuxer(entry, entry.muxer.ended);
      else if (!watched.has(entry.muxer)) this.closeMuxer(entry, 'no viewer');
    }
  }
}
