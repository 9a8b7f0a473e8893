// Where a live stream's samples are cut into LL-HLS parts and segments (RFC 8216bis 4.4.4.9,
// 4.4.3.8). A segment is the camera's group of pictures: it starts at a keyframe, so a player can
// start on any segment. A part holds at most PART-TARGET of media; a segment at most the target
// duration, so a camera whose GOP is longer than that gets a segment cut inside the GOP (its first
// part then is not INDEPENDENT). Times are in the cutting track's timescale (video: 90 kHz).

export type Cut = 'none' | 'part' | 'segment';

export interface CutLimits {
  partTarget: number;
  targetDuration: number;
}

export interface CutState {
  /** Media already in the open part. */
  partElapsed: number;
  /** Media already in the open segment. */
  segmentElapsed: number;
}

/** What to close before adding a sample of this duration and keyframe flag. */
export function cutBefore(state: CutState, sample: { keyframe: boolean; duration: number }, limits: CutLimits): Cut {
  if (state.segmentElapsed > 0 && (sample.keyframe || state.segmentElapsed + sample.duration > limits.targetDuration))
    return 'segment';
  if (state.partElapsed > 0 && state.partElapsed + sample.duration > limits.partTarget) return 'part';
  return 'none';
}
