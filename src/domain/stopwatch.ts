// Named instants of one piece of work, for the log's latency lines: where the time of a motion check
// goes (detect/motion-check.ts, logged by the recorder from the motion start) and of a WebRTC
// session's start (media/webrtc/session.ts). Each name keeps its first instant: a step that recurs
// (a packet, a connection state) is timed when it first happens.

/** A step's name and its instant, on the clock of the stopwatch that marked it. */
export type Mark<Name extends string = string> = [name: Name, at: number];

export interface Stopwatch<Name extends string = string> {
  /** Marks `name` now, unless it is marked already. */
  mark(name: Name): void;
  /** Time from the start to `name`'s mark; null until it is marked. */
  elapsed(name: Name): number | null;
  /** The marks in the order they were made. */
  marks(): Mark<Name>[];
}

/** A stopwatch on the clock `now`, started at `startedAt` (now when absent). */
export function startStopwatch<Name extends string = string>(
  now: () => number,
  startedAt: number = now(),
): Stopwatch<Name> {
  const marks = new Map<Name, number>();
  return {
    mark(name) {
      if (!marks.has(name)) marks.set(name, now());
    },
    elapsed(name) {
      const at = marks.get(name);
      return at === undefined ? null : at - startedAt;
    },
    marks: () => [...marks],
  };
}

/** Each mark as the time from `origin` to it, by name, in the marks' order (a later mark of a name wins). */
export function timeSince(origin: number, marks: readonly Mark[]): Record<string, number> {
  return Object.fromEntries(marks.map(([name, at]) => [name, at - origin]));
}
