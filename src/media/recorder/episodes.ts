import type { EventType } from '../../domain/types.js';

// Turns a camera's event starts and stops into episodes, and episodes into clip parts. One episode
// is one alert and one recording (in parts of at most maxClipMs): it covers its first start −
// pre-roll to its last stop + post-roll, and a start during the post-roll extends it. Pure: the
// caller passes every time in (events and ticks on one clock, ms) and does the I/O.
//
// Time only moves forward here. A start stamped before the latest time already seen (an event,
// a tick or an abort) counts as happening at that latest time: a part handed out by tick() can
// never be taken back, so nothing may land in it afterwards. A stop keeps its own time (no earlier
// than its start and the previous event): stops are often reported late and stamped when they
// happened (the ONVIF event tracker waits out flapping before it reports one), and moving them to
// the report's moment would add that wait to every clip. The episode's end still never falls
// inside a part already handed out.

/** No part is shorter than this: a shorter tail is dropped, a shorter episode is lengthened. */
export const MIN_PART_MS = 1;

export interface EpisodeOptions {
  preRollMs: number;
  postRollMs: number;
  maxClipMs: number;
  /**
   * a kind active this long without a stop counts as stopped (a camera that lost its stop must not record forever);
   * default 600_000
   */
  staleEventMs?: number;
}

export type EpisodeChange =
  /** The first start: the caller creates the alert now (fast notification). */
  | { type: 'opened'; episode: number; at: number; eventType: EventType }
  /** motion → human or vehicle: the alert's type is updated. */
  | { type: 'upgraded'; episode: number; eventType: EventType };

export interface ClipCut {
  episode: number;
  /** 0, 1, 2, … within the episode. */
  part: number;
  from: number;
  to: number;
  /** The most specific class seen in the episode before `to` (the final part: the alert's type). */
  eventType: EventType;
  /** The episode's first start (for the thumbnail). */
  triggeredAt: number;
  final: boolean;
}

interface OpenEpisode {
  id: number;
  from: number;
  triggeredAt: number;
  firstType: EventType;
  type: EventType;
  /** When `type` became more specific than `firstType` (at most once: only motion is upgraded). */
  upgradedAt: number | null;
  /** Active kinds and when each started (for staleness). */
  active: Map<EventType, number>;
  /** Known once no kind is active; a start before it extends the episode again. */
  end: number | null;
  /** Parts before this one have been handed out. */
  nextPart: number;
}

export class EpisodeTracker {
  private readonly preRollMs: number;
  private readonly postRollMs: number;
  private readonly maxClipMs: number;
  private readonly staleEventMs: number;
  private open: OpenEpisode | null = null;
  /** Parts of closed episodes not handed out yet, in order. */
  private readonly closedParts: ClipCut[] = [];
  private latest = -Infinity;
  /** Time of the latest event (stops may lie before `latest`, never before each other). */
  private latestEvent = -Infinity;
  /** End of the last closed episode: the next one starts no earlier (no footage twice). */
  private previousEnd = -Infinity;
  private lastEpisode = 0;

  constructor(opts: EpisodeOptions) {
    this.preRollMs = atLeast('preRollMs', opts.preRollMs, 0);
    this.postRollMs = atLeast('postRollMs', opts.postRollMs, 0);
    this.maxClipMs = atLeast('maxClipMs', opts.maxClipMs, MIN_PART_MS);
    this.staleEventMs = atLeast('staleEventMs', opts.staleEventMs ?? 600_000, MIN_PART_MS);
  }

  /** The open episode as of the latest call (one whose end has passed closes at the next call). */
  get current(): { episode: number; from: number; eventType: EventType; triggeredAt: number } | null {
    const ep = this.open;
    return ep && { episode: ep.id, from: ep.from, eventType: ep.type, triggeredAt: ep.triggeredAt };
  }

  /**
   * Where the open episode's footage not yet handed out in a part begins (the start of its next
   * part), or null with no episode open. Footage before it belongs to parts already handed out: an
   * episode kept open for hours by one start after another needs only its current part's footage.
   */
  get pendingFrom(): number | null {
    const ep = this.open;
    return ep && this.partStart(ep, ep.nextPart);
  }

  event(e: { kind: EventType; phase: 'start' | 'stop'; at: number }): EpisodeChange[] {
    const stamped = finiteTime('event time', e.at);
    const at = this.advance(stamped);
    const ep = this.open;
    if (e.phase === 'stop') {
      const since = ep?.active.get(e.kind);
      if (!ep || since === undefined) return [];
      ep.active.delete(e.kind);
      const stoppedAt = Math.max(stamped, since, this.latestEvent);
      this.latestEvent = stoppedAt;
      if (ep.active.size === 0) this.endAt(ep, stoppedAt + this.postRollMs);
      return [];
    }
    this.latestEvent = at;
    if (!ep) {
      const id = ++this.lastEpisode;
      this.open = {
        id,
        from: Math.max(at - this.preRollMs, this.previousEnd),
        triggeredAt: at,
        firstType: e.kind,
        type: e.kind,
        upgradedAt: null,
        active: new Map([[e.kind, at]]),
        end: null,
        nextPart: 0,
      };
      return [{ type: 'opened', episode: id, at, eventType: e.kind }];
    }
    if (ep.active.has(e.kind)) return [];
    ep.active.set(e.kind, at);
    ep.end = null;
    // human and vehicle are both more specific than motion; neither overrides the other.
    if (ep.type !== 'motion' || e.kind === 'motion') return [];
    ep.type = e.kind;
    ep.upgradedAt = at;
    return [{ type: 'upgraded', episode: ep.id, eventType: e.kind }];
  }

