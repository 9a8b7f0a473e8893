import type { Readable } from 'node:stream';
import Type, { type Static, type TSchema } from 'typebox';
import { ALERT_TYPES, DEVICE_STATUSES, DEVICE_TYPES, EVENT_TYPES, CONTROL_ACTIONS, RECORDING_STATUSES } from '../domain/types.js';
import { ID_PATTERN } from '../domain/ids.js';

// Shared schemas: the one source of the API's request/response types, validation, serialisation
// and OpenAPI document. Route-specific schemas live beside their routes. A schema with a title is
// a named type of the OpenAPI document (#/components/schemas/<title>, src/api/openapi-document.ts).

/**
 * `type: [T, "null"]` rather than anyOf: the response serialiser writes it directly, where anyOf
 * would make it run a validator per field to pick a branch (measured: a tenth of a device list's cost).
 */
const Nullable = <T extends TSchema & { type: string }>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds, e.g. 2026-11-22T08:15:30.120Z' });
export const NullableTimestamp = Nullable(Timestamp);
export const NullableString = Nullable(Type.String());

export const Id = Type.String({ pattern: ID_PATTERN, description: 'Opaque URL-safe identifier' });
const NullableId = Nullable(Id);

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable code, e.g. invalid_request, invalid_token, not_found' }),
    error_description: Type.String(),
  },
  { title: 'ErrorBody' },
);

/** A page of a list; named after its item (DevicePage) when the item has a name (its title). */
export const Envelope = <T extends TSchema & { title?: string }>(item: T) =>
  Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Unsafe<string | null>({ type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last page' }),
    },
    item.title === undefined ? {} : { title: `${item.title}Page` },
  );

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size (1–200)' }),
  cursor: Type.String({ minLength: 1, maxLength: 256, description: 'next_cursor from the previous page' }),
};

export const DeviceSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    type: Type.Enum([...DEVICE_TYPES]),
    status: Type.Enum([...DEVICE_STATUSES]),
    model: NullableString,
    manufacturer: NullableString,
    firmware_version: NullableString,
    last_seen_at: NullableTimestamp,
    address: Type.Union([Type.String(), Type.Null()], { description: "host[:port] of the camera's ONVIF service on the LAN (never credentials), so an unauthorized camera can be told apart from a dead one; null for other devices" }),
  },
  { title: 'Device' },
);

export const RecordingSchema = Type.Object(
  {
    id: Id,
    device_id: Id,
    event_type: Type.Enum([...EVENT_TYPES]),
    started_at: Timestamp,
    ended_at: Timestamp,
    duration_s: Type.Number({ description: 'ended_at − started_at in seconds (milliseconds kept)' }),
    size_bytes: Type.Integer(),
    content_type: Type.Literal('video/mp4'),
    alert_id: NullableId,
    download_url: Type.String({ description: 'Path of the download on this gateway, relative to the API origin' }),
  },
  { title: 'Recording' },
);

export const AlertSchema = Type.Object(
  {
    id: Id,
    device_id: Id,
    type: Type.Enum([...ALERT_TYPES]),
    message: Type.String(),
    created_at: Timestamp,
    read: Type.Boolean(),
    read_at: NullableTimestamp,
    recording_id: NullableId,
    recording_status: Type.Enum([...RECORDING_STATUSES], {
      description:
        'What became of the clip: none (device_offline), pending (being recorded), recorded, partial (footage of the event is missing), lost (no clip)',
    }),
    recording_status_reason: Nullable(Type.String({ description: 'Why footage is missing (partial, lost), else null' })),
  },
  { title: 'Alert' },
);

export const ControlResultSchema = Type.Object(
  {
    id: Id,
    device_id: Id,
    action: Type.Enum([...CONTROL_ACTIONS]),
    status: Type.Enum(['succeeded', 'failed']),
    requested_at: Timestamp,
    completed_at: NullableTimestamp,
    error: NullableString,
  },
  { title: 'ControlResult' },
);

export const StreamAddressSchema = Type.Object(
  {
    stream_url: Type.String({ description: 'rtsp:// address through the gateway relay' }),
    expires_at: Timestamp,
  },
  { title: 'StreamAddress' },
);

/**
 * An error answer: the shared body, and what the status means there (the response's description in
 * the OpenAPI document; the serialiser ignores the keyword).
 */
export const errorResponse = (meaning: string) => ({ ...ErrorBody, 'x-response-description': meaning });

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
  401: errorResponse('unauthorized: no bearer token; invalid_token: the token is not valid (WWW-Authenticate says why)'),
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
