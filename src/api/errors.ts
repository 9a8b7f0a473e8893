import type { FastifyError } from 'fastify';
import { InvalidTokenError, KeysUnavailableError } from '../auth/errors.js';
import { DeviceCommandError, DeviceUnavailableError, NotFoundError } from '../domain/errors.js';
import { HlsNotFoundError, HlsRequestError, HlsUnavailableError } from '../media/hls/errors.js';
import { RepeatedJsonNameError } from './json-body.js';
import { StreamUnavailableError } from '../media/relay/streams.js';
import { TicketError, type TicketFailure } from '../media/ticket.js';
import { CodecMismatchError } from '../media/webrtc/codec-match.js';
import { NotSdpError, SdpTooLargeError, WhepRefusedError } from '../media/webrtc/errors.js';
import { OfferError } from '../media/webrtc/offer.js';
import { EventStreamFullError } from './events/hub.js';
import { StillBusyError, StillError } from '../media/still/errors.js';

/** An error with its HTTP form. Everything thrown in the API is turned into one of these in toApiError. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly statusCode: number,
    readonly code: string,
    readonly description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
  }
}

export const REALM = 'edge-gateway';

const quote = (s: string): string => `"${s.replace(/["\\]/g, '')}"`;

/** RFC 6750 §3 challenge. */
export function bearerChallenge(params: Record<string, string> = {}): string {
  return ['Bearer realm="' + REALM + '"', ...Object.entries(params).map(([k, v]) => `${k}=${quote(v)}`)].join(', ');
}

export const badRequest = (description: string) => new ApiError(400, 'invalid_request', description);

export const authErrors = {
  missing: () => new ApiError(401, 'unauthorized', 'a bearer access token is required', { 'www-authenticate': bearerChallenge() }),
  malformed: (reason: string) =>
    new ApiError(400, 'invalid_request', reason, {
      'www-authenticate': bearerChallenge({ error: 'invalid_request', error_description: reason }),
    }),
  invalid: (reason: string) =>
    new ApiError(401, 'invalid_token', reason, {
      'www-authenticate': bearerChallenge({ error: 'invalid_token', error_description: reason }),
    }),
  insufficientScope: (scope: string) =>
    new ApiError(403, 'insufficient_scope', `this request needs the scope ${scope}`, {
      'www-authenticate': bearerChallenge({ error: 'insufficient_scope', scope }),
    }),
  insufficientAnyScope: (scopes: readonly string[]) =>
    new ApiError(403, 'insufficient_scope', `this request needs one of the scopes ${scopes.join(', ')}`, {
      'www-authenticate': bearerChallenge({ error: 'insufficient_scope', scope: scopes.join(' ') }),
    }),
};

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const PART_NAMES: Record<string, string> = { querystring: 'query parameter', params: 'path parameter', body: 'body field', headers: 'header' };

const firstOf = (list: unknown): string => (Array.isArray(list) ? String(list[0]) : '?');

/** One line naming the parameter and what it must be. */
export function describeValidation(errors: readonly AjvError[], context: string | undefined): string {
  const err = errors.find((e) => e.keyword === 'additionalProperties') ?? errors.find((e) => e.keyword === 'enum') ?? errors[0];
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
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'string';
}

/** The single mapping from thrown errors to API errors; null for an unexpected error (→ 500). */
export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof InvalidTokenError) return authErrors.invalid(err.reason);
  if (err instanceof KeysUnavailableError)
    return new ApiError(503, 'temporarily_unavailable', 'token signing keys cannot be had right now; try again later', { 'retry-after': '30' });
  if (err instanceof NotFoundError) return new ApiError(404, 'not_found', err.message);
  if (err instanceof DeviceUnavailableError) return new ApiError(409, 'device_unavailable', err.message);
  if (err instanceof DeviceCommandError) return new ApiError(502, 'device_error', err.message);
  const live = liveApiError(err);
  if (live) return live;
  if (err instanceof TicketError && err.kind === 'playback') return playbackTicketError(err);
  if (err instanceof HlsRequestError) return badRequest(err.message);
  if (err instanceof HlsNotFoundError) return new ApiError(404, 'not_found', err.message);
  if (err instanceof HlsUnavailableError) return new ApiError(503, 'temporarily_unavailable', err.message, { 'retry-after': '1' });
  if (err instanceof EventStreamFullError) return new ApiError(503, 'temporarily_unavailable', err.message, { 'retry-after': String(err.retryAfterS) });
  if (err instanceof StillBusyError) return new ApiError(503, 'temporarily_unavailable', `too many pictures being made: ${err.message}`, { 'retry-after': '1' });
  if (err instanceof StillError) return new ApiError(503, 'snapshot_unavailable', err.message, { 'retry-after': '2' });
  if (err instanceof RepeatedJsonNameError) return badRequest(err.member === null ? 'a body field is given more than once' : `body field ${err.member} is given more than once`);
  if (err instanceof SyntaxError && (err as { statusCode?: number }).statusCode === 400) return badRequest('the body is not valid JSON');
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
  if (err instanceof OfferError) return new ApiError(400, 'invalid_offer', `the SDP offer cannot be used (${err.code}): ${err.message}`);
  if (err instanceof CodecMismatchError) return new ApiError(400, 'unsupported_codec', `${err.message} (camera codecs: ${err.cameraCodecs.join(', ') || 'none'})`);
  if (err instanceof SdpTooLargeError) return new ApiError(413, 'payload_too_large', err.message);
  if (err instanceof NotSdpError) return new ApiError(415, 'unsupported_media_type', err.message);
  if (err instanceof WhepRefusedError) {
    const retry = { 'retry-after': String(err.retryAfterS) };
    return err.reason === 'per_address_limit' ? new ApiError(429, 'too_many_requests', err.message, retry) : new ApiError(503, 'temporarily_unavailable', err.message, retry);
  }
  if (err instanceof StreamUnavailableError) return new ApiError(503, 'stream_unavailable', `the camera stream cannot be had right now: ${err.message}`, { 'retry-after': '5' });
  // Only an authentic ticket is said to be expired; any other ticket failure is answered as an unknown path.
  if (err instanceof TicketError && err.kind === 'stream' && err.reason === 'expired') return new ApiError(401, 'expired_ticket', 'the stream address has expired: get a new one from GET /v1/devices/{device_id}/stream');
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

/** The ticket of GET /v1/recordings/{id}/play: an expired one is 401 as on /live, any other refusal 403 with its reason. */
function playbackTicketError(err: TicketError): ApiError {
  const description = PLAYBACK_REFUSED[err.reason];
  return err.reason === 'expired' ? new ApiError(401, 'expired_ticket', description) : new ApiError(403, 'invalid_ticket', description);
}
