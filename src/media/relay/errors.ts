import { GatewayError } from '../../domain/errors.js';

/** Too many sessions from one address: the viewer's SETUP is answered 453. */
export class TooManySessionsError extends GatewayError.of('too_many_sessions') {}

/**
 * The camera stream cannot be had now (none for the profile, unreachable, refused, no usable video): RTSP 503, the
 * API's stream_unavailable.
 */
export class StreamUnavailableError extends GatewayError.of('stream_unavailable') {}

/** A viewer's request the relay refuses, with the RTSP status it answers. */
export class RtspStatusError extends GatewayError.of('rtsp_status') {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The relay's session with a camera failed; `kind` says how. `busy` is the camera's 503: it is there
 * but cannot serve the stream this moment (all its sessions taken, or the stream being prepared or
 * torn down), so asking again soon may work; `refused` is any other answer but 200 and 401.
 */
export class UpstreamError extends GatewayError.of('upstream') {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'unauthorized' | 'refused' | 'busy' | 'protocol' | 'stalled' | 'closed',
  ) {
    super(message);
  }
}
