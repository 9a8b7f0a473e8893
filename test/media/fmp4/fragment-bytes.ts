import type { VideoAccessUnit } from '../../../src/media/access-unit.js';
import type { TimedUnit } from '../../../src/media/fmp4/decode-timeline.js';
import { fragmentChunks, type FragmentSample, type FragmentTrackRun } from '../../../src/media/fmp4/fragment.js';

// Fragments for the tests as a player or a file gets them: one buffer, the chunks joined.

export function buildFragment(sequence: number, runs: readonly FragmentTrackRun[]): Buffer {
  return Buffer.concat(fragmentChunks(sequence, runs));
}

/** A dated access unit as a sample with its NAL units (the gateway lays them out in sample-data.ts). */
export function videoSample(timed: TimedUnit<VideoAccessUnit>): FragmentSample {
  return {
    duration: timed.duration,
    compositionOffset: timed.compositionOffset,
    keyframe: timed.unit.keyframe,
    payload: timed.unit.nalus,
  };
}
