import type { FastifyInstance } from 'fastify';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { LocalIssuer, openLocalIssuer, startKeyRotation } from './auth/local-issuer.js';
import { AuthorizationServer, openTokenKey } from './auth/oauth/authorization-server.js';
import { LoginSessions } from './auth/oauth/login-sessions.js';
import { LoginRateLimiter } from './auth/oauth/password.js';
import { localAccessTokenId, tokenRevocation, withRevocation } from './auth/revocation.js';
import { TokenVerifier } from './auth/verifier.js';
import type { Config } from './config/schema.js';
import { isOwnHost } from './config/lan-address.js';
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
import { registerHlsMetrics } from './media/hls/metrics.js';
import { HlsService } from './media/hls/service.js';
import { StreamAddressIssuer } from './media/relay/stream-addresses.js';
import { TicketSigner } from './media/ticket.js';
import { AudioTranscoders } from './media/webrtc/audio-transcoders.js';
import { registerAudioTranscoderMetrics, registerWebRtcMetrics } from './media/webrtc/metrics.js';
import { WebRtcSessions } from './media/webrtc/sessions.js';
import { EventBus } from './domain/bus.js';
import { createDiscovery } from './onvif/discovery/service.js';
import { CameraManager, pickDeviceServiceUrl } from './onvif/manager.js';
import { buildApiServer } from './api/server.js';
import { createSnapshots } from './media/still/create.js';
import { loadTlsCredentials } from './api/tls.js';
import { registerGatewayMetrics } from './metrics/gateway-metrics.js';
import { openMetricsListener } from './metrics/metrics-server.js';
import { createLogger } from './daemon/process.js';
import { gatewayId } from './daemon/gateway-id.js';
import { clockSynchronized, reservePort } from './daemon/host.js';
import { createCloudSync } from './sync/create.js';
import { createSdNotify, type SdNotify } from './daemon/sd-notify.js';
import { isLoopbackHost } from './config/load.js';
import { parseListenAddress } from './config/listen.js';
import { SecretBox } from './platform/secret-box.js';
import { Store } from './store/store.js';
import { readVersion } from './version.js';
import { registerSyncMetrics } from './sync/metrics.js';
import { EventHub } from './api/events/hub.js';
import { playbackMinter } from './api/routes/playback.js';
import { registerEventStreamMetrics } from './api/events/metrics.js';

// The one place that builds the parts and wires them together, in start-up order. Nothing else
// constructs a part; each part's own helpers live with it (src/daemon for the process and host).

