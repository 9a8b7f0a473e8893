// Why a WHEP request cannot start or reach a session; src/api/errors.ts maps each to its status.

export type WhepRefusal =
  /** webrtc.max_sessions reached (503). */
  | 'capacity'
  /** Too many sessions started or starting from one address (429). */
  | 'per_address_limit'
  /** The WebRTC stack could not make an answer in time (503). */
  | 'stack_failed';

export class WhepRefusedError extends Error {
  override readonly name = 'WhepRefusedError';
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
export class SdpTooLargeError extends Error {
  override readonly name = 'SdpTooLargeError';
  constructor(readonly limit: number) {
    super(`the SDP offer is larger than ${limit} bytes`);
  }
}

/** A WHEP POST whose body is not application/sdp (415). */
export class NotSdpError extends Error {
  override readonly name = 'NotSdpError';
  constructor() {
    super('the body of a WHEP POST must be application/sdp (RFC 9725)');
  }
}
