/** A config file that cannot be used; `message` is the one line the daemon prints before it stops. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(key ? `config: ${key}: ${problem}` : `config: ${problem}`);
  }
}
