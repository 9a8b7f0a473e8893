import { Readable } from 'node:stream';
import { hasScope } from '../../auth/scope-claim.js';
import type { MintPlayback } from '../../domain/present.js';
import { STREAM_EVENT_TYPES, type EventWindow, type StoredEvent, type StreamEventType } from '../../store/store.js';
import { EventStreamFullError } from './errors.js';
import {
  EVENT_SCOPES,
  formatEnd,
  formatEvent,
  formatReset,
  HEARTBEAT,
  OPENING,
  type EndReason,
  type StreamStart,
} from './wire.js';

/** What the hub reads of the store: the event log (src/store/event-log.ts). */
export interface EventLogReader {
  eventsAfter(afterSeq: number, limit: number): StoredEvent[];
  eventWindow(): EventWindow;
}

export interface EventHubOptions {
  events: EventLogReader;
  maxSubscribers: number;
  heartbeatMs: number;
  /** Bytes a subscriber may have waiting (in its stream and its response) before it is cut off. */
  maxQueueBytes: number;
  /** Playback tickets for recording.created (its playback_url, as GET answers); absent: null. */
  mintPlayback?: MintPlayback;
  /** How often the streams' tokens are looked at for revocation (Subscription.revoked). */
  revocationCheckMs: number;
}

/** Why a stream ended: the gateway's reasons, or the client went away. */
export type DisconnectReason = EndReason | 'slow_consumer' | 'client_closed';

export interface EventHubStats {
  subscribers: number;
  /** Events written to streams (one per subscriber an event went to; heartbeats not counted). */
  sent: number;
  /** Streams opened past max_subscribers, answered 503. */
  refused: number;
  disconnects: Readonly<Record<DisconnectReason, number>>;
}

export interface Subscription {
  /** The token's scopes: only the events whose record the token may GET are sent. */
  scopes: ReadonlySet<string>;
  start: StreamStart;
  /** ms: the stream ends then (the client reconnects with a fresh token). */
  expiresAt: number;
  /**
   * Whether the token's grant has been revoked since (sign-out, a removed user or client, a
   * lowered role): the stream then ends. Asked of every stream every revocationCheckMs, never per
   * event. Absent: a token nothing can revoke.
   */
  revoked?: () => boolean;
  /** Bytes the response holds that the client has not taken yet. */
  unsent: () => number;
  /** Closes the connection at once, with whatever it held (a slow client's backlog). */
  abort: () => void;
  /** Settles when the response is over (all of it written, or the connection gone). */
  done: Promise<unknown>;
}

interface Subscriber {
  readonly stream: Readable;
  readonly types: ReadonlySet<StreamEventType>;
  /** The last event this subscriber has been given or passed over. */
  cursor: number;
  /** Given new events by the hub as they come; false while it reads older ones from the store. */
  live: boolean;
  readonly unsent: () => number;
  readonly abort: () => void;
  readonly done: Promise<unknown>;
  readonly revoked: (() => boolean) | null;
  expiry: NodeJS.Timeout | null;
}

// Events read from the store at a time, by the hub and by a subscriber catching up.
const BATCH = 128;
// setTimeout's longest delay; a token valid for longer is looked at again then.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The open event streams: each new event in the store is formatted once and written to every live
 * subscriber whose token may see it; a resuming subscriber first reads what it missed from the
 * store, as fast as its client takes it. Every stream is bounded: a client that does not keep up
 * is cut off (it resumes with Last-Event-ID), a token's expiry ends its stream, and close() ends
 * them all so the server's close does not wait on them.
 */
export class EventHub {
  /** The newest event handed to the live subscribers. */
  private seq: number;
  private readonly subscribers = new Set<Subscriber>();
  private pumpScheduled = false;
  /** Events read from the store that the live subscribers have not been given yet (a burst's next ones). */
  private unsent: StoredEvent[] = [];
  private closed = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly revocationCheck: NodeJS.Timeout;
  private sent = 0;
  private refused = 0;
  private readonly disconnects: Record<DisconnectReason, number> = {
    slow_consumer: 0,
    token_expired: 0,
    token_revoked: 0,
    gateway_stopping: 0,
    client_closed: 0,
  };

  constructor(private readonly opts: EventHubOptions) {
    this.seq = opts.events.eventWindow().latest;
    this.heartbeat = setInterval(() => this.beat(), opts.heartbeatMs);
    this.heartbeat.unref();
    this.revocationCheck = setInterval(() => this.endRevoked(), opts.revocationCheckMs);
    this.revocationCheck.unref();
  }

  /** The store wrote an event (maybe inside its transaction): read it once the transaction is over. */
  notify(): void {
    if (this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    setImmediate(() => this.pump());
  }

  /** Where new streams start from, when they do not resume. */
  window(): EventWindow {
    return this.opts.events.eventWindow();
  }

  /** A new stream; EventStreamFullError past max_subscribers. */
  subscribe(s: Subscription): Readable {
    if (this.closed || this.subscribers.size >= this.opts.maxSubscribers) {
      this.refused++;
      throw new EventStreamFullError(this.opts.maxSubscribers);
    }
    const types = new Set(STREAM_EVENT_TYPES.filter((type) => hasScope(s.scopes, EVENT_SCOPES[type])));
    const sub: Subscriber = {
      stream: new Readable({ read: () => this.catchUp(sub) }),
      types,
      cursor: s.start.id,
      live: false,
      unsent: s.unsent,
      abort: s.abort,
      done: s.done,
      revoked: s.revoked ?? null,
      expiry: null,
    };
    this.subscribers.add(sub);
    sub.stream.once('close', () => this.remove(sub, 'client_closed'));
    sub.stream.push(OPENING);
    if (s.start.kind === 'reset') sub.stream.push(formatReset(s.start.reason, s.start.id));
    this.expireAt(sub, s.expiresAt);
    this.catchUp(sub);
    return sub.stream;
  }

  stats(): EventHubStats {
    return {
      subscribers: this.subscribers.size,
      sent: this.sent,
      refused: this.refused,
      disconnects: { ...this.disconnects },
    };
  }

  /**
   * Ends every stream (the gateway is stopping) and takes no more; resolves once their responses
   * are written out, or after `graceMs`, when those still writing (to a client that does not read)
   * are cut off: the server's close then has no stream to wait for.
   */
  async close(graceMs = 1000): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    clearInterval(this.revocationCheck);
    const ending = [...this.subscribers];
    for (const sub of ending) this.end(sub, 'gateway_stopping');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const outcome = await Promise.race([Promise.all(ending.map((sub) => sub.done)), late]);
    clearTimeout(timer);
    if (outcome === 'late') for (const sub of ending) sub.abort();
  }

