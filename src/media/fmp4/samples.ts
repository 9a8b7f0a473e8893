import type { AudioFrame, VideoAccessUnit } from '../access-unit.js';
import type { TimedUnit } from './decode-timeline.js';
import type { FragmentSample } from './fragment.js';

// From a dated access unit or audio frame to what buildFragment takes: no copy of the media bytes
// (NAL units get their length prefixes when the fragment is written).

export function videoSample(timed: TimedUnit<VideoAccessUnit>): FragmentSample {
  return {
    duration: timed.duration,
    compositionOffset: timed.compositionOffset,
    keyframe: timed.unit.keyframe,
    payload: timed.unit.nalus,
  };
}

export function audioSample(timed: TimedUnit<AudioFrame>): FragmentSample {
  return { duration: timed.duration, compositionOffset: 0, keyframe: true, payload: timed.unit.data };
}
