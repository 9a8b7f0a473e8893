import { GatewayError } from '../domain/errors.js';

/** A config file that cannot be used; `message` is the one line the daemon prints before it stops. */
export class ConfigError extends GatewayError.of('config') {
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(key ? `config: ${key}: ${problem}` : `config: ${problem}`);
  }
}
