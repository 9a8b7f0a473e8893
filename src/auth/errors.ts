import { GatewayError } from '../domain/errors.js';

/**
 * The token was rejected. `reason` is a short fixed phrase chosen by this module (never token
 * content), so the API may put it in a `WWW-Authenticate` error_description as is.
 */
export class InvalidTokenError extends GatewayError.of('invalid_token') {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * The issuer's keys cannot be had, or are older than the allowed staleness. This is the
 * gateway's failure, not the client's, so the API answers 503 rather than 401.
 */
export class KeysUnavailableError extends GatewayError.of('keys_unavailable') {
  constructor(
    readonly issuer: string,
    readonly reason: 'no keys' | 'keys stale',
  ) {
    super(`signing keys of issuer ${issuer} are unavailable (${reason})`);
  }
}

/** The local issuer cannot be used as asked: a bad option, or a key file it cannot read. */
export class LocalIssuerError extends GatewayError.of('local_issuer') {}
