import type { IndexedFootageFile } from '../../store/footage.js';
import { decodeFragmentTable, type PlacedFragment } from './fragment-table.js';

// Which bytes of which footage files make a time range: the spans of footage (for a timeline), and
// the plan of an export (one fragmented MP4 of the range: the first file's init segment, then every
// fragment from the keyframe at or before the start to the last one starting before the end). Pure:
// the files come from the index, and the plan says what to read; export.ts reads and streams it.

export interface Span {
  startMs: number;
  endMs: number;
}

/** Files closer than this count as touching (their ends are rounded to whole ms). */
const TOUCH_MS = 250;
const TICKS_PER_MS = 90;

/** The footage kept in [startMs, endMs): files merged where they touch, clipped to the window, in order. */
export function footageSpans(
  files: readonly Pick<IndexedFootageFile, 'startMs' | 'endMs'>[],
  startMs: number,
  endMs: number,
): Span[] {
  const spans: Span[] = [];
  for (const f of [...files].sort((a, b) => a.startMs - b.startMs)) {
    const s = Math.max(f.startMs, startMs);
    const e = Math.min(f.endMs, endMs);
    if (e <= s) continue;
    const last = spans[spans.length - 1];
    if (last && s - last.endMs <= TOUCH_MS) last.endMs = Math.max(last.endMs, e);
    else spans.push({ startMs: s, endMs: e });
  }
  return spans;
}

export interface PlannedFragment {
  file: IndexedFootageFile;
  fragment: PlacedFragment;
  /** Wall clock of its first picture, ms. */
  startMs: number;
}

export interface ExportPlan {
  /** The file whose init segment starts the export. */
  initFile: IndexedFootageFile;
  fragments: PlannedFragment[];
  /** Wall clock of the first fragment: the export's time zero. */
  startMs: number;
  /** Wall clock of the end of the last fragment. */
  endMs: number;
  bytes: number;
}

const endOf = (f: PlannedFragment): number => f.startMs + f.fragment.duration / TICKS_PER_MS;

/**
 * Where footage from startMs begins: the keyframe at or before it, reached back through touching
 * fragments only; when startMs is in a gap (the footage before it is not of that time), the first
 * keyframe after it. -1 when there is none.
 */
export function firstFragment(all: readonly PlannedFragment[], startMs: number): number {
  let at = -1;
  while (at + 1 < all.length && (all[at + 1] as PlannedFragment).startMs <= startMs) at++;
  if (at >= 0 && endOf(all[at] as PlannedFragment) + TOUCH_MS >= startMs) {
    for (let i = at; i >= 0; i--) {
      const f = all[i] as PlannedFragment;
      if (f.fragment.keyframe) return i;
      if (i > 0 && f.startMs - endOf(all[i - 1] as PlannedFragment) > TOUCH_MS) break;
    }
  }
  return all.findIndex((f) => f.fragment.keyframe && f.startMs >= startMs);
}

/** Whether `next` follows `prev` without a gap (files of one run, or fragments of one file). */
export function touches(prev: PlannedFragment, next: PlannedFragment): boolean {
  return Math.abs(next.startMs - endOf(prev)) <= TOUCH_MS;
}

/** Every fragment of these files, in time order, with its wall clock. */
export function placedFragments(files: readonly IndexedFootageFile[]): PlannedFragment[] {
  const out: PlannedFragment[] = [];
  for (const file of [...files].sort((a, b) => a.startMs - b.startMs || a.id - b.id)) {
    for (const fragment of decodeFragmentTable(file.fragments, file.initBytes))
      out.push({ file, fragment, startMs: file.startMs + fragment.start / TICKS_PER_MS });
  }
  return out;
}

/**
 * The export of [startMs, endMs) from these files (a device's, from the index); null when no
 * fragment falls in it. It starts at the last keyframe at or before startMs (the first after it when
 * startMs is in a gap) and ends with the last fragment that starts before endMs. `sameInit(a, b)`
 * says whether two files of different runs have the same init segment: the export stops before
 * the first that has not (the camera changed resolution or codec), as one MP4 has one.
 */
export function planExport(
  files: readonly IndexedFootageFile[],
  startMs: number,
  endMs: number,
  sameInit: (a: IndexedFootageFile, b: IndexedFootageFile) => boolean,
): ExportPlan | null {
  const all = placedFragments(files);
  const first = firstFragment(all, startMs);
  if (first < 0 || (all[first] as PlannedFragment).startMs >= endMs) return null;
  const initFile = (all[first] as PlannedFragment).file;
  const fragments: PlannedFragment[] = [];
  for (let i = first; i < all.length; i++) {
    const f = all[i] as PlannedFragment;
    if (f.startMs >= endMs) break;
    if (f.file !== initFile && f.file.zeroMs !== initFile.zeroMs && !sameInit(initFile, f.file)) break;
    fragments.push(f);
  }
  const last = fragments[fragments.length - 1] as PlannedFragment;
  const bytes = initFile.initBytes + fragments.reduce((sum, f) => sum + f.fragment.bytes, 0);
  return { initFile, fragments, startMs: (fragments[0] as PlannedFragment).startMs, endMs: endOf(last), bytes };
}
