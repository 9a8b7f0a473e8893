import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { EventBus } from '../domain/bus.js';
import { readMqttCredentials } from '../config/mqtt-credentials.js';
import { openConfigSecret, type SecretBox } from '../platform/secret-box.js';
import { readVersion } from '../version.js';
import { CloudSync, type SyncControl, type SyncStore } from './cloud-sync.js';
import { registerSyncMetrics, type OutboxFigures } from './metrics.js';

/** The cloud link from the sync.mqtt config (TLS files read now: a wrong path stops the start). */
function createCloudSync(
  config: Config,
  url: string,
  deps: { id: string; store: SyncStore; cameras: SyncControl; logger: Logger; secretBox: SecretBox },
): CloudSync {
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

/** What the cloud link needs of the store besides what it reads: the outbox, switched on. */
export type OutboxStore = SyncStore & OutboxFigures & { enableOutbox(maxRows: number, onMessage: () => void): void };

/**
 * The cloud link when sync.mqtt.url is set, else null. From here on every change also writes its
 * message to the outbox (same transaction); the MQTT link drains it whenever the broker is
 * reachable. Camera events and status changes reach it from the bus. Connecting waits for start().
 */
export function createCloudLink(
  config: Config,
  deps: {
    id: string;
    store: OutboxStore;
    cameras: SyncControl;
    bus: EventBus;
    registry: Registry;
    logger: Logger;
    secretBox: SecretBox;
  },
  defer: (undo: () => unknown) => void,
): CloudSync | null {
  const url = config.sync.mqtt.url;
  if (!url) return null;
  const { store, bus } = deps;
  const sync = createCloudSync(config, url, {
    id: deps.id,
    store,
    cameras: deps.cameras,
    logger: deps.logger,
    secretBox: deps.secretBox,
  });
  store.enableOutbox(config.sync.outbox.max_rows, () => sync.kick());
  bus.on('camera.event', (e) => sync.cameraEvent(e.deviceId, e.kind, e.phase === 'start'));
  const changed = (e: { deviceId: string }) => {
    const device = store.getDevice(e.deviceId);
    if (device) sync.deviceChanged(device);
  };
  bus.on('device.status', changed);
  // A new name reaches Home Assistant too (the settings themselves go with the device's outbox message).
  bus.on('camera.settings', changed);
  bus.on('device.removed', (e) => sync.deviceRemoved(e.deviceId));
  registerSyncMetrics(deps.registry, sync, store);
  defer(() => sync.stop());
  return sync;
}
