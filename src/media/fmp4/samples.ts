import type { AudioFrame } from '../access-unit.js';
import type { TimedUnit } from './decode-timeline.js';
import type { FragmentSample } from './fragment.js';

// From a dated audio frame to what fragmentChunks takes: no copy of its bytes. Video goes into a
// part's sample data instead (sample-data.ts).

export function audioSample(timed: TimedUnit<AudioFrame>): FragmentSample {
  return { duration: timed.duration, compositionOffset: 0, keyframe: true, payload: timed.unit.data };
}
