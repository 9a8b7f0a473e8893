import type { FastifyInstance } from 'fastify';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createApi } from './api/create.js';
import { createEventHub } from './api/events/create.js';
import { playbackMinter } from './api/routes/playback.js';
import { loadTlsCredentials } from './api/tls.js';
import { createTokenChecks } from './auth/create.js';
import type { LocalIssuer } from './auth/local-issuer.js';
import { createLocalOAuth } from './auth/oauth/create.js';
import { cameraConfigLookup, cameraSettingsLookup, fileCameraSettings } from './config/cameras.js';
import type { Config } from './config/schema.js';
import { gatewayId } from './daemon/gateway-id.js';
import { clockSynchronized, reservePort } from './daemon/host.js';
import { createLogger } from './daemon/process.js';
import { createSystemFacts } from './daemon/system-facts.js';
import { createSdNotify, type SdNotify } from './daemon/sd-notify.js';
import { readMemory, watchMemory } from './daemon/memory-limit.js';
import { ShutdownStack } from './daemon/shutdown.js';
import { startDetection } from './detect/service.js';
import { EventBus } from './domain/bus.js';
import type { StreamProfile } from './domain/types.js';
import { createFootage } from './media/footage/create.js';
import { createHls } from './media/hls/create.js';
import { createRecorders, openRecordingStorage } from './media/recorder/create.js';
import { createRelay } from './media/relay/create.js';
import { probeCameraStream, relayAddressCheck } from './media/relay/probe.js';
import { createStreamAddresses } from './media/relay/stream-addresses.js';
import { createSnapshots } from './media/still/create.js';
import { TicketSigner } from './media/ticket.js';
import { createWebRtc } from './media/webrtc/create.js';
import { createMetrics } from './metrics/create.js';
import { openMetricsListener } from './metrics/metrics-server.js';
import { createCameraManager, createCameraSetup, startCameras } from './onvif/create.js';
import { SecretBox } from './platform/secret-box.js';
import { registerStoreMetrics } from './store/metrics.js';
import { Store } from './store/store.js';
import { createNotifications } from './notify/create.js';
import { createCloudLink } from './sync/create.js';
import { readVersion } from './version.js';

// The one place that builds the parts and wires them together, in start-up order. Nothing else
// constructs a part; each part's own helpers live with it (src/daemon for the process and host).

// Re-exported for the CLI and the daemon tests, which load them from the built main.js.
export { createLogger, installFatalHandlers, tuneHeapGrowth } from './daemon/process.js';
export { gatewayId } from './daemon/gateway-id.js';

