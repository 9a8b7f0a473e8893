import type { FastifyError, FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import { InvalidTokenError, KeysUnavailableError } from '../auth/errors.js';
import { API_ERRORS, type ApiErrorCode } from '../domain/api-errors.js';
import {
  ConflictError,
  DeviceCommandError,
  DeviceUnavailableError,
  GatewayError,
  InvalidSettingError,
  NotFoundError,
  NotSupportedError,
  UnknownPresetError,
} from '../domain/errors.js';
import { TicketError, type TicketFailure } from '../media/errors.js';
import { HlsNotFoundError, HlsRequestError, HlsUnavailableError } from '../media/hls/errors.js';
import { StreamUnavailableError } from '../media/relay/errors.js';
import { StillBusyError, StillError } from '../media/still/errors.js';
import {
  CodecMismatchError,
  NotSdpError,
  OfferError,
  SdpTooLargeError,
  WhepRefusedError,
} from '../media/webrtc/errors.js';
import { EventStreamFullError } from './events/errors.js';
import type { ErrorBody } from './schemas.js';

// The API's errors: its own classes, and the one mapping of every error to its answer (toApiError),
// whose codes and statuses come from the catalogue in src/domain/api-errors.ts.

/**
 * An error with its HTTP form: a code of the API's catalogue, answered with the catalogue's
 * status. Everything thrown in the API is turned into one of these in toApiError.
 */
export class ApiError extends GatewayError {
  readonly statusCode: number;

  constructor(
    override readonly code: ApiErrorCode,
    readonly description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
    this.statusCode = API_ERRORS[code].status;
  }
}

/** The body of every error answer of the API. */
export const errorBody = (code: ApiErrorCode, description: string): Static<typeof ErrorBody> => ({
  error: code,
  error_description: description,
});

/** Answers with the error: its status, headers and body. */
export const sendApiError = (reply: FastifyReply, err: ApiError): FastifyReply =>
  reply.code(err.statusCode).headers(err.headers).send(errorBody(err.code, err.description));

/** The TLS certificate or key cannot be had: files named in the config that cannot be read, or openssl failed. */
export class TlsSetupError extends GatewayError.of('tls_setup') {}

/** A start_date or end_date of the recordings list that is no date (date-filter.ts); the message says why. */
export class DateFilterError extends GatewayError.of('date_filter') {}

/** A JSON object body naming a member twice: the client's malformed request (400). */
export class RepeatedJsonNameError extends GatewayError.of('repeated_json_name') {
  readonly statusCode = 400;

  /** The repeated name, or null when it is not one to echo back. */
  readonly member: string | null;

  constructor(name: string) {
    // Only names of at most 64 plain characters are echoed: the description is not an echo chamber.
    const member = /^[\w:-]{1,64}$/.test(name) ? name : null;
    super(member === null ? 'a name is given more than once' : `${member} is given more than once`);
    this.member = member;
  }
}

export const REALM = 'edge-gateway';

const quote = (s: string): string => `"${s.replace(/["\\]/g, '')}"`;

/** RFC 6750 §3 challenge. */
export function bearerChallenge(params: Record<string, string> = {}): string {
  return ['Bearer realm="' + REALM + '"', ...Object.entries(params).map(([k, v]) => `${k}=${quote(v)}`)].join(', ');
}

export const badRequest = (description: string) => new ApiError('invalid_request', description);

export const authErrors = {
  missing: () =>
    new ApiError('unauthorized', 'a bearer access token is required', { 'www-authenticate': bearerChallenge() }),
  malformed: (reason: string) =>
    new ApiError('invalid_request', reason, {
      'www-authenticate': bearerChallenge({ error: 'invalid_request', error_description: reason }),
    }),
  invalid: (reason: string) =>
    new ApiError('invalid_token', reason, {
      'www-authenticate': bearerChallenge({ error: 'invalid_token', error_description: reason }),
    }),
  insufficientScope: (scope: string) =>
    new ApiError('insufficient_scope', `this request needs the scope ${scope}`, {
      'www-authenticate': bearerChallenge({ error: 'insufficient_scope', scope }),
    }),
  insufficientAnyScope: (scopes: readonly string[]) =>
    new ApiError('insufficient_scope', `this request needs one of the scopes ${scopes.join(', ')}`, {
      'www-authenticate': bearerChallenge({ error: 'insufficient_scope', scope: scopes.join(' ') }),
    }),
};

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const PART_NAMES: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  body: 'body field',
  headers: 'header',
};

