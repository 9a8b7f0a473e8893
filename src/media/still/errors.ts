// Why no still picture could be made. The API maps each reason in one place (src/api/errors.ts).

export type StillFailure =
  /** The packets held no complete keyframe (lost packets, a truncated or malformed picture). */
  | 'no_keyframe'
  /** The keyframe came without SPS/PPS (or VPS) and the SDP has none either. */
  | 'no_parameter_sets'
  /** The stream has no H.264 or H.265 video. */
  | 'no_video'
  /** ffmpeg failed, wrote no picture, or took longer than allowed. */
  | 'decode_failed'
  /** The camera's own snapshot could not be had (unreachable, refused, not a JPEG). */
  | 'camera_snapshot_failed'
  /** Neither the relay nor the camera gave a picture in time. */
  | 'unavailable';

export class StillError extends Error {
  override readonly name = 'StillError';
  constructor(
    readonly failure: StillFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Too many decodes running and waiting (snapshot.max_concurrent_decodes / max_queued_decodes). */
export class StillBusyError extends Error {
  override readonly name = 'StillBusyError';
}
