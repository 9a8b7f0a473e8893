import type { BaseLogger } from 'pino';
import type { Config } from '../config/schema.js';
import type { EventBus } from '../domain/bus.js';
import type { SecretBox } from '../platform/secret-box.js';
import { createDiscovery } from './discovery/service.js';
import { CameraManager, pickDeviceServiceUrl, type CameraStore, type StreamProbe } from './manager.js';
import { CameraSetup, type SetupStore } from './setup.js';

/**
 * The camera manager of config onvif.*: adopts cameras, keeps their sessions and tells the bus;
 * plain RTSP cameras are looked at with `probeStream` on the same health interval.
 */
export function createCameraManager(
  config: Config,
  deps: { store: CameraStore; secretBox: SecretBox; bus: EventBus; logger: BaseLogger; probeStream: StreamProbe },
  defer: (undo: () => unknown) => void,
): CameraManager {
  const cameras = new CameraManager({
    ...deps,
    credentials: config.onvif.credentials,
    healthIntervalS: config.onvif.health_interval_s,
    maxBackoffMs: config.onvif.max_backoff_s * 1000,
  });
  defer(() => cameras.stop());
  return cameras;
}

/**
 * Cameras set up from the app (the API's POST, PATCH and DELETE /v1/devices…), over the manager:
 * the config file's cameras[] are the file's to add and remove, continuous recording is offered
 * where recording.continuous is on, and no RTSP camera may be the relay itself (`isOwnRelay`).
 */
export function createCameraSetup(
  config: Config,
  deps: {
    store: SetupStore;
    cameras: CameraManager;
    secretBox: SecretBox;
    bus: EventBus;
    logger: BaseLogger;
    isOwnRelay: (host: string, port: number) => boolean;
  },
): CameraSetup {
  return new CameraSetup({
    ...deps,
    fileUrls: new Set(config.cameras.map((c) => c.onvif_url)),
    continuousAvailable: config.recording.continuous.enabled,
  });
}

/**
 * The configured cameras, and WS-Discovery of config onvif.discovery when enabled: every camera
 * found becomes a target of the manager, which adopts it. `defer` is given what stops discovery.
 */
export async function startCameras(
  config: Config,
  cameras: CameraManager,
  logger: BaseLogger,
  defer: (undo: () => unknown) => void,
): Promise<void> {
  cameras.start(config.cameras);
  const d = config.onvif.discovery;
  if (!d.enabled) return;
  const discovery = createDiscovery({
    interfaces: d.interfaces,
    unicastTargets: d.unicast_targets,
    intervalS: d.interval_s,
    logger,
  });
  discovery.on('found', (found) => {
    const url = pickDeviceServiceUrl(found.xaddrs);
    if (url) cameras.addTarget({ url, source: 'discovery', endpoint: found.endpoint });
  });
  defer(() => discovery.stop());
  await discovery.start();
}
