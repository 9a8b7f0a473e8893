import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';
import type { Config } from './schema.js';

// The parts of sync.mqtt that are not in the file itself: the TLS files it names and the password
// it may hold sealed. They are read when the daemon starts (the secret box is in data_dir), and a
// wrong one stops the start with a ConfigError naming its key, like any other bad key.

export interface MqttCredentials {
  /** The files' contents, as mqtt.js takes them; a key without a file is absent. */
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  password: string | null;
}

const TLS_FILES = [
  ['ca_file', 'ca'],
  ['cert_file', 'cert'],
  ['key_file', 'key'],
] as const;

/** `openSecret` opens a `sealed:…` value (and returns any other as it is), throwing when it cannot. */
export function readMqttCredentials(
  mqtt: Config['sync']['mqtt'],
  openSecret: (value: string) => string,
): MqttCredentials {
  const tls: MqttCredentials['tls'] = {};
  for (const [key, field] of TLS_FILES) {
    const file = mqtt[key];
    if (!file) continue;
    try {
      tls[field] = readFileSync(file);
    } catch (err) {
      throw new ConfigError(`sync.mqtt.${key}`, `cannot read ${file}: ${(err as Error).message}`);
    }
  }
  let password: string | null = null;
  if (mqtt.password !== null) {
    try {
      password = openSecret(mqtt.password);
    } catch (err) {
      throw new ConfigError('sync.mqtt.password', `${(err as Error).message} (seal it again with: edge-gateway seal)`);
    }
  }
  return { tls, password };
}
