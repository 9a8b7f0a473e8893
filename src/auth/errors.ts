/**
 * The token was rejected. `reason` is a short fixed phrase chosen by this module (never token
 * content), so the API may put it in a `WWW-Authenticate` error_description as is.
 */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';

  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * The issuer's keys cannot be had, or are older than the allowed staleness. This is the
 * gateway's failure, not the client's, so the API answers 503 rather than 401.
 */
export class KeysUnavailableError extends Error {
  override readonly name = 'KeysUnavailableError';

  constructor(
    readonly issuer: string,
    readonly reason: 'no keys' | 'keys stale',
  ) {
    super(`signing keys of issuer ${issuer} are unavailable (${reason})`);
  }
}
