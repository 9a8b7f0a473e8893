import type { Notification } from './notification.js';
import type { Classification, EventKind } from './topics.js';

// Per-camera state machine from classified notifications to debounced start/stop events. It holds
// no timers and reads no clock: the caller passes the time in and calls tick() when nextDeadline()
// says a pending stop may be due, which keeps it deterministic and testable.

export interface TrackerOutput {
  type: 'start' | 'stop';
  kind: EventKind;
  /** A start is at the notification that opened it; a stop is at the moment activity ended. */
  at: number;
}

export interface EventTrackerOptions {
  /** How long a kind must stay inactive before its event stops; a re-activation within it cancels the stop. */
  debounceMs: number;
  /** Active detectors remembered per camera; beyond it the least recently updated is forgotten. */
  maxDetectors?: number;
}

export const DEFAULT_MAX_DETECTORS = 64;

const KINDS: readonly EventKind[] = ['motion', 'human', 'vehicle'];

interface KindState {
  /** A start has been emitted and its stop has not. */
  open: boolean;
  /** When the kind last became inactive while open; null while active or closed. */
  inactiveSince: number | null;
}

export class EventTracker {
  readonly #debounceMs: number;
  readonly #maxDetectors: number;
  // Only active detectors are kept (an inactive one contributes nothing). Map order is recency:
  // an update re-inserts the entry, so the first entry is the one to forget when over the cap.
  readonly #active = new Map<string, EventKind>();
  readonly #kinds = new Map<EventKind, KindState>();
  #lastNow: number | null = null;

  constructor(opts: EventTrackerOptions) {
    if (!Number.isFinite(opts.debounceMs) || opts.debounceMs < 0)
      throw new RangeError('debounceMs must be a finite number >= 0');
    const max = opts.maxDetectors ?? DEFAULT_MAX_DETECTORS;
    if (!Number.isInteger(max) || max < 1) throw new RangeError('maxDetectors must be an integer >= 1');
    this.#debounceMs = opts.debounceMs;
    this.#maxDetectors = max;
  }

  /** Feeds one notification and its classification (null: not an event we track; only time advances). */
  push(n: Notification, classification: Classification | null, nowMs: number): TrackerOutput[] {
    // Stops that fell due before this notification are emitted first, so a re-activation after the
    // window starts a new event instead of silently extending the old one.
    const out = this.tick(nowMs);
    if (classification === null) return out;
    const { kind, key } = classification;
    // Initialized messages replay the current state right after subscribing: they may keep or
    // close an event but must not start one, or every reconnect during motion would be a new event.
    const initialized = n.operation === 'Initialized';
    const state = this.#kind(kind);

    if (classification.momentary) {
      if (initialized) return out;
      if (!state.open) {
        out.push({ type: 'start', kind, at: nowMs });
        state.open = true;
      }
      // A pulse is activity at this instant; the quiet window runs from it unless a detector of
      // this kind is still reporting activity.
      state.inactiveSince = this.#isActive(kind) ? null : nowMs;
      return out;
    }

    const id = `${kind}\u0000${key}`;
    this.#active.delete(id);
    const touched = new Set<EventKind>([kind]);
    if (classification.active) {
      this.#active.set(id, kind);
      while (this.#active.size > this.#maxDetectors) {
        const oldest = this.#active.keys().next();
        if (oldest.done) break;
        const evictedKind = this.#active.get(oldest.value);
        this.#active.delete(oldest.value);
        if (evictedKind) touched.add(evictedKind);
      }
      if (!initialized && !state.open) {
        out.push({ type: 'start', kind, at: nowMs });
        state.open = true;
      }
    }
    for (const k of touched) this.#settle(k, nowMs);
    return out;
  }

  /** Emits the stops whose debounce window has passed by nowMs. */
  tick(nowMs: number): TrackerOutput[] {
    this.#lastNow = nowMs;
    const out: TrackerOutput[] = [];
    for (const kind of KINDS) {
      const state = this.#kinds.get(kind);
      if (!state?.open || state.inactiveSince === null) continue;
      if (nowMs - state.inactiveSince < this.#debounceMs) continue;
      out.push({ type: 'stop', kind, at: state.inactiveSince });
      state.open = false;
      state.inactiveSince = null;
    }
    return out;
  }

  /**
   * Closes every open event and forgets all detector state: for a camera reboot or a re-created
   * subscription, after which the camera's Initialized messages describe the state afresh.
   * An event still active stops at nowMs (default: the last time seen by push/tick).
   */
  reset(nowMs?: number): TrackerOutput[] {
    const at = nowMs ?? this.#lastNow;
    const out: TrackerOutput[] = [];
    for (const kind of KINDS) {
      const state = this.#kinds.get(kind);
      if (!state?.open) continue;
      const stopAt = state.inactiveSince ?? at;
      // at is only null when no push has happened, and then nothing can be open.
      if (stopAt !== null) out.push({ type: 'stop', kind, at: stopAt });
    }
    this.#active.clear();
    this.#kinds.clear();
    return out;
  }

  /** The earliest time at which tick() would emit a stop, or null when none is pending. */
  nextDeadline(): number | null {
    let next: number | null = null;
    for (const state of this.#kinds.values()) {
      if (!state.open || state.inactiveSince === null) continue;
      const due = state.inactiveSince + this.#debounceMs;
      if (next === null || due < next) next = due;
    }
    return next;
  }

  /** Kinds with an open event (started, not yet stopped). */
  openKinds(): EventKind[] {
    return KINDS.filter((k) => this.#kinds.get(k)?.open === true);
  }

  /** Number of active detectors remembered (bounded by maxDetectors). */
  get detectorCount(): number {
    return this.#active.size;
  }

  #kind(kind: EventKind): KindState {
    let state = this.#kinds.get(kind);
    if (!state) {
      state = { open: false, inactiveSince: null };
      this.#kinds.set(kind, state);
    }
    return state;
  }

  #isActive(kind: EventKind): boolean {
    for (const k of this.#active.values()) if (k === kind) return true;
    return false;
  }

  /** After a detector change: cancel a pending stop if the kind is active, else start the window. */
  #settle(kind: EventKind, nowMs: number): void {
    const state = this.#kind(kind);
    if (!state.open) {
      state.inactiveSince = null;
    } else if (this.#isActive(kind)) {
      state.inactiveSince = null;
    } else if (state.inactiveSince === null) {
      state.inactiveSince = nowMs;
    }
  }
}
