import { GatewayError } from '../domain/errors.js';

/** The database cannot be opened, is newer than this gateway, or holds what the store did not write (damage). */
export class StoreError extends GatewayError.of('store') {}

/** Thrown inside a transaction to roll it back when a code or refresh token was used meanwhile. */
export class AlreadyUsedError extends GatewayError.of('already_used') {}
