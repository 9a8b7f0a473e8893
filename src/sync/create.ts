import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { readMqttCredentials } from '../config/mqtt-credentials.js';
import { openConfigSecret, type SecretBox } from '../platform/secret-box.js';
import type { Store } from '../store/store.js';
import { readVersion } from '../version.js';
import { CloudSync, type SyncControl } from './cloud-sync.js';

/** The cloud link from the sync.mqtt config (TLS files read now: a wrong path stops the start). */
export function createCloudSync(config: Config, url: string, deps: { id: string; store: Store; cameras: SyncControl; logger: Logger; secretBox: SecretBox }): CloudSync {
  const m = config.sync.mqtt;
  const { tls, password } = readMqttCredentials(m, (value) => openConfigSecret(deps.secretBox, value));
  return new CloudSync({
    url,
    prefix: m.topic_prefix,
    gatewayId: deps.id,
    store: deps.store,
    control: deps.cameras,
    logger: deps.logger,
    tls,
    username: m.username,
    password,
    homeAssistant: m.home_assistant ? { discoveryPrefix: m.home_assistant_prefix } : null,
    version: readVersion(),
  });
}
