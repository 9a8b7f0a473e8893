import { GatewayError } from '../domain/errors.js';

/** A sealed value that does not open (wrong key, altered, another label) or a key file that cannot be used. */
export class SecretBoxError extends GatewayError.of('secret_box') {}