  /** Clip parts whose end has passed by `now` (ready to assemble); each emitted exactly once. */
  tick(now: number): ClipCut[] {
    finiteTime('tick time', now);
    this.advance(now);
    let ready = 0;
    while (ready < this.closedParts.length && this.closedParts[ready]!.to <= now) ready++;
    const cuts = this.closedParts.splice(0, ready);
    const ep = this.open;
    if (!ep) return cuts;
    // A part is handed out before the episode ends only when the end cannot fall inside it (or
    // leave a tail too short to keep): while a kind is active, its stop is still to come, no
    // earlier than the latest time seen.
    const lowestEnd = ep.end ?? this.latest + this.postRollMs;
    for (;;) {
      const to = this.partStart(ep, ep.nextPart + 1);
      if (to > now || !innerBoundary(to, lowestEnd)) break;
      cuts.push(this.cut(ep, ep.nextPart++, to, false));
    }
    return cuts;
  }

  /**
   * The earliest time at which tick() may hand out a part (the end of an episode's post-roll, or the
   * end of a part of a long one), or null while nothing is due: the caller ticks then, so a clip's
   * assembly starts the moment its footage ends, not at the next periodic tick.
   */
  nextDueAt(): number | null {
    let due = this.closedParts[0]?.to ?? Number.POSITIVE_INFINITY;
    const ep = this.open;
    if (ep) {
      due = Math.min(due, ep.end ?? Number.POSITIVE_INFINITY, this.partStart(ep, ep.nextPart + 1));
      // A kind that goes stale stops then, and the episode ends a post-roll later.
      for (const since of ep.active.values()) due = Math.min(due, since + this.staleEventMs + this.postRollMs);
    }
    return Number.isFinite(due) ? due : null;
  }

  /** The camera is gone (or the daemon stops): close the open episode at `at`, no post-roll beyond it. */
  abort(at: number): ClipCut[] {
    const t = this.advance(finiteTime('abort time', at));
    const ep = this.open;
    if (ep) {
      const end = this.endNoEarlierThanParts(ep, t);
      this.close(ep, end);
      // The end may lie just past `t` (see endNoEarlierThanParts); a later start must follow it.
      this.latest = Math.max(this.latest, end);
    }
    return this.closedParts.splice(0);
  }

  /** Moves time to `t` (never back): kinds gone stale stop, and an episode whose end passed closes. */
  private advance(t: number): number {
    const at = Math.max(t, this.latest);
    const ep = this.open;
    if (ep && ep.active.size > 0) {
      // Each check happens whenever time moves, so an expiry found now lies after the previous
      // latest time: the stop it stands for is still in order.
      let lastExpiry = -Infinity;
      for (const [kind, since] of ep.active) {
        const expiry = since + this.staleEventMs;
        if (expiry > at) continue;
        ep.active.delete(kind);
        lastExpiry = Math.max(lastExpiry, expiry);
      }
      if (ep.active.size === 0) ep.end = this.endNoEarlierThanParts(ep, lastExpiry + this.postRollMs);
    }
    this.latest = at;
    if (ep?.end != null && ep.end <= at) this.close(ep, ep.end);
    return at;
  }

  /** The last active kind stopped: the episode ends at `end` unless a start comes first. */
  private endAt(ep: OpenEpisode, end: number): void {
    ep.end = this.endNoEarlierThanParts(ep, end);
    if (ep.end <= this.latest) this.close(ep, ep.end);
  }

  /**
   * An episode is never empty (its alert needs a recording), and never ends inside or just after
   * a part already handed out: at most MIN_PART_MS past the requested end.
   */
  private endNoEarlierThanParts(ep: OpenEpisode, end: number): number {
    return Math.max(end, this.partStart(ep, ep.nextPart) + MIN_PART_MS);
  }

  private close(ep: OpenEpisode, end: number): void {
    for (let part = ep.nextPart; ; part++) {
      const to = this.partStart(ep, part + 1);
      if (innerBoundary(to, end)) {
        this.closedParts.push(this.cut(ep, part, to, false));
        continue;
      }
      // A tail shorter than MIN_PART_MS would be a clip of its own; it is dropped instead (a
      // part longer than maxClipMs is never made).
      const last = this.cut(ep, part, Math.min(to, end), true);
      this.closedParts.push(last);
      this.previousEnd = last.to;
      this.open = null;
      return;
    }
  }

  private partStart(ep: OpenEpisode, part: number): number {
    // Computed the same way everywhere, so one part's `to` is exactly the next one's `from`.
    return ep.from + part * this.maxClipMs;
  }

  private cut(ep: OpenEpisode, part: number, to: number, final: boolean): ClipCut {
    // Times at or after `to` belong to later parts; the final part carries the alert's type.
    const upgraded = final || (ep.upgradedAt !== null && ep.upgradedAt < to);
    return {
      episode: ep.id,
      part,
      from: this.partStart(ep, part),
      to,
      eventType: upgraded ? ep.type : ep.firstType,
      triggeredAt: ep.triggeredAt,
      final,
    };
  }
}

/** Whether an episode ending at `end` goes on past `boundary` by at least a whole minimal part. */
function innerBoundary(boundary: number, end: number): boolean {
  return boundary + MIN_PART_MS <= end;
}

function atLeast(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min)
    throw new RangeError(`${name} must be a finite number ≥ ${min}, got ${value}`);
  return value;
}

function finiteTime(name: string, value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number of ms, got ${value}`);
  return value;
}
