import { GatewayError, type MediaFormatCode } from '../domain/errors.js';
import type { TicketKind } from './ticket.js';

// The errors of the media code directly in src/media (tickets, SDP, bitstreams, media formats).

/**
 * Why a ticket is refused, a code for logs and callers to branch on. 'unknown_key': signed with a
 * key this gateway no longer has; 'wrong_kind': an authentic ticket of the other kind;
 * 'other_subject': a playback ticket of another recording.
 */
export type TicketFailure = 'malformed' | 'unknown_key' | 'bad_signature' | 'expired' | 'wrong_kind' | 'other_subject';

/** Each failure as people read it, in the error's message (the RTSP relay answers with it). */
const FAILURE_TEXT: Record<TicketFailure, string> = {
  malformed: 'malformed',
  unknown_key: 'unknown key',
  bad_signature: 'bad signature',
  expired: 'expired',
  wrong_kind: 'wrong kind',
  other_subject: 'other subject',
};

export class TicketError extends GatewayError.of('ticket') {
  /** The kind of ticket the caller asked for (not necessarily the kind it was given). */
  constructor(
    readonly reason: TicketFailure,
    readonly kind: TicketKind = 'stream',
  ) {
    super(`${kind} ticket ${FAILURE_TEXT[reason]}`);
  }
}

/** An SDP that cannot be used: too big, not SDP at all, or with a line that breaks the grammar. */
export class SdpError extends GatewayError.of('sdp') {}

/** Thrown by BitReader when a read runs past the end; parsers turn it into null or a typed error. */
export class BitstreamEndError extends GatewayError.of('bitstream_end') {}

/**
 * Bytes from a camera that cannot become a playable track: a parameter set or an audio config that
 * does not parse, an access unit the muxer cannot place. One error class so that callers map it to
 * one answer; `code` says which input was wrong.
 */
export class MediaFormatError extends GatewayError {
  constructor(
    override readonly code: MediaFormatCode,
    message: string,
  ) {
    super(message);
  }
}
