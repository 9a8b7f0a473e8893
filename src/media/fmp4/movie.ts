import { writeUnityMatrix, type BoxWriter } from './box-writer.js';
import type { Fmp4Track } from './track.js';

// mvhd and mvex/trex: the movie-level boxes of an init segment. A live fragmented file has no
// duration (0), and every sample's duration, size and flags come with its fragment, so the trex
// defaults are zeros.

const MOVIE_TIMESCALE = 1000;

export function writeMvhd(w: BoxWriter, nextTrackId: number): void {
  w.startFull('mvhd', 0, 0)
    .u32(0) // creation_time
    .u32(0) // modification_time
    .u32(MOVIE_TIMESCALE)
    .u32(0) // duration: unknown (live)
    .u32(0x00010000) // rate 1.0
    .u16(0x0100) // volume 1.0
    .zeros(2 + 8);
  writeUnityMatrix(w);
  w.zeros(6 * 4) // pre_defined
    .u32(nextTrackId)
    .end();
}

export function writeMvex(w: BoxWriter, tracks: readonly Fmp4Track[]): void {
  w.start('mvex');
  for (const track of tracks) {
    w.startFull('trex', 0, 0)
      .u32(track.id)
      .u32(1) // default_sample_description_index
      .u32(0) // default_sample_duration
      .u32(0) // default_sample_size
      .u32(0) // default_sample_flags
      .end();
  }
  w.end();
}
