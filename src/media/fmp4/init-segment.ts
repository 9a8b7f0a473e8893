import { BoxWriter } from './box-writer.js';
import { writeFtyp } from './ftyp.js';
import { writeMvex, writeMvhd } from './movie.js';
import { writeTrak } from './trak.js';
import type { Fmp4Track } from './track.js';

/**
 * The init segment (ftyp + moov) of a fragmented MP4 with these tracks: what HLS's EXT-X-MAP and
 * MSE's first appendBuffer take. The tracks come from track.ts, which has checked their inputs.
 */
export function buildInitSegment(tracks: readonly Fmp4Track[]): Buffer {
  if (tracks.length === 0) throw new RangeError('an init segment needs a track');
  const ids = new Set(tracks.map((t) => t.id));
  if (ids.size !== tracks.length) throw new RangeError('track ids repeat');
  const w = new BoxWriter(1024);
  writeFtyp(w);
  w.start('moov');
  writeMvhd(w, Math.max(...ids) + 1);
  for (const track of tracks) writeTrak(w, track);
  writeMvex(w, tracks);
  w.end();
  return w.finish();
}
