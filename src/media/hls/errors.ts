import { GatewayError } from '../../domain/errors.js';

// The errors of LL-HLS. The server's are typed so that src/api/errors.ts maps them, in one place.

/**
 * A playlist request the HLS server must refuse (400): a blocking-reload parameter that is not a
 * number, a part without a segment, or a segment too far ahead of the live edge (RFC 8216bis 6.2.5.2).
 */
export class HlsRequestError extends GatewayError.of('hls_request') {}

/** No such session, segment or part (any more): 404. */
export class HlsNotFoundError extends GatewayError.of('hls_not_found') {}

/** Why a request could not be served now (503, with Retry-After), as counted in /metrics. */
export type HlsRefusal =
  'too_many_muxers' | 'too_many_sessions' | 'too_many_blocked' | 'stream_unavailable' | 'timeout';

export class HlsUnavailableError extends GatewayError.of('hls_unavailable') {
  constructor(
    readonly reason: HlsRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** A playlist that playlist-parse.ts cannot read back (a tag or attribute list it cannot place). */
export class PlaylistParseError extends GatewayError.of('playlist_parse') {}