export interface Gateway {
  readonly id: string;
  readonly api: FastifyInstance;
  /** https://host:port the API listens on. */
  readonly apiUrl: string;
  /**
   * http://host:port/metrics of the metrics listener; null when there is none (metrics.listen null, or its port was
   * taken).
   */
  readonly metricsUrl: string | null;
  readonly certFile: string;
  /** The port the RTSP relay listens on (rtsp.port, or the one it was given for 0). */
  readonly relayPort: number;
  readonly localIssuer: LocalIssuer | null;
  readonly store: Store;
  readonly bus: EventBus;
  stop(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /** ms; the local authorization server's clock (code and session expiry, login throttling), for tests. */
  oauthClock?: () => number;
  /** The detector's worker script (tests running the source point at the built dist/detect/worker.js). */
  detectorWorkerUrl?: URL;
}

export async function startGateway(config: Config, opts: StartOptions = {}): Promise<Gateway> {
  const log = opts.logger ?? createLogger(config);
  const env = opts.env ?? process.env;
  const dataDir = config.gateway.data_dir;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const id = gatewayId(config);
  const secretBox = SecretBox.openInDir(dataDir);
  const store = Store.open(dataDir);
  store.setSettingsBase(fileCameraSettings(config));
  const shutdown = new ShutdownStack();
  const defer = (undo: () => unknown) => shutdown.defer(undo);
  defer(() => store.close());
  const notify: SdNotify = createSdNotify({ env, logger: log });

  try {
    const { registry, listen: metricsListen } = createMetrics(config, { gatewayId: id, clockSynchronized });
    const memory = watchMemory({ read: () => readMemory(), logger: log, registry });
    defer(() => memory.stop());
    registerStoreMetrics(registry, store);
    // Stream and playback tickets: live addresses, the relay, and the recordings' playback_url.
    const tickets = TicketSigner.openInDir(dataDir, secretBox);
    const mintPlayback = playbackMinter(tickets, config.recording.playback_ttl_s);
    const eventHub = createEventHub(config.events, { store, mintPlayback, registry });
    defer(() => eventHub.close(0));
    const apiPort = await reservePort(config.api.host, config.api.port);
    defer(() => apiPort.release());
    const auth = await createTokenChecks(
      config,
      { secretBox, apiPort: apiPort.port, revocations: store, registry, logger: log },
      defer,
    );
    const tls = await loadTlsCredentials({
      certFile: config.api.tls.cert_file,
      keyFile: config.api.tls.key_file,
      dataDir,
      secretBox,
    });
    if (tls.generated) log.info({ certFile: tls.certFile }, 'created a self-signed TLS certificate');

    const bus = new EventBus((err, name) => log.error({ err, event: name }, 'event listener failed'));
    const onvifLog = log.child({ part: 'onvif' });
    const probeStream = probeCameraStream({ logger: onvifLog });
    const cameras = createCameraManager(config, { store, secretBox, bus, logger: onvifLog, probeStream }, defer);
    const sync = createCloudLink(
      config,
      { id, store, cameras, bus, registry, logger: log.child({ part: 'sync' }), secretBox },
      defer,
    );

    const media = await startMedia(
      config,
      { store, tickets, cameras, bus, sync, registry, apiPort: apiPort.port, id, env, log, opts },
      defer,
    );
    const { relay, hls, webrtc, streams, recording, detection, stills, footage } = media;
    // GET /v1/system: each figure from the part that keeps it, read when the owner looks.
    const system = createSystemFacts(config, {
      store,
      clipsDir: recording.storageDir,
      footage,
      traffic: (deviceId) => relay.streams.traffic(deviceId, 'main'),
      viewers: [
        (deviceId) => relay.server.viewersOf(deviceId),
        (deviceId) => webrtc.viewersOf(deviceId),
        (deviceId) => hls.viewersOf(deviceId),
      ],
      errors: [(deviceId) => cameras.lastError(deviceId), (deviceId) => relay.streams.lastError(deviceId)],
    });

    const { localIssuer } = auth;
    // Web Push: alerts queue their pushes from here on; pictures from the still machinery.
    const push = createNotifications(
      config,
      {
        store,
        secretBox,
        localIssuer: localIssuer?.issuer ?? null,
        pictures: {
          still: (deviceId, width, quality) => stills.snapshots.get(deviceId, width, quality),
          shrink: stills.shrink,
        },
        registry,
        logger: log.child({ part: 'notify' }),
      },
      defer,
    );
    const oauthClock = opts.oauthClock ? { now: opts.oauthClock } : {};
    const oauthDeps = {
      store,
      verifier: auth.verifier,
      secretBox,
      apiPort: apiPort.port,
      logger: log.child({ part: 'oauth' }),
      ...oauthClock,
    };
    const { api, apiUrl } = await createApi(
      config,
      {
        logger: log,
        tls,
        port: apiPort,
        verifier: auth.apiVerifier,
        store,
        storageDir: recording.storageDir,
        control: cameras,
        setup: createCameraSetup(config, {
          store,
          cameras,
          secretBox,
          bus,
          logger: log.child({ part: 'setup' }),
          isOwnRelay: relayAddressCheck(config, media.relay.server.port),
        }),
        streams,
        registry,
        version: readVersion(),
        live: { tickets, hls, webrtc },
        playback: { tickets, mint: mintPlayback },
        events: { hub: eventHub, ...(auth.revoked ? { revoked: auth.revoked } : {}) },
        localJwks: localIssuer ? () => localIssuer.publicJwks() : null,
        detector: () => detection?.health() ?? 'off',
        memory: () => memory.state(),
        snapshots: stills.snapshots,
        footage,
        system,
        oauth: localIssuer ? createLocalOAuth(config, { ...oauthDeps, localIssuer }) : null,
        push,
      },
      defer,
    );
    const metrics = metricsListen ? await openMetricsListener(metricsListen, registry, log) : null;
    if (metrics) defer(() => metrics.close());

    // Cameras start after the API is up: adoption takes seconds per camera and must not delay readiness.
    await startCameras(config, cameras, log.child({ part: 'discovery' }), defer);
    log.info(
      { gatewayId: id, apiUrl, metricsUrl: metrics?.url ?? null, dataDir, localIssuer: localIssuer?.issuer ?? null },
      'edge gateway started',
    );
    if (clockSynchronized() === false) log.warn('the system clock is not synchronised yet: timestamps may be wrong');
    sync?.start();
    await notify.ready(`serving on ${apiUrl}`);
    notify.startWatchdog();

    let stopping: Promise<void> | null = null;
    const stop = () =>
      (stopping ??= (async () => {
        log.info('edge gateway stopping');
        await notify.stopping();
        notify.close();
        // Newest first: stop taking requests and finish those in flight, then close the rest.
        await shutdown.run();
        log.info('edge gateway stopped');
      })());
    const relayPort = media.relay.server.port;
    return {
      id,
      api,
      apiUrl,
      metricsUrl: metrics?.url ?? null,
      certFile: tls.certFile,
      relayPort,
      localIssuer,
      store,
      bus,
      stop,
    };
  } catch (err) {
    notify.close();
    await shutdown.runQuietly();
    throw err;
  }
}

/** What startMedia takes from the start-up before it. */
interface MediaDeps {
  store: Store;
  tickets: TicketSigner;
  cameras: ReturnType<typeof createCameraManager>;
  bus: EventBus;
  sync: ReturnType<typeof createCloudLink>;
  registry: Registry;
  apiPort: number;
  id: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  opts: StartOptions;
}

/**
 * The video side, in start-up order: the relay and what reads it (LL-HLS, WebRTC, stream
 * addresses), the clips' storage, detection and the recorders, still pictures, continuous footage.
 */
async function startMedia(config: Config, deps: MediaDeps, defer: (undo: () => unknown) => void) {
  const { store, tickets, cameras, bus, sync, registry, apiPort, id, env, log, opts } = deps;
  const dataDir = config.gateway.data_dir;
  const relayLog = log.child({ part: 'relay' });
  const locate = (deviceId: string, profile: StreamProfile) => cameras.streamSource(deviceId, profile);
  const relay = await createRelay(config, { locate, tickets, bus, registry, logger: relayLog }, defer);
  const acquire = (deviceId: string, profile: StreamProfile) => relay.streams.acquire(deviceId, profile);
  const hls = createHls(config, { acquire, registry, logger: log.child({ part: 'hls' }) }, defer);
  const webrtc = createWebRtc(
    config,
    { acquire, localUrl: relay.localUrl, registry, logger: log.child({ part: 'webrtc' }) },
    defer,
  );
  const streams = createStreamAddresses(config, {
    tickets,
    relayPort: relay.server.port,
    apiPort,
    devices: store,
    cameras,
  });

  const recording = await openRecordingStorage(config, { store, gatewayId: id, env, logger: log }, defer);
  // Each camera's settings in effect (the file's, with the app's changes), read anew at each look.
  const fileCamera = cameraConfigLookup(config.cameras, (deviceId) => store.getCamera(deviceId)?.onvifUrl ?? null);
  const settings = cameraSettingsLookup((deviceId) => store.getDevice(deviceId)?.settings ?? null, fileCamera);
  const detection = startDetection({
    config: config.detection,
    ffmpegPath: config.ffmpeg.path,
    frameStream: (deviceId) => relay.streams.acquire(deviceId, 'main'),
    camera: settings.detection,
    remembered: store,
    bus,
    registry,
    logger: log.child({ part: 'detect' }),
    ...(opts.detectorWorkerUrl ? { workerUrl: opts.detectorWorkerUrl } : {}),
    ...(sync ? { onConfirmed: (deviceId: string, thumbnail: Buffer) => sync.detectionImage(deviceId, thumbnail) } : {}),
  });
  if (detection) defer(() => detection.close());
  const recorderLog = log.child({ part: 'recorder' });
  const detected = detection?.recorders ?? null;
  const { motionMask, recordsEvents } = settings;
  createRecorders(
    config,
    recording,
    { store, bus, cameras, motionMask, recordsEvents, relay, detection: detected, registry, logger: recorderLog },
    defer,
  );
  // Still pictures for GET /v1/devices/{id}/snapshot: the relay's cached keyframe decoded once.
  const stills = createSnapshots(config.snapshot, {
    ffmpegPath: config.ffmpeg.path,
    streams: relay.streams,
    cameras,
    registry,
    logger: log.child({ part: 'snapshot' }),
  });
  defer(() => stills.stop());
  // Around-the-clock footage on a second disk (recording.continuous), its pictures by the same decoders.
  const footageLog = log.child({ part: 'footage' });
  const cameraConfig = settings.continuous;
  const footageParts = { store, streams: relay.streams, cameras, cameraConfig, bus, registry, logger: footageLog };
  const footage = await createFootage(
    config,
    { ...footageParts, systemDirs: ['/', dataDir], decode: stills.decode, tickets },
    defer,
  );

  return { relay, hls, webrtc, streams, recording, detection, stills, footage };
}