const firstOf = (list: unknown): string => (Array.isArray(list) ? String(list[0]) : '?');

/** One line naming the parameter and what it must be. */
export function describeValidation(errors: readonly AjvError[], context: string | undefined): string {
  const err =
    errors.find((e) => e.keyword === 'additionalProperties') ?? errors.find((e) => e.keyword === 'enum') ?? errors[0];
  const part = PART_NAMES[context ?? ''] ?? 'field';
  if (!err) return `invalid ${part}`;
  const name = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
  switch (err.keyword) {
    case 'additionalProperties':
      return `unknown ${part} ${firstOf(err.params.additionalProperties)}`;
    case 'required':
      return `${part} ${[name, firstOf(err.params.requiredProperties)].filter(Boolean).join('.')} is required`;
    case 'enum':
      return `${part} ${name} must be one of ${(err.params.allowedValues as unknown[]).join(', ')}`;
    default:
      if (!name) return context === 'body' ? 'the body must be a JSON object' : `invalid ${part}s`;
      return `${part} ${name} ${err.message ?? 'is invalid'}`;
  }
}

// Fastify's own errors for bodies: all bad input, so all 400 (an oversized body too: the spec's
// clients read one error shape, and 413 would be the only exception).
const FASTIFY_BAD_INPUT: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'the request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'the request body must be application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the body is empty',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the body is not valid JSON',
  FST_ERR_BAD_URL: 'the URL is malformed',
  FST_ERR_ASYNC_CONSTRAINT: 'the request is malformed',
};

function isFastifyError(err: unknown): err is FastifyError {
  // A GatewayError has a string code too (an ErrorCode), but is never one of Fastify's errors.
  return err instanceof Error && !(err instanceof GatewayError) && typeof (err as { code?: unknown }).code === 'string';
}

/** The single mapping from thrown errors to API errors; null for an unexpected error (→ 500). */
export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof InvalidTokenError) return authErrors.invalid(err.reason);
  if (err instanceof KeysUnavailableError)
    return new ApiError('temporarily_unavailable', 'token signing keys cannot be had right now; try again later', {
      'retry-after': '30',
    });
  if (err instanceof NotFoundError) return new ApiError('not_found', err.message);
  if (err instanceof DeviceUnavailableError) return new ApiError('device_unavailable', err.message);
  if (err instanceof DeviceCommandError) return new ApiError('device_error', err.message);
  if (err instanceof ConflictError) return new ApiError('conflict', err.message);
  if (err instanceof NotSupportedError) return new ApiError('not_supported', err.message);
  if (err instanceof UnknownPresetError) return badRequest(`body field preset: ${err.message}`);
  if (err instanceof InvalidSettingError) return badRequest(`body field ${err.field} ${err.problem}`);
  const live = liveApiError(err);
  if (live) return live;
  if (err instanceof TicketError && err.kind === 'playback') return playbackTicketError(err, PLAYBACK_REFUSED);
  if (err instanceof TicketError && err.kind === 'footage') return playbackTicketError(err, FOOTAGE_REFUSED);
  if (err instanceof HlsRequestError) return badRequest(err.message);
  if (err instanceof HlsNotFoundError) return new ApiError('not_found', err.message);
  if (err instanceof HlsUnavailableError)
    return new ApiError('temporarily_unavailable', err.message, { 'retry-after': '1' });
  if (err instanceof EventStreamFullError)
    return new ApiError('temporarily_unavailable', err.message, { 'retry-after': String(err.retryAfterS) });
  if (err instanceof StillBusyError)
    return new ApiError('temporarily_unavailable', `too many pictures being made: ${err.message}`, {
      'retry-after': '1',
    });
  if (err instanceof StillError) return new ApiError('snapshot_unavailable', err.message, { 'retry-after': '2' });
  if (err instanceof RepeatedJsonNameError)
    return badRequest(
      err.member === null ? 'a body field is given more than once' : `body field ${err.member} is given more than once`,
    );
  if (err instanceof SyntaxError && (err as { statusCode?: number }).statusCode === 400)
    return badRequest('the body is not valid JSON');
  if (isFastifyError(err)) {
    if (err.validation) return badRequest(describeValidation(err.validation, err.validationContext));
    const known = FASTIFY_BAD_INPUT[err.code];
    if (known) return badRequest(known);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return badRequest(err.message);
  }
  return null;
}

