import type { BaseLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.js';
import type { EventBus } from '../../domain/bus.js';
import type { StreamProfile } from '../../domain/types.js';
import type { TicketSigner } from '../ticket.js';
import { registerRelayMetrics } from './metrics.js';
import { startRelayServer, type RelayServer } from './server.js';
import { RelayStreams, type CameraSource } from './streams.js';
import { urlHost } from './stream-addresses.js';

/** How long a ticket of the gateway's own readers stays valid: it only has to start a session. */
const OWN_READER_TICKET_MS = 60_000;

export interface Relay {
  /** The camera sessions every viewer, muxer and reader of this box shares, one per camera profile. */
  streams: RelayStreams;
  server: RelayServer;
  /**
   * An rtsp:// URL of the relay for an ffmpeg reading on this box (the motion watcher, the audio
   * transcoder): a fresh short-lived recorder ticket each call.
   */
  localUrl: (deviceId: string, profile: StreamProfile) => string;
}

/**
 * The RTSP relay of config rtsp.*: one session per camera profile shared by all, and the server
 * LAN viewers and this box's own readers connect to. `defer` is given what closes them.
 */
export async function createRelay(
  config: Config,
  deps: {
    locate: (deviceId: string, profile: StreamProfile) => CameraSource | null;
    tickets: TicketSigner;
    /** A camera given a new stream URL (camera.settings with rtsp_urls): its sessions open again there. */
    bus: EventBus;
    registry: Registry;
    logger: BaseLogger;
  },
  defer: (undo: () => unknown) => void,
): Promise<Relay> {
  const streams = new RelayStreams({ locate: deps.locate, logger: deps.logger, idleCloseS: config.rtsp.idle_close_s });
  defer(() => streams.close());
  deps.bus.on('camera.settings', (e) => {
    if (e.fields.includes('rtsp_urls')) streams.reopen(e.deviceId);
  });
  deps.bus.on('device.removed', (e) => streams.forget(e.deviceId));
  // This box's readers dial loopback when the relay listens on all addresses, else the address it
  // is bound to.
  const ownHost = config.rtsp.host === '0.0.0.0' || config.rtsp.host === '::' ? '127.0.0.1' : config.rtsp.host;
  const server = await startRelayServer({
    host: config.rtsp.host,
    port: config.rtsp.port,
    udpPort: config.rtsp.udp_port,
    tickets: deps.tickets,
    streams,
    logger: deps.logger,
    maxSessionS: config.rtsp.max_session_s,
    maxConnectionsPerAddress: config.rtsp.max_connections_per_address,
    // This box's readers connect from exactly the address they dial (not all of 127/8, so a local
    // client on another loopback address still meets the per-address limits).
    trustedAddress: (address) =>
      address === ownHost || address === `::ffff:${ownHost}` || (ownHost === '127.0.0.1' && address === '::1'),
  });
  defer(() => server.close());
  registerRelayMetrics(deps.registry, { server: () => server.stats(), streams: () => streams.stats() });
  return {
    streams,
    server,
    localUrl: (deviceId, profile) =>
      `rtsp://${urlHost(ownHost)}:${server.port}/live/${deps.tickets.issue({ deviceId, profile, expiresAt: Date.now() + OWN_READER_TICKET_MS, recorder: true })}`,
  };
}