  /**
   * New events from the store to every live subscriber, each formatted once; a bounded batch per
   * turn of the event loop, so that the sockets drain between the batches of a burst.
   */
  private pump(): void {
    this.pumpScheduled = false;
    if (this.closed) return;
    if (this.unsent.length === 0) {
      this.unsent = this.opts.events.eventsAfter(this.seq, BATCH);
      const first = this.unsent[0];
      if (first !== undefined && first.seq !== this.seq + 1) {
        // A burst larger than the window was pruned before it could be sent.
        const newest = this.opts.events.eventWindow().latest;
        for (const sub of this.subscribers) {
          if (sub.live) this.reset(sub, newest);
        }
        this.seq = newest;
        this.unsent = [];
        this.notify();
        return;
      }
    }
    // Half the backlog a subscriber may have, at most, per turn: a client that keeps up is never cut off by a burst.
    let bytes = 0;
    let taken = 0;
    while (taken < this.unsent.length && bytes < this.opts.maxQueueBytes / 2) {
      const event = this.unsent[taken++]!;
      let text: string | null = null;
      for (const sub of this.subscribers) {
        if (!sub.live || event.seq <= sub.cursor) continue;
        sub.cursor = event.seq;
        if (!sub.types.has(event.type)) continue;
        text ??= formatEvent(event, this.opts.mintPlayback);
        this.write(sub, text);
      }
      this.seq = event.seq;
      bytes += text?.length ?? 0;
    }
    const read = this.unsent.length;
    this.unsent = this.unsent.slice(taken);
    if (this.unsent.length > 0 || read === BATCH) this.notify();
  }

  /**
   * Gives a subscriber that is behind the events it missed, from the store, while its stream takes
   * more (called again by the stream when it wants more); then it is live.
   */
  private catchUp(sub: Subscriber): void {
    while (!sub.live && this.subscribers.has(sub)) {
      if (sub.cursor >= this.seq) {
        sub.live = true;
        return;
      }
      const batch = this.opts.events.eventsAfter(sub.cursor, BATCH);
      const first = batch[0];
      // Ids have no gaps: a later first one means the events after the cursor were pruned meanwhile.
      if (first === undefined || first.seq !== sub.cursor + 1) {
        this.reset(sub, this.seq);
        continue;
      }
      let wantsMore = true;
      for (const event of batch) {
        if (event.seq > this.seq) break;
        sub.cursor = event.seq;
        if (!sub.types.has(event.type)) continue;
        this.sent++;
        wantsMore = sub.stream.push(formatEvent(event, this.opts.mintPlayback));
      }
      if (!wantsMore) return;
    }
  }

  /** The events after the subscriber's cursor were pruned unsent: it is told so, and goes on from `newest`. */
  private reset(sub: Subscriber, newest: number): void {
    sub.cursor = newest;
    this.push(sub, formatReset('expired', newest));
  }

  private write(sub: Subscriber, text: string): void {
    if (this.push(sub, text)) this.sent++;
  }

  /** Ends the streams whose token's grant was revoked: one round over the open streams. */
  private endRevoked(): void {
    for (const sub of this.subscribers) {
      if (sub.revoked?.() === true) this.end(sub, 'token_revoked');
    }
  }

  private beat(): void {
    for (const sub of this.subscribers) this.push(sub, HEARTBEAT);
  }

  /**
   * Queues text for a live subscriber, unless what it already has waiting passes max_queue_bytes: a
   * client that does not keep up is then cut off rather than held in memory without bound.
   */
  private push(sub: Subscriber, text: string): boolean {
    if (sub.stream.readableLength + sub.unsent() > this.opts.maxQueueBytes) {
      this.remove(sub, 'slow_consumer');
      sub.abort();
      sub.stream.destroy();
      return false;
    }
    sub.stream.push(text);
    return true;
  }

  private expireAt(sub: Subscriber, expiresAt: number): void {
    const delay = expiresAt - Date.now();
    if (delay <= 0) {
      this.end(sub, 'token_expired');
      return;
    }
    sub.expiry = setTimeout(() => this.expireAt(sub, expiresAt), Math.min(delay, MAX_TIMER_MS));
    sub.expiry.unref();
  }

  /** Ends a stream after what it holds, telling the client why. */
  private end(sub: Subscriber, reason: EndReason): void {
    if (!this.remove(sub, reason)) return;
    sub.stream.push(formatEnd(reason));
    sub.stream.push(null);
  }

  private remove(sub: Subscriber, reason: DisconnectReason): boolean {
    if (!this.subscribers.delete(sub)) return false;
    if (sub.expiry) clearTimeout(sub.expiry);
    this.disconnects[reason]++;
    return true;
  }
}
