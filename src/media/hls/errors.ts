// A playlist request the HLS server must refuse (400): a blocking-reload parameter that is not a
// number, a part without a segment, or a segment too far ahead of the live edge (RFC 8216bis
// 6.2.5.2). Typed so that the server maps it in src/api/errors.ts, in one place.

export class HlsRequestError extends Error {
  override readonly name = 'HlsRequestError';
}

/** No such session, segment or part (any more): 404. */
export class HlsNotFoundError extends Error {
  override readonly name = 'HlsNotFoundError';
}

/** Why a request could not be served now (503, with Retry-After), as counted in /metrics. */
export type HlsRefusal = 'too_many_muxers' | 'too_many_sessions' | 'too_many_blocked' | 'stream_unavailable' | 'timeout';

export class HlsUnavailableError extends Error {
  override readonly name = 'HlsUnavailableError';
  constructor(
    readonly reason: HlsRefusal,
    message: string,
  ) {
    super(message);
  }
}
