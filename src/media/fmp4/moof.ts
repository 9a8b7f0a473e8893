import type { BoxWriter } from './box-writer.js';

// moof and what is inside it (mfhd, traf/tfhd/tfdt/trun), with their sizes known before writing so
// a fragment's bytes take one allocation (fragment.ts).

/** tfhd: data offsets count from the start of the moof (CMAF requires it). */
export const TFHD_DEFAULT_BASE_IS_MOOF = 0x020000;
export const TFHD_DEFAULT_SAMPLE_FLAGS = 0x000020;
export const TRUN_DATA_OFFSET = 0x000001;
export const TRUN_SAMPLE_DURATION = 0x000100;
export const TRUN_SAMPLE_SIZE = 0x000200;
export const TRUN_SAMPLE_FLAGS = 0x000400;
export const TRUN_SAMPLE_COMPOSITION_OFFSET = 0x000800;

/** sample_depends_on = 2 (depends on no other sample): a sync sample. */
export const SAMPLE_FLAGS_SYNC = 0x02000000;
/** sample_depends_on = 1 and sample_is_non_sync_sample. */
export const SAMPLE_FLAGS_NON_SYNC = 0x01010000;

/** What one traf says; `samples` are written by writeTrun. */
export interface TrafLayout {
  trackId: number;
  baseDecodeTime: number;
  /** Video: per-sample flags and signed composition offsets (trun version 1). */
  video: boolean;
  sampleCount: number;
}

export const MFHD_BYTES = 16;
const TFHD_BYTES = 16;
const TFDT_BYTES = 20;
const TRUN_HEADER_BYTES = 20;

export function trunSampleBytes(video: boolean): number {
  return video ? 16 : 8;
}

export function trafBytes(layout: TrafLayout): number {
  return (
    8 +
    TFHD_BYTES +
    (layout.video ? 0 : 4) +
    TFDT_BYTES +
    TRUN_HEADER_BYTES +
    layout.sampleCount * trunSampleBytes(layout.video)
  );
}

export function writeMfhd(w: BoxWriter, sequence: number): void {
  w.startFull('mfhd', 0, 0).u32(sequence).end();
}

/** Opens traf and writes tfhd, tfdt and trun's header; the caller writes the samples and closes both. */
export function startTrafAndTrun(w: BoxWriter, layout: TrafLayout, dataOffset: number): void {
  w.start('traf');
  if (layout.video) {
    w.startFull('tfhd', 0, TFHD_DEFAULT_BASE_IS_MOOF).u32(layout.trackId).end();
  } else {
    // Every audio frame is a sync sample: one default instead of flags per sample.
    w.startFull('tfhd', 0, TFHD_DEFAULT_BASE_IS_MOOF | TFHD_DEFAULT_SAMPLE_FLAGS)
      .u32(layout.trackId)
      .u32(SAMPLE_FLAGS_SYNC)
      .end();
  }
  w.startFull('tfdt', 1, 0).u64(layout.baseDecodeTime).end();
  const flags =
    TRUN_DATA_OFFSET |
    TRUN_SAMPLE_DURATION |
    TRUN_SAMPLE_SIZE |
    (layout.video ? TRUN_SAMPLE_FLAGS | TRUN_SAMPLE_COMPOSITION_OFFSET : 0);
  w.startFull('trun', layout.video ? 1 : 0, flags)
    .u32(layout.sampleCount)
    .i32(dataOffset);
}