/** The errors of /live (WHEP): the offer, the camera's codecs, the bounds, the ticket's expiry. */
function liveApiError(err: unknown): ApiError | null {
  if (err instanceof OfferError)
    return new ApiError('invalid_offer', `the SDP offer cannot be used (${err.code}): ${err.message}`);
  if (err instanceof CodecMismatchError)
    return new ApiError(
      'unsupported_codec',
      `${err.message} (camera codecs: ${err.cameraCodecs.join(', ') || 'none'})`,
    );
  if (err instanceof SdpTooLargeError) return new ApiError('payload_too_large', err.message);
  if (err instanceof NotSdpError) return new ApiError('unsupported_media_type', err.message);
  if (err instanceof WhepRefusedError) {
    const retry = { 'retry-after': String(err.retryAfterS) };
    return err.reason === 'per_address_limit'
      ? new ApiError('too_many_requests', err.message, retry)
      : new ApiError('temporarily_unavailable', err.message, retry);
  }
  if (err instanceof StreamUnavailableError)
    return new ApiError('stream_unavailable', `the camera stream cannot be had right now: ${err.message}`, {
      'retry-after': '5',
    });
  // Only an authentic ticket is said to be expired; any other ticket failure is answered as an unknown path.
  if (err instanceof TicketError && err.kind === 'stream' && err.reason === 'expired')
    return new ApiError(
      'expired_ticket',
      'the stream address has expired: get a new one from GET /v1/devices/{device_id}/stream',
    );
  return null;
}

const PLAYBACK_REFUSED: Record<TicketFailure, string> = {
  expired: 'the playback address has expired: get a new one from GET /v1/recordings/{recording_id} (playback_url)',
  malformed: 'the ticket is not a playback ticket of this gateway (malformed)',
  unknown_key: 'the ticket was signed with a key this gateway no longer has: get a new playback_url',
  bad_signature: 'the ticket has been altered (its signature does not match)',
  wrong_kind: "a stream ticket does not play recordings: use the recording's playback_url",
  other_subject: 'the ticket is for another recording',
};

const FOOTAGE_REFUSED: Record<TicketFailure, string> = {
  ...PLAYBACK_REFUSED,
  expired: 'the playback address has expired: get a new one from GET /v1/devices/{device_id}/footage/playback',
  wrong_kind: 'not a footage ticket: use the playback_url of GET /v1/devices/{device_id}/footage/playback',
  other_subject: 'the ticket is for other footage',
};

/**
 * The ticket of a playback address (a recording's, or a window of footage's): an expired one is 401
 * as on /live, any other refusal 403 with its reason.
 */
function playbackTicketError(err: TicketError, refused: Record<TicketFailure, string>): ApiError {
  const description = refused[err.reason];
  return err.reason === 'expired'
    ? new ApiError('expired_ticket', description)
    : new ApiError('invalid_ticket', description);
}
