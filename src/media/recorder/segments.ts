// The RAM segment ring of one camera, as data: which segments exist, when (wall clock) each
// begins and ends, which a clip needs, which may go. No files here; the recorder deletes what
// prune() names.
//
// Each segment comes with its start and end in stream seconds and the wall clock by which it was
// all there (the earliest its pictures' arrivals imply for its end). Arrival − end (in ms) is the
// offset between stream and wall clock plus a delay that is never negative: the smallest offset
// seen is the best estimate; a jump of more than `resyncMs` (a new run, or the camera's timestamps
// jumped after a reconnect) starts a new estimate.

export interface SegmentLine {
  file: string;
  startS: number;
  endS: number;
}

export interface Segment {
  file: string;
  /** Wall-clock ms. */
  startAt: number;
  endAt: number;
  /** Length in stream time (for the concat list). */
  durationS: number;
}

/** The name of a run's n-th segment file: `r<run>-<n, 9 digits>.mp4`. */
export function segmentFileName(run: number, n: number): string {
  return `r${run}-${String(n).padStart(9, '0')}.mp4`;
}

/** The run a segment file belongs to (see segmentFileName), or null for another file. */
export function runOfSegmentFile(name: string): number | null {
  const m = /^r(\d+)-\d{9,}\.mp4$/.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Whether a file in a camera's RAM directory is a segment (of any run). Only segments are swept when
 * a run starts: the directory also holds the index and the clip writer's concat lists, which a sweep
 * during a clip's writing would pull from under ffmpeg (the clip was lost).
 */
export function isSegmentFile(name: string): boolean {
  return /^r\d+-\d{9,}\.mp4$/.test(name);
}

export interface Selection {
  segments: Segment[];
  /** Wall-clock start of the first segment (a keyframe at or before the `from` asked for). */
  startAt: number;
  /** Wall-clock end of the last segment. */
  endAt: number;
}

export class SegmentRing {
  private segments: Segment[] = [];
  private offsetMs: number | null = null;
  private lastEndS: number | null = null;

  constructor(private readonly resyncMs = 2000) {}

  get size(): number {
    return this.segments.length;
  }

  /** Wall-clock end of the newest finished segment, or null. */
  get latestEndAt(): number | null {
    return this.segments.at(-1)?.endAt ?? null;
  }

  /** Adds a finished segment, all there by `arrivedAt` (wall ms); returns it with wall-clock times. */
  add(line: SegmentLine, arrivedAt: number): Segment {
    const { segment, offsetMs } = this.place(line, arrivedAt);
    this.offsetMs = offsetMs;
    this.lastEndS = line.endS;
    this.segments.push(segment);
    return segment;
  }

  /**
   * Where the part of a segment received so far lies (its group of pictures not yet closed, all of it
   * there by `arrivedAt`), as add() would place it, the ring unchanged.
   */
  preview(line: SegmentLine, arrivedAt: number): Segment {
    return this.place(line, arrivedAt).segment;
  }

  private place(line: SegmentLine, arrivedAt: number): { segment: Segment; offsetMs: number } {
    const offset = arrivedAt - line.endS * 1000;
    // A segment that follows the previous one in stream time and merely arrives late (held up on its
    // way) is no clock jump.
    const lateContinuation =
      this.lastEndS !== null &&
      Math.abs(line.startS - this.lastEndS) < 0.001 &&
      this.offsetMs !== null &&
      offset > this.offsetMs;
    const offsetMs =
      this.offsetMs === null || (Math.abs(offset - this.offsetMs) > this.resyncMs && !lateContinuation)
        ? offset
        : Math.min(this.offsetMs, offset);
    let startAt = offsetMs + line.startS * 1000;
    const endAt = offsetMs + line.endS * 1000;
    // Segments follow each other; a start before the previous end is the same instant, rounded.
    const previous = this.segments.at(-1);
    if (previous && startAt < previous.endAt && startAt > previous.startAt) startAt = previous.endAt;
    const segment = { file: line.file, startAt, endAt: Math.max(endAt, startAt), durationS: line.endS - line.startS };
    return { segment, offsetMs };
  }

  /** The segments a clip [from, to) needs (see selectSegments). */
  select(from: number, to: number): Selection | null {
    return selectSegments(this.segments, from, to);
  }

  /**
   * Forgets segments that ended before `before`, except those a pending clip still needs
   * (`keepFrom`: the earliest `from` of any clip not yet assembled, or null). Returns their files.
   */
  prune(before: number, keepFrom: number | null): string[] {
    let limit = before;
    if (keepFrom !== null) {
      // Keep the segment that starts at or before keepFrom as well: it is the clip's first.
      const opening = this.select(keepFrom, Number.POSITIVE_INFINITY)?.startAt;
      limit = Math.min(limit, opening ?? keepFrom);
    }
    const gone: string[] = [];
    while (this.segments.length > 1 && (this.segments[0] as Segment).endAt <= limit)
      gone.push((this.segments.shift() as Segment).file);
    return gone;
  }

  /**
   * A new run: its stream times start over, so the clock offset is estimated afresh. The
   * segments of the old run stay (a pending clip may need them; their files have other names).
   */
  newRun(): void {
    this.offsetMs = null;
    this.lastEndS = null;
  }

  /** Every file still held (the recorder deletes them when it stops). */
  files(): string[] {
    return this.segments.map((s) => s.file);
  }

  /** Every segment still held, oldest first. */
  list(): readonly Segment[] {
    return this.segments;
  }
}

/**
 * The segments a clip [from, to) needs, of `segments` in order: from the last one that starts at
 * or before `from` (so the clip opens on a keyframe and the pre-roll is never short) through the
 * first that reaches `to`; when `from` falls in a gap, from the first segment after it. Null when no segment covers
 * `from` at all and none begins before `to`.
 */
/**
 * A segment's listed end is its last frame's start, so `from` a little after it may still be in
 * that frame: only a longer silence is a gap in the footage.
 */
const GAP_MS = 1000;

export function selectSegments(segments: readonly Segment[], from: number, to: number): Selection | null {
  let first = -1;
  for (let i = 0; i < segments.length; i++) {
    if ((segments[i] as Segment).startAt <= from) first = i;
    else break;
  }
  // The ring no longer (or never) held `from`, or `from` falls in a gap (the camera was down and the
  // segment before it ended earlier): start with the oldest segment that overlaps. Footage from
  // before a gap is no pre-roll; it would also date the clip before the outage.
  if (first < 0 || (segments[first] as Segment).endAt + GAP_MS <= from)
    first = segments.findIndex((s) => s.endAt > from);
  if (first < 0 || (segments[first] as Segment).startAt >= to) return null;
  const chosen: Segment[] = [];
  for (let i = first; i < segments.length; i++) {
    const s = segments[i] as Segment;
    if (s.startAt >= to) break;
    chosen.push(s);
  }
  const endAt = (chosen.at(-1) as Segment).endAt;
  // Only footage from before the clip (the camera went silent at its start): nothing to write.
  if (endAt <= from) return null;
  return { segments: chosen, startAt: (chosen[0] as Segment).startAt, endAt };
}

// The RAM index (index.csv beside the segments): each finished segment with its wall-clock
// times, appended as it is listed, so that a daemon restarted after a crash knows the times of the
// segments it finds (in RAM, so no SD-card write). One line: `file,startAt,endAt,durationS`.

/** Sorts before the segments (`r<run>-…`), so "the newest file" is still a segment. */
export const SEGMENT_INDEX = 'index.csv';

export function indexLine(s: Segment): string {
  return `${s.file},${Math.round(s.startAt)},${Math.round(s.endAt)},${s.durationS.toFixed(6)}\n`;
}

/** The index's segments in order (a later line for the same file wins); malformed lines are skipped. */
export function parseIndex(text: string): Segment[] {
  const byFile = new Map<string, Segment>();
  for (const line of text.split('\n')) {
    const m = /^(r\d+-\d{9,}\.mp4),(-?\d+),(-?\d+),(\d+(?:\.\d+)?)$/.exec(line.trim());
    if (!m) continue;
    const segment = { file: m[1] as string, startAt: Number(m[2]), endAt: Number(m[3]), durationS: Number(m[4]) };
    if (segment.endAt < segment.startAt) continue;
    byFile.delete(segment.file);
    byFile.set(segment.file, segment);
  }
  return [...byFile.values()];
}
