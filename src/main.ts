import type { FastifyInstance } from 'fastify';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { LocalIssuer } from './auth/local-issuer.js';
import { AuthorizationServer, openTokenKey } from './auth/oauth/authorization-server.js';
import { LoginSessions } from './auth/oauth/login-sessions.js';
import { LoginRateLimiter } from './auth/oauth/password.js';
import { withRevocation } from './auth/revocation.js';
import { TokenVerifier } from './auth/verifier.js';
import type { Config } from './config/schema.js';
import os from 'node:os';
import type { StreamAddresses } from './api/ports.js';
import { DeviceUnavailableError } from './domain/errors.js';
import type { StreamProfile } from './domain/types.js';
import { Recorders } from './media/recorder/recorders.js';
import { startDetection } from './detect/service.js';
import { recoverEpisodes } from './media/recorder/recovery.js';
import { cleanStorage, Retention } from './media/recorder/storage.js';
import { registerRelayMetrics } from './media/relay/metrics.js';
import { startRelayServer } from './media/relay/server.js';
import { RelayStreams } from './media/relay/streams.js';
import { TicketSigner } from './media/ticket.js';
import { EventBus } from './domain/bus.js';
import { createDiscovery } from './onvif/discovery/service.js';
import { CameraManager, pickDeviceServiceUrl } from './onvif/manager.js';
import { buildApiServer } from './api/server.js';
import { loadTlsCredentials } from './api/tls.js';
import { registerGatewayMetrics } from './daemon/gateway-metrics.js';
import { startMetricsServer, type MetricsServer } from './daemon/metrics-server.js';
import { createSdNotify, type SdNotify } from './daemon/sd-notify.js';
import { isLoopbackHost } from './config/load.js';
import { parseListenAddress, type ListenAddress } from './config/listen.js';
import { createOnce, replaceFile } from './store/files.js';
import { openConfigSecret, SecretBox } from './store/secret-box.js';
import { Store } from './store/store.js';
import { ConfigError } from './config/errors.js';
import { readVersion } from './version.js';
import { CloudSync } from './sync/cloud-sync.js';
import { registerSyncMetrics } from './sync/metrics.js';
import { validateTopicBase } from './sync/topics.js';

// The one place that builds the parts and wires them together. Nothing else constructs a part.