// Re-exported for the CLI and the daemon tests, which load them from the built main.js.
export { createLogger, installFatalHandlers } from './daemon/process.js';
export { gatewayId } from './daemon/gateway-id.js';

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
    // The event-loop delay is sampled by a timer; prom-client's 10 ms one woke an idle gateway 100
    // times a second, ~1 % of a core doing nothing (docs/performance.md). Every
    // 100 ms still catches every stall that long and samples shorter ones.
    collectDefaultMetrics({ register: registry, prefix: 'edge_gateway_', eventLoopMonitoringPrecision: 100 });
    const metricsListen = config.metrics.listen === null ? null : parseListenAddress(config.metrics.listen);
    registerGatewayMetrics(registry, {
      version: readVersion(),
      // The id names this gateway's MQTT topics: it is shown only where this box alone can look.
      gatewayId: metricsListen && isLoopbackHost(metricsListen.host) ? id : null,
      clockSynchronized,
    });

    // Stream and playback tickets: live addresses, the relay, and the recordings' playback_url.
    const tickets = TicketSigner.openInDir(dataDir, secretBox);
    const mintPlayback = playbackMinter(tickets, config.recording.playback_ttl_s);
    // The API's event stream: every change it tells of is kept in the store (same transaction) from
    // here on, before anything (crash recovery included) can make one.
    const eventHub = new EventHub({
      events: store,
      // recording.created carries playback_url as GET does (the stream's token has recordings:read).
      mintPlayback,
      maxSubscribers: config.events.max_subscribers,
      heartbeatMs: config.events.heartbeat_s * 1000,
      maxQueueBytes: config.events.max_queue_bytes,
      revocationCheckMs: config.events.revocation_check_ms,
    });
    store.enableEventLog({ maxEvents: config.events.window_max_events, maxAgeMs: config.events.window_max_age_s * 1000 }, () => eventHub.notify());
    cleanups.unshift(() => eventHub.close(0));
    registerEventStreamMetrics(registry, () => eventHub.stats());

    const apiPort = await reservePort(config.api.host, config.api.port);
    cleanups.unshift(() => apiPort.release());
    const localIssuer = config.auth.local.enabled ? await openLocalIssuer(config, secretBox, apiPort.port) : null;
    if (localIssuer) {
      const stopRotation = await startKeyRotation(localIssuer, config.auth.local.key_rotation_days, log);
      cleanups.unshift(stopRotation);
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
      maxBackoffMs: config.onvif.max_backoff_s * 1000,
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
    // A loopback relay URL with a recorder ticket (the recorder's and the audio transcoder's): short-lived (it only has to start a session).
    const recorderUrl = (deviceId: string, profile: StreamProfile) =>
      `rtsp://${relayHost.includes(':') ? `[${relayHost}]` : relayHost}:${relay.port}/live/${tickets.issue({ deviceId, profile, expiresAt: Date.now() + 60_000, recorder: true })}`;
    // LL-HLS: muxers fed by the same camera sessions, served under /live/{ticket}/ by the API.
    const hls = new HlsService({
      acquire: (deviceId, profile) => relayStreams.acquire(deviceId, profile),
      logger: log.child({ part: 'hls' }),
      maxMuxers: config.hls.max_muxers,
      maxSessions: config.hls.max_sessions,
      maxBlockedRequests: config.hls.max_blocked_requests,
      partTarget: config.hls.part_target_ms / 1000,
      targetDuration: config.hls.target_duration_s,
      maxBytesPerMuxer: config.hls.max_bytes_per_muxer,
      idleS: config.hls.idle_close_s,
      maxSessionS: config.rtsp.max_session_s,
    });
    cleanups.unshift(() => hls.close());
    registerHlsMetrics(registry, () => hls.stats());
    const addresses = new StreamAddressIssuer({
      tickets,
      ticketTtlS: config.rtsp.ticket_ttl_s,
      publicHost: config.rtsp.public_host,
      relayPort: relay.port,
      apiPort: apiPort.port,
      ownNames: config.api.public_host ? [config.api.public_host] : [],
    });
    const streams: StreamAddresses = {
      issue: async (deviceId, profile, options = {}) => {
        if (store.getDevice(deviceId)?.status !== 'online') throw new DeviceUnavailableError(`device ${deviceId} is not online`);
        if (!cameras.streamSource(deviceId, profile)) throw new DeviceUnavailableError(`device ${deviceId} has no ${profile} stream`);
        return addresses.byProtocol(options.protocol ?? 'rtsp', { deviceId, profile, requestHost: options.requestHost ?? null });
      },
    };

    // WebRTC live view (WHEP): sessions read the relay's camera streams like RTSP viewers.
    const w = config.webrtc;
    // AAC → Opus for WebRTC (webrtc.audio_transcode): ffmpeg reads the audio through the relay, as the recorder does.
    const audioTranscoders = w.audio_transcode
      ? new AudioTranscoders({
          ffmpegPath: config.ffmpeg.path,
          inputUrl: (deviceId, profile) => recorderUrl(deviceId, profile),
          maxTranscoders: w.max_audio_transcoders,
          bitrate: 32_000,
          logger: log.child({ part: 'webrtc' }),
        })
      : null;
    if (audioTranscoders) {
      cleanups.unshift(() => audioTranscoders.close());
      registerAudioTranscoderMetrics(registry, () => audioTranscoders.stats());
    }
    const webrtc = new WebRtcSessions({
      acquire: (deviceId, profile) => relayStreams.acquire(deviceId, profile),
      maxSessions: w.max_sessions,
      maxSessionsPerAddress: w.max_sessions_per_address,
      bindAddress: w.bind_address,
      iceServers: w.ice_servers,
      portRange: w.udp_port_max > 0 ? { begin: w.udp_port_min || 1024, end: w.udp_port_max } : null,
      connectTimeoutS: w.connect_timeout_s,
      nackBufferPackets: w.nack_buffer_packets,
      audioTranscode: audioTranscoders,
      logger: log.child({ part: 'webrtc' }),
    });
    cleanups.unshift(() => webrtc.close());
    registerWebRtcMetrics(registry, () => webrtc.stats());

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
    // The object detector for motion starts (docs/detection.md); its settings per configured camera.
    const cameraConfig = (deviceId: string) => config.cameras.find((c) => c.onvif_url === store.getCamera(deviceId)?.onvifUrl) ?? null;
    const detection = startDetection({
      config: config.detection,
      ffmpegPath: config.ffmpeg.path,
      frameStream: (deviceId) => relayStreams.acquire(deviceId, 'main'),
      camera: cameraConfig,
      registry,
      logger: log.child({ part: 'detect' }),
      ...(opts.detectorWorkerUrl ? { workerUrl: opts.detectorWorkerUrl } : {}),
      ...(sync ? { onConfirmed: (deviceId: string, thumbnail: Buffer) => sync.detectionImage(deviceId, thumbnail) } : {}),
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

    // Still pictures for GET /v1/devices/{id}/snapshot: the relay's cached keyframe decoded once.
    const stills = createSnapshots(config.snapshot, { ffmpegPath: config.ffmpeg.path, streams: relayStreams, cameras, registry, logger: log.child({ part: 'snapshot' }) });
    cleanups.unshift(() => stills.stop());

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
      live: { tickets, hls, maxSessionS: config.rtsp.max_session_s, ...(config.webrtc.enabled ? { webrtc } : {}) },
      playback: { tickets, mint: mintPlayback },
      events: { hub: eventHub, ...(localIssuer ? { revoked: tokenRevocation(localIssuer.issuer, (jti) => store.isAccessTokenRevoked(jti)) } : {}) },
      localJwks: localIssuer ? () => localIssuer.publicJwks() : null,
      detector: () => detection?.health() ?? 'off',
      snapshots: stills.snapshots,
      oauth: localIssuer
        ? {
            server: new AuthorizationServer({
              store,
              issuer: localIssuer,
              tokenKey: openTokenKey(dataDir, secretBox),
              accessTtlS: config.auth.local.access_ttl_s,
              refreshTtlS: config.auth.local.refresh_ttl_s,
              accessTokenId: localAccessTokenId(verifier, localIssuer.issuer),
              logger: log.child({ part: 'oauth' }),
              ...(opts.oauthClock ? { now: opts.oauthClock } : {}),
            }),
            issuer: localIssuer.issuer,
            users: store,
            sessions: new LoginSessions(),
            limits: { byUser: new LoginRateLimiter(), byAddress: new LoginRateLimiter() },
            firstParty: { apiPort: apiPort.port, isOwnHost: (host) => isOwnHost(host, config.api.public_host ? [config.api.public_host] : []) },
            logger: log.child({ part: 'oauth' }),
            ...(opts.oauthClock ? { now: opts.oauthClock } : {}),
          }
        : null,
    });
    cleanups.unshift(() => api.close());
    await apiPort.release();
    await api.listen({ host: config.api.host, port: apiPort.port });
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
