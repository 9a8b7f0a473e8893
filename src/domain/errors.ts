import type { ApiErrorCode } from './api-errors.js';

// The gateway's errors. Every error class of src extends GatewayError, as every error of jose is a
// JOSEError: its `name` is its class's (so `String(err)` and the logs say which), and its `code` is
// one of ErrorCode, the one union below, which callers and tests may branch on. Each folder of src
// keeps its classes in its own errors.ts, as this one does the domain's; the API maps them to its
// answers in one place (src/api/errors.ts), other callers (MQTT commands) their own way. A
// programming error (a bad argument) stays a plain TypeError or RangeError.
//
// One convention for codes, snake_case. A class whose errors are all of one kind extends
// GatewayError.of(code), its code named after it, without `Error` (NotFoundError: not_found), and
// has it as a static `code` as well (`err.code === NotFoundError.code`); its subclasses share it. A
// class whose errors each carry one of a list takes the code in its constructor, from its list
// here. The codes of ApiError, OAuthError and CommandError go on the wire (the API's and the OAuth
// error bodies, MQTT command results): clients branch on them, so one is added, never renamed.

/** The codes of the classes with one code each, grouped by the folder whose errors.ts holds the class. */
export const CLASS_ERROR_CODES = [
  // domain
  'not_found',
  'device_unavailable',
  'device_command',
  'conflict',
  'not_supported',
  'unknown_preset',
  'invalid_setting',
  // platform
  'secret_box',
  // config
  'config',
  // store
  'store',
  'already_used',
  // onvif
  'camera_unreachable',
  'camera_unauthorized',
  'camera_fault',
  'soap_xml',
  // media (its own files)
  'ticket',
  'sdp',
  'bitstream_end',
  // media/rtsp
  'rtsp_parse',
  // media/relay
  'too_many_sessions',
  'stream_unavailable',
  'rtsp_status',
  'upstream',
  // media/footage
  'fragment_table',
  // media/still
  'still',
  'still_busy',
  'jpeg_stream',
  // detect
  'frame',
  'model_load',
  'detector_unavailable',
  'check_dropped',
  // media/recorder
  'ffmpeg',
  // media/webrtc
  'whep_refused',
  'sdp_too_large',
  'not_sdp',
  'candidate',
  'local_description',
  // media/hls
  'hls_request',
  'hls_not_found',
  'hls_unavailable',
  'playlist_parse',
  // auth
  'invalid_token',
  'keys_unavailable',
  'local_issuer',
  // auth/oauth
  'password_policy',
  // sync
  'topic',
  // api
  'tls_setup',
  'date_filter',
  'repeated_json_name',
  // api/events
  'event_stream_full',
  // cli.ts
  'usage',
] as const;

/**
 * OAuthError's codes (auth/oauth), answered by the local authorization server: the spec's section
 * 7 codes in its order, then the ones of RFC 6749 §4.1.2.1 and §5.2 it leaves out.
 */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'access_denied',
  'invalid_scope',
  'unsupported_grant_type',
  'unsupported_response_type',
  'server_error',
  'temporarily_unavailable',
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

/** CommandError's codes (sync): why a command from the cloud is refused, in its result's `error`. */
export const COMMAND_ERROR_CODES = ['payload_too_large', 'invalid_json', 'invalid_command', 'unknown_action'] as const;
export type CommandErrorCode = (typeof COMMAND_ERROR_CODES)[number];

/** OfferError's codes (media/webrtc): what a WHEP offer gets wrong; the API's invalid_offer names it. */
export const OFFER_ERROR_CODES = [
  'malformed_sdp',
  'no_media',
  'bad_media',
  'bad_mid',
  'duplicate_mid',
  'bad_ice_credentials',
  'bad_fingerprint',
  'bad_setup',
  'bad_attribute',
  'bad_candidate',
  'too_many_candidates',
] as const;
export type OfferErrorCode = (typeof OFFER_ERROR_CODES)[number];

/** CodecMismatchError's codes (media/webrtc): why no answer can be made for an offer. */
export const CODEC_MISMATCH_CODES = ['no_video_in_offer', 'no_video_from_camera', 'no_common_video_codec'] as const;
export type CodecMismatchCode = (typeof CODEC_MISMATCH_CODES)[number];

/** FootageDiskError's codes (media/footage): why the footage disk cannot be used. */
export const FOOTAGE_DISK_CODES = ['footage_on_system_disk', 'footage_dir_missing'] as const;
export type FootageDiskProblem = (typeof FOOTAGE_DISK_CODES)[number];

/** MediaFormatError's codes (media): which input from the camera could not become a playable track. */
export const MEDIA_FORMAT_CODES = [
  'bad_sps',
  'bad_pps',
  'bad_vps',
  'bad_audio_config',
  'bad_sample',
  'bad_box',
  'bad_timestamp',
] as const;
export type MediaFormatCode = (typeof MEDIA_FORMAT_CODES)[number];

/** Every code a GatewayError can carry: ApiError's are the API's catalogue (api-errors.ts). */
export type ErrorCode =
  | (typeof CLASS_ERROR_CODES)[number]
  | ApiErrorCode
  | OAuthErrorCode
  | CommandErrorCode
  | OfferErrorCode
  | CodecMismatchCode
  | MediaFormatCode
  | FootageDiskProblem;

/** The base of the gateway's errors: `name` from the class, `code` from ErrorCode. */
export abstract class GatewayError extends Error {
  abstract readonly code: ErrorCode;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }

  /**
   * The base of a class whose errors all carry one code, which the class has as a static `code`
   * too: `class NotFoundError extends GatewayError.of('not_found') {}`. A subclass of that class
   * is an error of the same kind, with the same code.
   */
  static of<const C extends ErrorCode>(code: C) {
    abstract class OfCode extends GatewayError {
      static readonly code: C = code;
      readonly code: C = code;
    }
    return OfCode;
  }
}

export class NotFoundError extends GatewayError.of('not_found') {
  constructor(
    readonly resource: 'device' | 'recording' | 'alert' | 'thumbnail' | 'footage' | 'push_subscription',
    readonly id: string,
  ) {
    super(`${resource} ${id} not found`);
  }
}

/** The device cannot take requests now (offline, unauthorized, or the part that drives it is absent). */
export class DeviceUnavailableError extends GatewayError.of('device_unavailable') {}

/** The device answered a command with an error. */
export class DeviceCommandError extends GatewayError.of('device_command') {}

/**
 * The change cannot be made in the gateway's present state: a setting the config file sets, a
 * camera already known at that address, a camera listed in the file removed through the API.
 */
export class ConflictError extends GatewayError.of('conflict') {}

/** The device cannot do what was asked at all (PTZ of a fixed camera, centring on a camera without it). */
export class NotSupportedError extends GatewayError.of('not_supported') {}

/**
 * A setting given through the API that cannot be used, found beyond what its schema checks (a
 * camera's RTSP URL pointing at the gateway itself): the caller's mistake, naming the field.
 */
export class InvalidSettingError extends GatewayError.of('invalid_setting') {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}

/** A preset the device does not list: the caller's mistake, found before anything is sent to the camera. */
export class UnknownPresetError extends GatewayError.of('unknown_preset') {
  constructor(readonly preset: string) {
    super(`no preset ${JSON.stringify(preset.slice(0, 64))} on this camera: GET the device for its ptz.presets`);
  }
}
