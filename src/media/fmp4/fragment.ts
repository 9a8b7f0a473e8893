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

// One movie fragment (moof + mdat): an HLS part, a CMAF chunk, an MSE append, as a list of buffers
// for a writer that takes one (writev) or a sink that joins it. Every input is checked before a
// byte is written and the exact sizes are computed first, so bad input is a MediaFormatError, never
// a box with a wrong size. A run's samples come either with their payloads (NAL units, audio
// frames) or laid out already in one buffer (sample-data.ts), which is handed on as it is.

export interface FragmentSample {
  /** Decode-time distance to the next sample, in the track's timescale. */
  duration: number;
  /** PTS − DTS in the track's timescale; negative for B-frames placed as decode-timeline.ts does. */
  compositionOffset: number;
  keyframe: boolean;
  /** Video: the NAL units (each written with a 4-byte length); audio: the coded frame. */
  payload: Buffer | readonly Buffer[];
}

/** A sample whose bytes are already in its run's `data` (sample-data.ts). */
export interface LaidOutSample {
  duration: number;
  compositionOffset: number;
  keyframe: boolean;
  /** Its bytes in the run's data, which holds the samples one after another. */
  size: number;
}

interface TrackRunBase {
  track: Fmp4Track;
  /** Decode time of the first sample, in the track's timescale. */
  baseDecodeTime: number;
}

/** Samples with their payloads. */
export interface PayloadTrackRun extends TrackRunBase {
  samples: readonly FragmentSample[];
  data?: undefined;
}

/** Samples whose bytes are laid out already. */
export interface LaidOutTrackRun extends TrackRunBase {
  samples: readonly LaidOutSample[];
  /** The samples' bytes as the mdat holds them, in order (the sum of their sizes). */
  data: Buffer;
}

export type FragmentTrackRun = PayloadTrackRun | LaidOutTrackRun;

const U32_MAX = 0xffffffff;
const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

function sampleSize(sample: FragmentSample): number {
  if (Buffer.isBuffer(sample.payload)) return sample.payload.length;
  let size = 0;
  for (const nal of sample.payload) size += 4 + nal.length;
  return size;
}

/** Each sample's size in the mdat, checked; a laid-out run's sizes must add up to its data. */
function sampleSizesOf(run: FragmentTrackRun, video: boolean): number[] {
  if (run.data !== undefined) {
    const sizes = run.samples.map((s) => s.size);
    for (const size of sizes) check(Number.isInteger(size) && size > 0, `sample size ${size}`);
    const sum = sizes.reduce((a, b) => a + b, 0);
    check(sum === run.data.length, `samples of ${sum} bytes in ${run.data.length} bytes of data`);
    return sizes;
  }
  return run.samples.map((s) => {
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
    return size;
  });
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new MediaFormatError('bad_sample', message);
}

interface Layout {
  /** The runs with samples. */
  used: FragmentTrackRun[];
  trafs: TrafLayout[];
  /** Each used run's sample sizes. */
  sizes: number[][];
  moofBytes: number;
  /** The mdat's size, its 8-byte header included. */
  mdatBytes: number;
}

/** Checks every input and computes the sizes of moof and mdat. */
function layOut(sequence: number, runs: readonly FragmentTrackRun[]): Layout {
  check(Number.isInteger(sequence) && sequence >= 1 && sequence <= U32_MAX, `fragment sequence ${sequence}`);
  const used = runs.filter((r) => r.samples.length > 0);
  check(used.length > 0, 'a fragment needs a sample');
  check(new Set(used.map((r) => r.track.id)).size === used.length, 'a track appears twice in one fragment');
  const trafs: TrafLayout[] = [];
  const sizes: number[][] = [];
  let mdatBytes = 8;
  for (const run of used) {
    const video = run.track.kind === 'video';
    check(
      Number.isSafeInteger(run.baseDecodeTime) && run.baseDecodeTime >= 0,
      `base decode time ${run.baseDecodeTime}`,
    );
    const samples: ReadonlyArray<FragmentSample | LaidOutSample> = run.samples;
    for (const s of samples) {
      check(Number.isInteger(s.duration) && s.duration >= 0 && s.duration <= U32_MAX, `sample duration ${s.duration}`);
      check(
        Number.isInteger(s.compositionOffset) && s.compositionOffset >= I32_MIN && s.compositionOffset <= I32_MAX,
        `composition offset ${s.compositionOffset}`,
      );
      check(video || s.compositionOffset === 0, 'audio samples have no composition offset');
    }
    const these = sampleSizesOf(run, video);
    for (const size of these) mdatBytes += size;
    trafs.push({ trackId: run.track.id, baseDecodeTime: run.baseDecodeTime, video, sampleCount: run.samples.length });
    sizes.push(these);
  }
  const moofBytes = 8 + MFHD_BYTES + trafs.reduce((sum, l) => sum + trafBytes(l), 0);
  check(mdatBytes <= U32_MAX && moofBytes + mdatBytes <= I32_MAX, `fragment of ${moofBytes + mdatBytes} bytes`);
  return { used, trafs, sizes, moofBytes, mdatBytes };
}

function writeMoof(w: BoxWriter, sequence: number, layout: Layout): void {
  w.start('moof');
  w.startFull('mfhd', 0, 0).u32(sequence).end();
  let dataOffset = layout.moofBytes + 8;
  layout.used.forEach((run, t) => {
    const traf = layout.trafs[t] as TrafLayout;
    const runSizes = layout.sizes[t] as number[];
    startTrafAndTrun(w, traf, dataOffset);
    const samples: ReadonlyArray<FragmentSample | LaidOutSample> = run.samples;
    samples.forEach((s, i) => {
      const size = runSizes[i] as number;
      w.u32(s.duration).u32(size);
      if (traf.video) w.u32(s.keyframe ? SAMPLE_FLAGS_SYNC : SAMPLE_FLAGS_NON_SYNC).i32(s.compositionOffset);
      dataOffset += size;
    });
    w.end().end(); // trun, traf
  });
  w.end();
}

/** A payload run's samples as the mdat holds them. */
function writePayloads(w: BoxWriter, samples: readonly FragmentSample[]): void {
  for (const s of samples) {
    if (Buffer.isBuffer(s.payload)) w.bytes(s.payload);
    else for (const nal of s.payload) w.u32(nal.length).bytes(nal);
  }
}

/**
 * moof + mdat for these runs (tracks with no samples are left out), numbered `sequence` (mfhd), as
 * a list: the moof and the mdat's header, then each run's sample bytes, a laid-out run's data as
 * given (a view, not copied).
 */
export function fragmentChunks(sequence: number, runs: readonly FragmentTrackRun[]): Buffer[] {
  const layout = layOut(sequence, runs);
  const head = new BoxWriter(layout.moofBytes + 8);
  writeMoof(head, sequence, layout);
  head.u32(layout.mdatBytes).fourcc('mdat');
  const chunks = [head.finish()];
  layout.used.forEach((run, t) => {
    if (run.data !== undefined) chunks.push(run.data);
    else {
      const w = new BoxWriter((layout.sizes[t] as number[]).reduce((a, b) => a + b, 0));
      writePayloads(w, run.samples);
      chunks.push(w.finish());
    }
  });
  return chunks;
}