export interface Gateway {
  readonly id: string;
  readonly api: FastifyInstance;
  /** https://host:port the API listens on. */
  readonly apiUrl: string;
  /** http://host:port/metrics of the metrics listener; null when there is none (metrics.listen null, or its port was taken). */
  readonly metricsUrl: string | null;
  readonly certFile: string;
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

export function createLogger(config: Config): Logger {
  return pino({ level: config.log.level, base: { service: 'edge-gateway' } });
}

/**
 * Last resort for a bug that escapes every promise: log it with its stack at fatal level and exit
 * non-zero, so systemd (Restart=on-failure) restarts the daemon. It never carries on: after an
 * unexpected exception the state of streams, recorders and sessions is unknown. Camera answers
 * never get here (each ends as a typed error of its own call, see src/onvif/library.ts).
 */
export function installFatalHandlers(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  const fatal = (origin: 'uncaughtException' | 'unhandledRejection') => (err: unknown) => {
    logger.fatal({ err: err instanceof Error ? err : new Error(String(err)), origin }, 'uncaught exception');
    exit(70); // EX_SOFTWARE
  };
  process.on('uncaughtException', fatal('uncaughtException'));
  process.on('unhandledRejection', fatal('unhandledRejection'));
}

/** The gateway's stable id: from config, else generated once and kept in data_dir. */
export function gatewayId(config: Config): string {
  if (config.gateway.id) return config.gateway.id;
  return createOnce(path.join(config.gateway.data_dir, 'gateway-id'), () => `gw_${randomBytes(9).toString('base64url')}`, 0o644)
    .toString('utf8')
    .trim();
}

/**
 * The local issuer identifier (RFC 8414: the https URL apps reach the authorization server at):
 * auth.local.issuer, else https://{api.public_host}:{port}, where no public_host means the API's
 * own address, or this box's first LAN address when it listens on every interface.
 */
export function localIssuerName(config: Config, port = config.api.port): string {
  if (config.auth.local.issuer !== null) return config.auth.local.issuer;
  const listen = config.api.host;
  const wildcard = listen === '0.0.0.0' || listen === '::';
  const host = config.api.public_host ?? (wildcard ? (firstLanAddress() ?? '127.0.0.1') : listen);
  return `https://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** Port 0 (tests) is settled before the start, so the issuer URL can name the port. */
async function choosePort(host: string, port: number): Promise<number> {
  if (port !== 0) return port;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, host, resolve));
  const chosen = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return chosen;
}

/** Opens the local issuer's key (shared by the daemon and the `token` command). */
/** The cloud link from the sync.mqtt config (TLS files read now: a wrong path stops the start). */
function createCloudSync(config: Config, url: string, deps: { id: string; store: Store; cameras: CameraManager; logger: Logger; secretBox: SecretBox }): CloudSync {
  const m = config.sync.mqtt;
  const read = (key: 'ca_file' | 'cert_file' | 'key_file') => {
    const file = m[key];
    if (!file) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError(`sync.mqtt.${key}`, `cannot read ${file}: ${(err as Error).message}`);
    }
  };
  try {
    validateTopicBase(m.topic_prefix, deps.id);
  } catch (err) {
    throw new ConfigError('sync.mqtt.topic_prefix', (err as Error).message);
  }
  const tls = { ca: read('ca_file'), cert: read('cert_file'), key: read('key_file') };
  const openSecret = (box: SecretBox, value: string) => {
    try {
      return openConfigSecret(box, value);
    } catch (err) {
      throw new ConfigError('sync.mqtt.password', `${(err as Error).message} (seal it again with: edge-gateway seal)`);
    }
  };
  return new CloudSync({
    url,
    prefix: m.topic_prefix,
    gatewayId: deps.id,
    store: deps.store,
    control: deps.cameras,
    logger: deps.logger,
    tls: Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined)),
    username: m.username,
    password: m.password === null ? null : openSecret(deps.secretBox, m.password),
    homeAssistant: m.home_assistant ? { discoveryPrefix: m.home_assistant_prefix } : null,
    version: readVersion(),
  });
}

const ISSUER_FILE = 'local-issuer.url';

/**
 * Opens the local issuer's keys. The daemon (`port` given: the one it listens on) settles the
 * issuer URL and records it in data_dir; the `token` command (no port) signs with the recorded
 * one, so its tokens carry the `iss` the running daemon checks even when the port was chosen at
 * start or the LAN address changed since.
 */
export async function openLocalIssuer(config: Config, secretBox: SecretBox, port?: number): Promise<LocalIssuer> {
  const file = path.join(config.gateway.data_dir, ISSUER_FILE);
  let issuer: string;
  if (port === undefined) {
    issuer = config.auth.local.issuer ?? readRecordedIssuer(file) ?? localIssuerName(config);
  } else {
    issuer = localIssuerName(config, port);
    mkdirSync(config.gateway.data_dir, { recursive: true, mode: 0o700 });
    replaceFile(file, `${issuer}\n`, 0o644);
  }
  return LocalIssuer.open({
    dataDir: config.gateway.data_dir,
    secretBox,
    issuer,
    audience: config.auth.local.audience,
    // `edge-gateway token --ttl` may issue for up to a day, longer than access_ttl_s.
    retiredKeyLifetimeS: Math.max(config.auth.local.access_ttl_s, 86_400) + config.auth.clock_tolerance_s,
  });
}

function readRecordedIssuer(file: string): string | null {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return /^https:\/\/\S+$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

/** The address LAN viewers most likely reach this box at: its first non-internal IPv4 address. */
function firstLanAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}

/** systemd-timesyncd marks a synchronised clock with this file; other NTP daemons leave it unknown. */
function clockSynchronized(): boolean | null {
  if (existsSync('/run/systemd/timesync/synchronized')) return true;
  return existsSync('/run/systemd/timesync') ? false : null;
}

/**
 * The metrics listener. A port already taken (another exporter on the box) does not stop the
 * gateway: cameras and recording matter more than their figures, and the error line names the key.
 */
async function openMetricsListener(listen: ListenAddress, registry: Registry, log: Logger): Promise<MetricsServer | null> {
  try {
    return await startMetricsServer(listen, registry);
  } catch (err) {
    log.error({ err: (err as Error).message, listen: `${listen.host}:${listen.port}` }, 'metrics listener not started (metrics.listen): /metrics is unavailable');
    return null;
  }
}

export async function startGateway(config: Config, opts: StartOptions = {}): Promise<Gateway> {
  const log = opts.logger ?? createLogger(config);
  const env = opts.env ?? process.env;
  const dataDir = config.gateway.data_dir;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const id = gatewayId(config);
  const secretBox = SecretBox.openInDir(dataDir);
  const store = Store.open(dataDir);
  const cleanups: Array<() => unknown> = [() => store.close()];
  const notify: SdNotify = createSdNotify({ env, logger: log });

  try {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'edge_gateway_' });
    const metricsListen = config.metrics.listen === null ? null : parseListenAddress(config.metrics.listen);
    registerGatewayMetrics(registry, {
      version: readVersion(),
      // The id names this gateway's MQTT topics: it is shown only where this box alone can look.
      gatewayId: metricsListen && isLoopbackHost(metricsListen.host) ? id : null,
      clockSynchronized,
    });

    const apiPort = await choosePort(config.api.host, config.api.port);
    const localIssuer = config.auth.local.enabled ? await openLocalIssuer(config, secretBox, apiPort) : null;
    if (localIssuer) {
      // The signing key is replaced when it is older than key_rotation_days; the old one stays in
      // the JWKS until its tokens have expired (docs/oauth.md).
      const maxAgeS = config.auth.local.key_rotation_days * 86_400;
      const rotate = () =>
        localIssuer
          .rotateIfOlderThan(maxAgeS)
          .then((rotated) => rotated && log.info({ kid: localIssuer.currentKid }, 'local issuer signing key rotated'))
          .catch((err: unknown) => log.error({ err }, 'local issuer key rotation failed; the current key keeps signing'));
      await rotate();
      const rotation = setInterval(() => void rotate(), 3600_000);
      rotation.unref();
      cleanups.unshift(() => clearInterval(rotation));
    }
    const verifier = new TokenVerifier({
      issuers: config.auth.issuers,
      localIssuer,
      dataDir,
      clockToleranceS: config.auth.clock_tolerance_s,
      requireAtJwt: config.auth.require_at_jwt,
      jwksMaxStaleS: config.auth.jwks_max_stale_s,
      jwksRefreshS: config.auth.jwks_refresh_s,
      jwksCooldownS: config.auth.jwks_cooldown_s,
      logger: log,
      registry,
    });
    await verifier.start();
    cleanups.unshift(() => verifier.close());

    const tls = await loadTlsCredentials({
      certFile: config.api.tls.cert_file,
      keyFile: config.api.tls.key_file,
      dataDir,
      secretBox,
    });
    if (tls.generated) log.info({ certFile: tls.certFile }, 'created a self-signed TLS certificate');

    const bus = new EventBus((err, name) => log.error({ err, event: name }, 'event listener failed'));
    const cameras = new CameraManager({
      store,
      secretBox,
      bus,
      logger: log.child({ part: 'onvif' }),
      credentials: config.onvif.credentials,
      healthIntervalS: config.onvif.health_interval_s,
    });
    cleanups.unshift(() => cameras.stop());

    // Cloud sync: from here on every change also writes its message to the outbox (same
    // transaction); the MQTT link drains it whenever the broker is reachable.
    const sync = config.sync.mqtt.url ? createCloudSync(config, config.sync.mqtt.url, { id, store, cameras, logger: log.child({ part: 'sync' }), secretBox }) : null;
    if (sync) {
      store.enableOutbox(config.sync.outbox.max_rows, () => sync.kick());
      bus.on('camera.event', (e) => sync.cameraEvent(e.deviceId, e.kind, e.phase === 'start'));
      bus.on('device.status', (e) => {
        const device = store.getDevice(e.deviceId);
        if (device) sync.deviceChanged(device);
      });
      registerSyncMetrics(registry, sync, store);
      cleanups.unshift(() => sync.stop());
    }

    // The RTSP relay: every viewer and the recorder share one session per camera profile.
    const tickets = TicketSigner.openInDir(dataDir, secretBox);
    const relayStreams = new RelayStreams({
      locate: (deviceId, profile) => cameras.streamSource(deviceId, profile),
      logger: log.child({ part: 'relay' }),
      idleCloseS: config.rtsp.idle_close_s,
    });
    cleanups.unshift(() => relayStreams.close());
    // The recorder reads through the relay from this box: loopback when the relay listens on all
    // addresses, else the address it is bound to.
    const relayHost = config.rtsp.host === '0.0.0.0' || config.rtsp.host === '::' ? '127.0.0.1' : config.rtsp.host;
    const relay = await startRelayServer({
      host: config.rtsp.host,
      port: config.rtsp.port,
      udpPort: config.rtsp.udp_port,
      tickets,
      streams: relayStreams,
      logger: log.child({ part: 'relay' }),
      maxSessionS: config.rtsp.max_session_s,
      maxConnectionsPerAddress: config.rtsp.max_connections_per_address,
      // Where the recorder connects from: exactly the address it dials (not all of 127/8, so a
      // local client on another loopback address still meets the per-address limits).
      trustedAddress: (address) => address === relayHost || address === `::ffff:${relayHost}` || (relayHost === '127.0.0.1' && address === '::1'),
    });
    cleanups.unshift(() => relay.close());
    registerRelayMetrics(registry, { server: () => relay.stats(), streams: () => relayStreams.stats() });
    const streams: StreamAddresses = {
      issue: async (deviceId, profile) => {
        if (store.getDevice(deviceId)?.status !== 'online') throw new DeviceUnavailableError(`device ${deviceId} is not online`);
        if (!cameras.streamSource(deviceId, profile)) throw new DeviceUnavailableError(`device ${deviceId} has no ${profile} stream`);
        // Tickets carry whole seconds.
        const expiresAt = (Math.floor(Date.now() / 1000) + config.rtsp.ticket_ttl_s) * 1000;
        const ticket = tickets.issue({ deviceId, profile, expiresAt });
        const host = config.rtsp.public_host ?? firstLanAddress() ?? '127.0.0.1';
        return { url: `rtsp://${host}:${relay.port}/live/${ticket}`, expiresAt };
      },
    };

    const storageDir = config.recording.storage_dir ?? path.join(dataDir, 'recordings');
    mkdirSync(storageDir, { recursive: true, mode: 0o700 });

    // Recording: the episodes a crash interrupted get what clip can still be had (a whole clip
    // file, or the footage left in RAM) and their alerts say what is missing; then storage is made
    // consistent with the database (a half clip, a clip without its row); then one recorder per
    // online camera.
    const segmentRoot = config.recording.segment_dir ?? (env.RUNTIME_DIRECTORY ? path.join(env.RUNTIME_DIRECTORY, 'segments') : `/dev/shm/edge-gateway-${id}`);
    await recoverEpisodes({ store, storageDir, segmentRoot, ffmpegPath: config.ffmpeg.path, maxClipMs: config.recording.max_clip_s * 1000, logger: log.child({ part: 'recorder' }) });
    await cleanStorage(storageDir, store, log.child({ part: 'recorder' }));
    const retention = new Retention({
      storageDir,
      store,
      logger: log.child({ part: 'retention' }),
      maxAgeDays: config.recording.retention.max_age_days,
      maxBytes: config.recording.retention.max_bytes,
      minFreeBytes: config.recording.retention.min_free_bytes,
    });
    cleanups.unshift(() => retention.close());
    await retention.check(true);
    // A loopback relay URL with a recorder ticket: short-lived (it only has to start a session).
    const recorderUrl = (deviceId: string, profile: StreamProfile) =>
      `rtsp://${relayHost.includes(':') ? `[${relayHost}]` : relayHost}:${relay.port}/live/${tickets.issue({ deviceId, profile, expiresAt: Date.now() + 60_000, recorder: true })}`;
    // The object detector for motion starts (docs/detection.md); its settings per configured camera.
    const cameraConfig = (deviceId: string) => config.cameras.find((c) => c.onvif_url === store.getCamera(deviceId)?.onvifUrl) ?? null;
    const detection = startDetection({
      config: config.detection,
      ffmpegPath: config.ffmpeg.path,
      frameUrl: (deviceId) => recorderUrl(deviceId, 'main'),
      camera: cameraConfig,
      registry,
      logger: log.child({ part: 'detect' }),
      ...(opts.detectorWorkerUrl ? { workerUrl: opts.detectorWorkerUrl } : {}),
    });
    if (detection) cleanups.unshift(() => detection.close());
    const recorders = new Recorders({
      store,
      deviceName: (deviceId) => store.getDevice(deviceId)?.name ?? deviceId,
      hasStream: (deviceId) => cameras.streamSource(deviceId, 'main') !== null,
      inputUrl: (deviceId) => recorderUrl(deviceId, 'main'),
      streamReady: async (deviceId) => void (await relayStreams.acquire(deviceId, 'main')),
      ffmpegPath: config.ffmpeg.path,
      segmentRoot,
      storageDir,
      preRollMs: config.recording.pre_roll_s * 1000,
      postRollMs: config.recording.post_roll_s * 1000,
      maxClipMs: config.recording.max_clip_s * 1000,
      logger: log.child({ part: 'recorder' }),
      afterClip: () => void retention.check(),
      motion: {
        ...config.recording.motion,
        hasOwnEvents: (deviceId) => cameras.hasEventSubscription(deviceId),
        inputUrl: (deviceId) => recorderUrl(deviceId, cameras.streamSource(deviceId, 'sub') ? 'sub' : 'main'),
        mask: (deviceId) => cameraConfig(deviceId)?.motion_mask ?? [],
      },
      detection: detection?.recorders ?? null,
    });
    bus.on('device.status', (e) => recorders.deviceStatus(e.deviceId, e.status === 'online', e.at));
    bus.on('camera.event', (e) => recorders.event(e.deviceId, e.kind, e.phase, e.at));
    // Cameras online at the last stop: the manager reports a change only, so these start here.
    for (const camera of store.listCameras()) if (store.getDevice(camera.deviceId)?.status === 'online') recorders.deviceStatus(camera.deviceId, true, Date.now());
    cleanups.unshift(() => recorders.stop());

    const api = await buildApiServer({
      logger: log,
      tls,
      bodyLimit: config.api.body_limit_bytes,
      connections: { maxPerAddress: config.api.max_connections_per_address, requestTimeoutMs: config.api.request_timeout_s * 1000, idleTimeoutMs: config.api.idle_timeout_s * 1000 },
      // Tokens of the local authorization server whose grant was revoked are refused until they expire.
      verifier: localIssuer ? withRevocation(verifier, localIssuer.issuer, (jti) => store.isAccessTokenRevoked(jti)) : verifier,
      store,
      storageDir,
      control: cameras,
      streams,
      registry,
      version: readVersion(),
      localJwks: localIssuer ? () => localIssuer.publicJwks() : null,
      detector: () => detection?.health() ?? 'off',
      oauth: localIssuer
        ? {
            server: new AuthorizationServer({
              store,
              issuer: localIssuer,
              tokenKey: openTokenKey(dataDir, secretBox),
              accessTtlS: config.auth.local.access_ttl_s,
              refreshTtlS: config.auth.local.refresh_ttl_s,
              logger: log.child({ part: 'oauth' }),
              ...(opts.oauthClock ? { now: opts.oauthClock } : {}),
            }),
            issuer: localIssuer.issuer,
            users: store,
            sessions: new LoginSessions(),
            limits: { byUser: new LoginRateLimiter(), byAddress: new LoginRateLimiter() },
            logger: log.child({ part: 'oauth' }),
            ...(opts.oauthClock ? { now: opts.oauthClock } : {}),
          }
        : null,
    });
    cleanups.unshift(() => api.close());
    await api.listen({ host: config.api.host, port: apiPort });
    const addr = api.server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const apiUrl = `https://${host}:${addr.port}`;
    const metrics = metricsListen ? await openMetricsListener(metricsListen, registry, log) : null;
    if (metrics) cleanups.unshift(() => metrics.close());

    // Cameras start after the API is up: adoption takes seconds per camera and must not delay readiness.
    cameras.start(config.cameras);
    if (config.onvif.discovery.enabled) {
      const discovery = createDiscovery({
        interfaces: config.onvif.discovery.interfaces,
        unicastTargets: config.onvif.discovery.unicast_targets,
        intervalS: config.onvif.discovery.interval_s,
        logger: log.child({ part: 'discovery' }),
      });
      discovery.on('found', (found) => {
        const url = pickDeviceServiceUrl(found.xaddrs);
        if (url) cameras.addTarget({ url, source: 'discovery', endpoint: found.endpoint });
      });
      cleanups.unshift(() => discovery.stop());
      await discovery.start();
    }
    log.info({ gatewayId: id, apiUrl, metricsUrl: metrics?.url ?? null, dataDir, localIssuer: localIssuer?.issuer ?? null }, 'edge gateway started');
    if (clockSynchronized() === false) log.warn('the system clock is not synchronised yet: timestamps may be wrong');
    sync?.start();
    await notify.ready(`serving on ${apiUrl}`);
    notify.startWatchdog();

    let stopping: Promise<void> | null = null;
    return {
      id,
      api,
      apiUrl,
      metricsUrl: metrics?.url ?? null,
      certFile: tls.certFile,
      localIssuer,
      store,
      bus,
      stop: () =>
        (stopping ??= (async () => {
          log.info('edge gateway stopping');
          await notify.stopping();
          notify.close();
          // Reverse order of start: stop taking requests and finish those in flight, then close the rest.
          for (const cleanup of cleanups) await cleanup();
          log.info('edge gateway stopped');
        })()),
    };
  } catch (err) {
    notify.close();
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
    throw err;
  }
}
