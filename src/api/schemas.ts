import type { Readable } from 'node:stream';
import Type, { type TSchema } from 'typebox';
import { TOKEN_ERROR_CODES } from '../auth/oauth/errors.js';
import { API_ERROR_CODES, API_ERRORS } from '../domain/api-errors.js';
import { Timestamp } from '../domain/record-schemas.js';
import { STREAM_PROTOCOLS } from '../domain/types.js';

// Shared schemas: the one source of the API's request/response types, validation, serialisation
// and OpenAPI document. The records' shapes are in src/domain/record-schemas.ts (sync publishes
// them too) and exported again here; route-specific schemas live beside their routes. A schema
// with a title is a named type of the OpenAPI document (#/components/schemas/<title>,
// src/api/openapi-document.ts).

export { Id, NullableString, NullableTimestamp, Timestamp } from '../domain/record-schemas.js';
export { AlertSchema, ControlResultSchema, DeviceSchema, RecordingSchema } from '../domain/record-schemas.js';

/**
 * The API's error body: `error` is a code of the catalogue (src/domain/api-errors.ts), each listed with its status and
 * meaning.
 */
export const ErrorBody = Type.Object(
  {
    error: Type.Enum(API_ERROR_CODES, {
      description: [
        'Machine-readable code; the status it comes with and what it means:',
        ...API_ERROR_CODES.map((code) => `- \`${code}\` (${API_ERRORS[code].status}): ${API_ERRORS[code].description}`),
      ].join('\n'),
    }),
    error_description: Type.String(),
  },
  { title: 'ErrorBody' },
);

/** The error body of the OAuth token and revocation endpoints (RFC 6749 §5.2). */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.Enum([...TOKEN_ERROR_CODES], { description: 'RFC 6749 §5.2 error code' }),
    error_description: Type.String(),
  },
  { title: 'OAuthErrorBody' },
);

/** A page of a list; named after its item (DevicePage) when the item has a name (its title). */
export const Envelope = <T extends TSchema & { title?: string }>(item: T) =>
  Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Unsafe<string | null>({
        type: ['string', 'null'],
        description: 'Pass as cursor for the next page; null on the last page',
      }),
    },
    item.title === undefined ? {} : { title: `${item.title}Page` },
  );

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size (1–200)' }),
  cursor: Type.String({ minLength: 1, maxLength: 256, description: 'next_cursor from the previous page' }),
};

export const StreamAddressSchema = Type.Object(
  {
    stream_url: Type.String({
      description: 'rtsp:// address on the gateway relay, or https:// WHEP endpoint (webrtc) or LL-HLS playlist (hls)',
    }),
    expires_at: Timestamp,
    protocol: Type.Enum([...STREAM_PROTOCOLS]),
  },
  { title: 'StreamAddress' },
);

/**
 * An error answer: the shared body, and what the status means there (the response's description in
 * the OpenAPI document; the serialiser ignores the keyword).
 */
export const errorResponse = (meaning: string) => ({ ...ErrorBody, 'x-response-description': meaning });

/** An error answer of the OAuth token and revocation endpoints, as errorResponse. */
export const oauthErrorResponse = (meaning: string) => ({ ...OAuthErrorBody, 'x-response-description': meaning });

/**
 * Answered by Node's HTTP parser before any route (src/api/client-error.ts), so possible for every
 * operation, public ones included.
 */
export const parserErrorResponses = {
  408: errorResponse('invalid_request: the request was not received whole within api.request_timeout_s'),
  431: errorResponse("invalid_request: the request's header section is larger than 16 KiB"),
};

/** Responses every protected route can give besides its success. */
export const errorResponses = {
  400: errorResponse('invalid_request: bad input (named in error_description), or a malformed Authorization header'),
  401: errorResponse(
    'unauthorized: no bearer token; invalid_token: the token is not valid (WWW-Authenticate says why)',
  ),
  403: errorResponse('insufficient_scope: the token lacks the scope of this operation'),
  ...parserErrorResponses,
  503: errorResponse("temporarily_unavailable: the token issuer's signing keys cannot be had right now (Retry-After)"),
};

/** A response without a body: a 304. */
export const NoBody = (description: string) => Type.Unsafe<undefined>({ type: 'null', description });

/** A file sent as it is, streamed from disk; no body for HEAD or an empty file. */
export const FileBody = (mediaType: string, description: string) => ({
  description,
  content: { [mediaType]: { schema: Type.Unsafe<Readable | undefined>({ type: 'string', format: 'binary' }) } },
});

/** For operations on one resource named in the path. */
export const notFoundResponse = { 404: errorResponse('not_found: no resource with this id') };
