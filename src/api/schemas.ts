import Type, { type TSchema } from 'typebox';
import { Timestamp } from '../domain/record-schemas.js';

// Shared schemas: the one source of the API's request/response types, validation, serialisation
// and OpenAPI document. The records' shapes are in src/domain/record-schemas.ts (sync publishes
// them too) and exported again here; route-specific schemas live beside their routes.

export { Id, NullableString, NullableTimestamp, Timestamp } from '../domain/record-schemas.js';
export { AlertSchema, ControlResultSchema, DeviceSchema, RecordingSchema } from '../domain/record-schemas.js';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable code, e.g. invalid_request, invalid_token, not_found' }),
    error_description: Type.String(),
  },

);

export const Envelope = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    next_cursor: Type.Unsafe<string | null>({ type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last page' }),
  });

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size (1–200)' }),
  cursor: Type.String({ minLength: 1, maxLength: 256, description: 'next_cursor from the previous page' }),
};

export const StreamAddressSchema = Type.Object(
  {
    stream_url: Type.String({ description: 'rtsp:// address through the gateway relay' }),
    expires_at: Timestamp,
  },

);

/** Responses every protected route can give besides its success. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  503: ErrorBody,
};
