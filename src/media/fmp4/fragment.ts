import { MediaFormatError } from '../errors.js';
import { BoxWriter } from './box-writer.js';
import {
  MFHD_BYTES,
  SAMPLE_FLAGS_NON_SYNC,
  SAMPLE_FLAGS_SYNC,
  startTrafAndTrun,
  trafBytes,
  type TrafLayout,
} from './moof.js';
import type { Fmp4Track } from './track.js';

// One movie fragment (moof + mdat): an HLS part, a CMAF chunk, an MSE append. Every input is checked
// before a byte is written and the exact size is computed first, so a fragment is one allocation
// and bad input is a MediaFormatError, never a box with a wrong size.

export interface FragmentSample {
  /** Decode-time distance to the next sample, in the track's timescale. */
  duration: number;
  /** PTS − DTS in the track's timescale; negative for B-frames placed as decode-timeline.ts does. */
  compositionOffset: number;
  keyframe: boolean;
  /** Video: the NAL units (each written with a 4-byte length); audio: the coded frame. */
  payload: Buffer | readonly Buffer[];
}

export interface FragmentTrackRun {
  track: Fmp4Track;
  /** Decode time of the first sample, in the track's timescale. */
  baseDecodeTime: number;
  samples: readonly FragmentSample[];
}

const U32_MAX = 0xffffffff;
const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

function sampleSize(sample: FragmentSample): number {
  if (Buffer.isBuffer(sample.payload)) return sample.payload.length;
  let size = 0;
  for (const nal of sample.payload) size += 4 + nal.length;
  return size;
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new MediaFormatError('bad_sample', message);
}

/** moof + mdat for these runs (tracks with no samples are left out), numbered `sequence` (mfhd). */
export function buildFragment(sequence: number, runs: readonly FragmentTrackRun[]): Buffer {
  check(Number.isInteger(sequence) && sequence >= 1 && sequence <= U32_MAX, `fragment sequence ${sequence}`);
  const used = runs.filter((r) => r.samples.length > 0);
  check(used.length > 0, 'a fragment needs a sample');
  check(new Set(used.map((r) => r.track.id)).size === used.length, 'a track appears twice in one fragment');
  const layouts: TrafLayout[] = [];
  const sizes: number[][] = [];
  let mdatBytes = 8;
  for (const run of used) {
    const video = run.track.kind === 'video';
    check(
      Number.isSafeInteger(run.baseDecodeTime) && run.baseDecodeTime >= 0,
      `base decode time ${run.baseDecodeTime}`,
    );
    const runSizes: number[] = [];
    for (const s of run.samples) {
      check(Number.isInteger(s.duration) && s.duration >= 0 && s.duration <= U32_MAX, `sample duration ${s.duration}`);
      check(
        Number.isInteger(s.compositionOffset) && s.compositionOffset >= I32_MIN && s.compositionOffset <= I32_MAX,
        `composition offset ${s.compositionOffset}`,
      );
      check(video || s.compositionOffset === 0, 'audio samples have no composition offset');
      check(
        video !== Buffer.isBuffer(s.payload),
        video ? 'a video sample is a list of NAL units' : 'an audio sample is one buffer',
      );
      if (!Buffer.isBuffer(s.payload)) {
        check(s.payload.length > 0, 'a video sample without NAL units');
        for (const nal of s.payload) check(Buffer.isBuffer(nal) && nal.length > 0, 'an empty NAL unit');
      }
      const size = sampleSize(s);
      check(size > 0, 'an empty sample');
      runSizes.push(size);
      mdatBytes += size;
    }
    layouts.push({ trackId: run.track.id, baseDecodeTime: run.baseDecodeTime, video, sampleCount: run.samples.length });
    sizes.push(runSizes);
  }
  const moofBytes = 8 + MFHD_BYTES + layouts.reduce((sum, l) => sum + trafBytes(l), 0);
  check(mdatBytes <= U32_MAX && moofBytes + mdatBytes <= I32_MAX, `fragment of ${moofBytes + mdatBytes} bytes`);

  const w = new BoxWriter(moofBytes + mdatBytes);
  w.start('moof');
  w.startFull('mfhd', 0, 0).u32(sequence).end();
  let dataOffset = moofBytes + 8;
  used.forEach((run, t) => {
    const layout = layouts[t] as TrafLayout;
    const runSizes = sizes[t] as number[];
    startTrafAndTrun(w, layout, dataOffset);
    run.samples.forEach((s, i) => {
      const size = runSizes[i] as number;
      w.u32(s.duration).u32(size);
      if (layout.video) w.u32(s.keyframe ? SAMPLE_FLAGS_SYNC : SAMPLE_FLAGS_NON_SYNC).i32(s.compositionOffset);
      dataOffset += size;
    });
    w.end().end(); // trun, traf
  });
  w.end();
  w.start('mdat');
  for (const run of used) {
    for (const s of run.samples) {
      if (Buffer.isBuffer(s.payload)) w.bytes(s.payload);
      else for (const nal of s.payload) w.u32(nal.length).bytes(nal);
    }
  }
  w.end();
  return w.finish();
}
