// The API's error catalogue: every code its error body (`{ "error": code, "error_description": text }`)
// can carry, with the HTTP status it is answered with and what it means. src/api/errors.ts takes
// each answer's status from here and the OpenAPI document's ErrorBody lists the codes with their
// meanings (src/api/schemas.ts), so the two cannot drift. It sits in the domain, below the API,
// because every code here is also one of ErrorCode (errors.ts), the one union of the gateway's
// error codes. Clients branch on these codes: one is added, never renamed.

export interface ApiErrorEntry {
  readonly status: number;
  readonly description: string;
}

export const API_ERRORS = {
  invalid_request: {
    status: 400,
    description:
      'bad input, named in error_description (a parameter, the body, a malformed Authorization header); also 408 and 431 when the HTTP parser refuses the request',
  },
  invalid_offer: {
    status: 400,
    description: 'the WHEP offer cannot be used; error_description names the line or section at fault',
  },
  unsupported_codec: {
    status: 400,
    description: "the WHEP offer has no codec in common with the camera's, which error_description names",
  },
  unauthorized: { status: 401, description: 'no bearer token, or another scheme; WWW-Authenticate: Bearer' },
  invalid_token: {
    status: 401,
    description:
      'the token is not valid (signature, expiry, issuer, audience, claims, unknown key); WWW-Authenticate says why',
  },
  expired_ticket: {
    status: 401,
    description: 'a ticketed address (a playback_url, a /live address) has expired: get a new one',
  },
  insufficient_scope: {
    status: 403,
    description: 'the token lacks the scope of the operation; WWW-Authenticate names it',
  },
  invalid_ticket: {
    status: 403,
    description: 'the playback ticket is altered, malformed, of another key, for another recording, or a stream ticket',
  },
  not_found: { status: 404, description: 'no resource with this id, or no such route' },
  method_not_allowed: { status: 405, description: 'the resource does not take this method; Allow says which it takes' },
  device_unavailable: {
    status: 409,
    description: 'the device cannot take the request now (offline, or without the stream asked for)',
  },
  not_supported: {
    status: 409,
    description:
      'the device cannot do this at all (pan, tilt or zoom of a fixed camera): its ptz field says what it can',
  },
  conflict: {
    status: 409,
    description:
      "the change conflicts with the gateway's state: a camera setting the config file sets (change it there), a camera already known at that address, a push subscription past the bounds, notifications off",
  },
  precondition_failed: { status: 412, description: 'If-Match or If-Unmodified-Since does not hold' },
  payload_too_large: { status: 413, description: 'the WHEP offer is larger than allowed' },
  unsupported_media_type: { status: 415, description: 'the body of a WHEP POST is not application/sdp' },
  range_not_satisfiable: {
    status: 416,
    description: 'the byte range starts past the end of the file or cannot be read (Content-Range: bytes */size)',
  },
  too_many_requests: { status: 429, description: 'too many live sessions from this address (Retry-After)' },
  server_error: { status: 500, description: 'the gateway failed to answer; its log says why' },
  device_error: {
    status: 502,
    description:
      'the camera answered a control action with an error (a PTZ action: also when it did not answer or dropped the connection)',
  },
  temporarily_unavailable: {
    status: 503,
    description: "a bound is reached, or the token issuer's signing keys cannot be had right now (Retry-After)",
  },
  stream_unavailable: { status: 503, description: 'the camera stream cannot be had right now (Retry-After)' },
  snapshot_unavailable: {
    status: 503,
    description: "no picture could be had from the camera's stream or its snapshot URI (Retry-After)",
  },
} as const satisfies Record<string, ApiErrorEntry>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/** The codes in the catalogue's order (by status). */
export const API_ERROR_CODES = Object.keys(API_ERRORS) as ApiErrorCode[];
