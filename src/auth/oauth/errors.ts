// The OAuth 2.0 error model of the local authorization server: RFC 6749 §4.1.2.1 (authorization
// endpoint, errors travel in a redirect) and §5.2 (token endpoint, errors in a JSON body), with
// the spec's section 7 codes plus the RFC codes the spec leaves out (OAUTH_ERROR_CODES, with the
// gateway's other error codes in src/domain/errors.ts).

import { GatewayError, OAUTH_ERROR_CODES, type OAuthErrorCode } from '../../domain/errors.js';
import { appendQueryParams } from './redirect-uri.js';

/**
 * Codes RFC 6749 §4.1.2.1 allows in an authorization error redirect. invalid_client is not one
 * of them on purpose: a request whose client or redirect_uri is bad must never be redirected.
 */
export const AUTHORIZE_ERROR_CODES = [
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
] as const satisfies readonly OAuthErrorCode[];

export type AuthorizeErrorCode = (typeof AUTHORIZE_ERROR_CODES)[number];

/** Codes the token endpoint answers with (RFC 6749 §5.2, plus the two server-side failures). */
export const TOKEN_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
] as const satisfies readonly OAuthErrorCode[];

export type TokenErrorCode = (typeof TOKEN_ERROR_CODES)[number];

const CODES: ReadonlySet<string> = new Set(OAUTH_ERROR_CODES);
const AUTHORIZE_CODES: ReadonlySet<string> = new Set(AUTHORIZE_ERROR_CODES);
const TOKEN_CODES: ReadonlySet<string> = new Set(TOKEN_ERROR_CODES);

// RFC 6749 §5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E, so that it can sit in
// a query string and a JSON string without escaping surprises.
const DESCRIPTION_CHAR = /[\x20\x21\x23-\x5B\x5D-\x7E]/;
const MAX_DESCRIPTION_LENGTH = 300;

/**
 * An OAuth error the authorization server answers with. `description` is a short fixed phrase
 * chosen by the code that raises it, never a token, secret or password, because it goes back to
 * the client and into logs as is.
 */
export class OAuthError<C extends OAuthErrorCode = OAuthErrorCode> extends GatewayError {
  readonly description: string;

  constructor(
    override readonly code: C,
    description: string,
  ) {
    const clean = sanitizeDescription(description);
    super(`${code}: ${clean}`);
    this.description = clean;
  }
}

/** A password the local accounts do not take (a user's own choice, before it is hashed). */
export class PasswordPolicyError extends GatewayError.of('password_policy') {
  constructor(
    readonly reason: 'empty' | 'too long',
    /** The longest password taken, in characters. */
    readonly maxLength: number,
  ) {
    super(reason === 'empty' ? 'the password is empty' : `the password is longer than ${maxLength} characters`);
  }
}

export function isOAuthErrorCode(value: unknown): value is OAuthErrorCode {
  return typeof value === 'string' && CODES.has(value);
}

/** Whether this error may be sent to the client's redirect_uri (RFC 6749 §4.1.2.1). */
export function isAuthorizeError(err: OAuthError): err is OAuthError<AuthorizeErrorCode> {
  return AUTHORIZE_CODES.has(err.code);
}

/** Whether this error may be the token endpoint's answer (RFC 6749 §5.2). */
export function isTokenError(err: OAuthError): err is OAuthError<TokenErrorCode> {
  return TOKEN_CODES.has(err.code);
}

export type OAuthErrorStatus = 400 | 401 | 500 | 503;

/** HTTP status of a token endpoint error (RFC 6749 §5.2; invalid_client is always 401). */
export function oauthErrorStatus(code: OAuthErrorCode): OAuthErrorStatus {
  switch (code) {
    case 'invalid_client':
      return 401;
    case 'server_error':
      return 500;
    case 'temporarily_unavailable':
      return 503;
    default:
      return 400;
  }
}

export interface OAuthErrorBody {
  error: OAuthErrorCode;
  error_description: string;
}

export function oauthErrorBody(err: OAuthError): OAuthErrorBody {
  return { error: err.code, error_description: err.description };
}

/**
 * Headers of a token endpoint error response. No caching (RFC 6749 §5.1 asks it of every token
 * response, and an error can name the client); and, when the client tried HTTP Basic and failed,
 * the challenge RFC 6749 §5.2 requires with a 401. A client that sent its credentials in the body
 * gets no challenge, so a browser-based caller is never pushed into a login dialog.
 */
export function tokenErrorHeaders(
  err: OAuthError,
  authorization: string | undefined,
  realm = 'edge-gateway',
): Record<string, string> {
  const headers: Record<string, string> = { 'cache-control': 'no-store', pragma: 'no-cache' };
  if (err.code === 'invalid_client' && authorization !== undefined && /^[ \t]*basic(?:[ \t]|$)/i.test(authorization)) {
    headers['www-authenticate'] = `Basic realm="${realm.replace(/["\\]/g, '')}", charset="UTF-8"`;
  }
  return headers;
}

/**
 * The RFC 6749 §4.1.2.1 error redirect: error, error_description and state (unchanged, left out
 * when the request had none) added to the query of a redirect_uri that has already been matched
 * against the client's registered ones; an existing query is kept as it is. `issuer`, when given,
 * adds RFC 9207's iss so a client talking to both the cloud and this gateway can tell who answered.
 */
export function errorRedirect(
  redirectUri: string,
  err: OAuthError<AuthorizeErrorCode>,
  state: string | undefined,
  issuer?: string,
): string {
  // The type already says so; this is for callers that widened the error on the way.
  if (!AUTHORIZE_CODES.has(err.code)) throw new TypeError(`${err.code} is never sent in an authorization redirect`);
  return appendQueryParams(redirectUri, [
    ['error', err.code],
    ['error_description', err.description],
    ['state', state],
    ['iss', issuer],
  ]);
}

function sanitizeDescription(description: string): string {
  let out = '';
  for (const ch of description.slice(0, MAX_DESCRIPTION_LENGTH)) {
    if (DESCRIPTION_CHAR.test(ch)) out += ch;
    else if (ch === '"') out += "'";
    else if (ch === '\\') out += '/';
    else out += '?';
  }
  return out;
}
