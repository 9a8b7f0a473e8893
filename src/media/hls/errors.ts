// A playlist request the HLS server must refuse (400): a blocking-reload parameter that is not a
// number, a part without a segment, or a segment too far ahead of the live edge (RFC 8216bis
// 6.2.5.2). Typed so that the server maps it in src/api/errors.ts, in one place.

export class HlsRequestError extends Error {
  override readonly name = 'HlsRequestError';
}
