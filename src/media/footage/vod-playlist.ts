import type { IndexedFootageFile } from '../../store/footage.js';
import { firstFragment, placedFragments, touches, type PlannedFragment } from './range-plan.js';

// A window of footage as an HLS VOD media playlist (RFC 8216): segments are byte ranges of the
// footage files as they lie on disk (fMP4, EXT-X-MAP the file's init segment), about
// SEGMENT_TARGET_S long, cut at keyframes, so a player seeks to any second by fetching a few
// seconds. Footage that does not follow the segment before it (a gap: the camera was down, the
// gateway stopped, the disk was behind) starts after an EXT-X-DISCONTINUITY with its own init and
// its EXT-X-PROGRAM-DATE-TIME: a player's time line skips the gap, and the date of any moment
// played is the segment's date plus the time into it. Pure: file URIs come from `uriOf`.

export interface VodPlaylist {
  text: string;
  /** Wall clock of the first segment's start, ms. */
  startMs: number;
  /** Seconds of media; gaps are not counted. */
  durationS: number;
  segments: number;
}

/** A segment is closed at the first keyframe after this much media (s). */
const SEGMENT_TARGET_S = 6;
const TICKS_PER_S = 90_000;

interface Segment {
  file: IndexedFootageFile;
  offset: number;
  bytes: number;
  ticks: number;
  startMs: number;
  /** Not following the segment before: EXT-X-DISCONTINUITY, a map, a date. */
  breaks: boolean;
}

function segmentsOf(fragments: readonly PlannedFragment[]): Segment[] {
  const out: Segment[] = [];
  let prev: PlannedFragment | null = null;
  for (const f of fragments) {
    const open = out[out.length - 1];
    const follows = prev !== null && touches(prev, f);
    const sameRun = prev !== null && follows && f.file.zeroMs === prev.file.zeroMs;
    const full = open !== undefined && open.ticks >= SEGMENT_TARGET_S * TICKS_PER_S && f.fragment.keyframe;
    if (!open || !sameRun || f.file !== open.file || full) {
      out.push({
        file: f.file,
        offset: f.fragment.offset,
        bytes: 0,
        ticks: 0,
        startMs: f.startMs,
        breaks: !open || !sameRun,
      });
    }
    const seg = out[out.length - 1] as Segment;
    seg.bytes += f.fragment.bytes;
    seg.ticks += f.fragment.duration;
    prev = f;
  }
  return out;
}

/**
 * The playlist of [startMs, endMs) from a device's files (from the index): from the keyframe at or
 * before startMs to the last fragment that starts before endMs; null when nothing falls in it.
 * EXT-X-START points at startMs, so a player starts there and not at the keyframe before it.
 */
export function vodPlaylist(
  files: readonly IndexedFootageFile[],
  startMs: number,
  endMs: number,
  uriOf: (file: IndexedFootageFile) => string,
): VodPlaylist | null {
  const all = placedFragments(files);
  const first = firstFragment(all, startMs);
  if (first < 0 || (all[first] as PlannedFragment).startMs >= endMs) return null;
  const chosen: PlannedFragment[] = [];
  for (let i = first; i < all.length && (all[i] as PlannedFragment).startMs < endMs; i++)
    chosen.push(all[i] as PlannedFragment);
  const segments = segmentsOf(chosen);
  const longest = Math.max(...segments.map((s) => s.ticks / TICKS_PER_S));
  const firstStart = (segments[0] as Segment).startMs;
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:7',
    `#EXT-X-TARGETDURATION:${Math.max(1, Math.ceil(longest))}`,
    '#EXT-X-PLAYLIST-TYPE:VOD',
    '#EXT-X-MEDIA-SEQUENCE:0',
    `#EXT-X-START:TIME-OFFSET=${Math.max(0, (startMs - firstStart) / 1000).toFixed(3)},PRECISE=YES`,
  ];
  segments.forEach((s, i) => {
    const uri = uriOf(s.file);
    if (s.breaks) {
      if (i > 0) lines.push('#EXT-X-DISCONTINUITY');
      lines.push(`#EXT-X-MAP:URI="${uri}",BYTERANGE="${s.file.initBytes}@0"`);
      lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(Math.round(s.startMs)).toISOString()}`);
    }
    lines.push(`#EXTINF:${(s.ticks / TICKS_PER_S).toFixed(5)},`, `#EXT-X-BYTERANGE:${s.bytes}@${s.offset}`, uri);
  });
  lines.push('#EXT-X-ENDLIST', '');
  const durationS = segments.reduce((sum, s) => sum + s.ticks / TICKS_PER_S, 0);
  return { text: lines.join('\n'), startMs: firstStart, durationS, segments: segments.length };
}
