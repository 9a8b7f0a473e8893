import { GatewayError } from '../../domain/errors.js';

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

export class StillError extends GatewayError.of('still') {
  constructor(
    readonly failure: StillFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Too many decodes running and waiting (snapshot.max_concurrent_decodes / max_queued_decodes). */
export class StillBusyError extends GatewayError.of('still_busy') {}

/** How a long-lived ffmpeg (live-decoder.ts) failed: the reasons of edge_gateway_snapshot_decoder_failures_total. */
export type LiveFailure = 'timeout' | 'exited' | 'stray_output' | 'bad_output' | 'spawn';

/** A long-lived ffmpeg could not decode the picture: a StillError (decode_failed) saying how it failed. */
export class LiveDecoderError extends StillError {
  constructor(
    readonly reason: LiveFailure,
    message: string,
  ) {
    super('decode_failed', message);
  }
}

/** ffmpeg's JPEG output cannot be cut into pictures (jpeg-stream.ts). */
export class JpegStreamError extends GatewayError.of('jpeg_stream') {}
