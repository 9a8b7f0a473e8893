import { GatewayError, type CodecMismatchCode, type OfferErrorCode } from '../../domain/errors.js';

// Why a WHEP request cannot start or reach a session, or what in the offer or the camera's stream
// keeps an answer from being made; src/api/errors.ts maps each to its status.

export type WhepRefusal =
  /** webrtc.max_sessions reached (503). */
  | 'capacity'
  /** Too many sessions started or starting from one address (429). */
  | 'per_address_limit'
  /** The WebRTC stack could not make an answer in time (503). */
  | 'stack_failed';

export class WhepRefusedError extends GatewayError.of('whep_refused') {
  constructor(
    readonly reason: WhepRefusal,
    message: string,
    /** Seconds after which a retry may succeed. */
    readonly retryAfterS: number,
  ) {
    super(message);
  }
}

/** The offer's body is over the SDP bound (413). */
export class SdpTooLargeError extends GatewayError.of('sdp_too_large') {
  constructor(readonly limit: number) {
    super(`the SDP offer is larger than ${limit} bytes`);
  }
}

/** A WHEP POST whose body is not application/sdp (415). */
export class NotSdpError extends GatewayError.of('not_sdp') {
  constructor() {
    super('the body of a WHEP POST must be application/sdp (RFC 9725)');
  }
}

/** An offer a session cannot be built from (400): `code` says what is wrong, the message names the line or section. */
export class OfferError extends GatewayError {
  constructor(
    override readonly code: OfferErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** No answer can be made: the message and `cameraCodecs` say what the camera sends. */
export class CodecMismatchError extends GatewayError {
  constructor(
    override readonly code: CodecMismatchCode,
    /** Each camera track as `ENCODING/clock` with its media, e.g. `H265/90000 (video)`. */
    readonly cameraCodecs: readonly string[],
    message: string,
  ) {
    super(message);
  }
}

/** Why a candidate line cannot be used; the offer reader wraps it with the line's place. */
export class CandidateError extends GatewayError.of('candidate') {}

/** The WebRTC stack's local description lacks what the answer needs (trusted text: our own stack wrote it). */
export class LocalDescriptionError extends GatewayError.of('local_description') {}

/** The session closed (its peer connection failed, the gateway stopped) before its answer was sent. */
export function endedWhileStarting(): WhepRefusedError {
  return new WhepRefusedError('stack_failed', 'the WebRTC session ended while it was being set up', 5);
}
