// What the footage timeline shows, as pure arithmetic: a view is the moment under the playhead (the
// middle of the bar) and the time the bar spans; zooming changes the span around the playhead,
// dragging moves the moment. Ticks fall on the browser's local minutes, hours and midnights, so a
// view across midnight or across days reads as a calendar does.

export interface View {
  /** The moment under the playhead, ms since the epoch. */
  centerMs: number;
  /** The time the whole bar spans, ms. */
  spanMs: number;
}

export interface Bounds {
  minMs: number;
  maxMs: number;
}

/** Zoomed all the way in, the bar spans five minutes; all the way out, two weeks. */
export const MIN_SPAN_MS = 5 * 60_000;
export const MAX_SPAN_MS = 14 * 86_400_000;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** The view with its moment kept inside the bounds and its span inside MIN_SPAN_MS..MAX_SPAN_MS. */
export function clampView(view: View, bounds: Bounds): View {
  return {
    centerMs: clamp(view.centerMs, bounds.minMs, Math.max(bounds.minMs, bounds.maxMs)),
    spanMs: clamp(view.spanMs, MIN_SPAN_MS, MAX_SPAN_MS),
  };
}

/** The span multiplied by `factor` (below 1 zooms in), around the playhead. */
export function zoomed(view: View, factor: number, bounds: Bounds): View {
  return clampView({ centerMs: view.centerMs, spanMs: view.spanMs * factor }, bounds);
}

/** [start, end) of what the bar shows. */
export function visibleWindow(view: View): { startMs: number; endMs: number } {
  return { startMs: view.centerMs - view.spanMs / 2, endMs: view.centerMs + view.spanMs / 2 };
}

/** Where a moment lies along the bar, 0 at its left end, 1 at its right (outside 0..1 when off the bar). */
export function fractionOf(view: View, tMs: number): number {
  return (tMs - view.centerMs) / view.spanMs + 0.5;
}

/** The moment at a place along the bar (0..1). */
export function timeAt(view: View, fraction: number): number {
  return view.centerMs + (fraction - 0.5) * view.spanMs;
}

/** How far an arrow key moves the playhead: a sixtieth of the bar, in whole seconds. */
export function keyStepMs(view: View): number {
  return Math.max(1_000, Math.round(view.spanMs / 60 / 1_000) * 1_000);
}

/** Tick spacings, in minutes, from the finest. */
const STEPS_MIN = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880];

export interface Tick {
  tMs: number;
  /** A local midnight: labelled with the day rather than the hour. */
  day: boolean;
}

/**
 * The ticks of the bar: the finest spacing that leaves at least `minGapPx` between two ticks on a
 * bar `widthPx` wide, at whole local minutes, hours or days.
 */
export function ticks(view: View, widthPx: number, minGapPx = 72): Tick[] {
  const { startMs, endMs } = visibleWindow(view);
  const fit = Math.max(1, Math.floor(widthPx / minGapPx));
  const stepMin = STEPS_MIN.find((s) => view.spanMs / (s * MINUTE) <= fit) ?? 2880;
  const out: Tick[] = [];
  const first = new Date(startMs);
  // Walk local days from the one the bar starts in; within each, ticks every stepMin minutes from
  // midnight (Date's own arithmetic keeps them on local clock times across a DST change).
  for (let d = 0; d <= Math.ceil(view.spanMs / DAY) + 1; d++) {
    const midnight = new Date(first.getFullYear(), first.getMonth(), first.getDate() + d);
    if (stepMin >= 1440) {
      const dayIndex = Math.round(midnight.getTime() / DAY);
      if (dayIndex % (stepMin / 1440) === 0 && midnight.getTime() >= startMs && midnight.getTime() < endMs)
        out.push({ tMs: midnight.getTime(), day: true });
      continue;
    }
    for (let m = 0; m < 1440; m += stepMin) {
      const t = new Date(midnight.getFullYear(), midnight.getMonth(), midnight.getDate(), 0, m).getTime();
      if (t >= startMs && t < endMs) out.push({ tMs: t, day: m === 0 });
    }
  }
  return out;
}

/**
 * The windows to ask the API for to cover [startMs, endMs): whole `chunkMs` slices aligned on the
 * epoch, so that a view moved a little asks again only for the slice it newly shows.
 */
export function chunksOf(startMs: number, endMs: number, chunkMs = DAY): Array<{ startMs: number; endMs: number }> {
  const out: Array<{ startMs: number; endMs: number }> = [];
  for (let a = Math.floor(startMs / chunkMs) * chunkMs; a < endMs; a += chunkMs)
    out.push({ startMs: a, endMs: a + chunkMs });
  return out;
}

export interface TimeSpan {
  startMs: number;
  endMs: number;
}

/** Spans in time order, those that touch or overlap merged (the API's answers per slice meet at the slices' edges). */
export function mergeSpans(spans: readonly TimeSpan[]): TimeSpan[] {
  const sorted = [...spans].sort((a, b) => a.startMs - b.startMs);
  const out: TimeSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.startMs <= last.endMs) last.endMs = Math.max(last.endMs, s.endMs);
    else out.push({ ...s });
  }
  return out;
}

/**
 * The event before (`-1`) or after (`1`) the moment, by start; one within a second of the moment is
 * the one being looked at, so it is skipped.
 */
export function neighbourEvent<E extends { startMs: number }>(
  events: readonly E[],
  tMs: number,
  dir: -1 | 1,
): E | null {
  let best: E | null = null;
  for (const e of events) {
    if (dir === 1 ? e.startMs <= tMs + 1_000 : e.startMs >= tMs - 1_000) continue;
    if (!best || (dir === 1 ? e.startMs < best.startMs : e.startMs > best.startMs)) best = e;
  }
  return best;
}
