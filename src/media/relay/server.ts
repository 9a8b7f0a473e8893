import { createServer, type Server, type Socket } from 'node:net';
import { isIPv6 } from 'node:net';
import type { BaseLogger } from 'pino';
import { REPEAT_LOG_INTERVAL_MS, throttledLog } from '../../daemon/throttled-log.js';
import type { TicketSigner } from '../ticket.js';
import { RelayConnection, type RelayConnectionContext } from './connection.js';
import { RelaySessions } from './sessions.js';
import type { RelayStreams } from './streams.js';
import { openRelayUdp } from './udp.js';

// The relay's server side for LAN viewers: rtsp://gateway:8554/live/<ticket>[/trackID=N].
// The ticket is checked on DESCRIBE, SETUP and PLAY (an expired one starts nothing); a session
// started before expiry plays until the viewer ends it, times out, or maxSessionS passes. RTP goes
// over the RTSP connection (interleaved) or over UDP to the viewer's address. Camera addresses and
// credentials never reach a viewer. This file accepts connections, limits them per address and
// listens; each connection's requests are a RelayConnection's (connection.ts).

export interface RelayServerOptions {
  host: string;
  port: number;
  /** RTP port for viewers over UDP (RTCP on the next); 0: any free pair. */
  udpPort?: number;
  tickets: TicketSigner;
  streams: RelayStreams;
  logger: BaseLogger;
  maxConnectionsPerAddress?: number;
  /**
   * Session timeout announced to viewers: a UDP session without a request or receiver report for
   * this long ends, and so does a connection without a byte from its viewer that plays nothing.
   */
  sessionTimeoutS?: number;
  maxSessionS?: number;
  now?: () => number;
  /** Addresses of this box, from which recorder tickets are honoured (default: loopback). */
  trustedAddress?: (address: string) => boolean;
  /** How often session timeouts are checked (tests shorten it). */
  sweepMs?: number;
}

export interface RelayServerStats {
  connections: number;
  sessions: { tcp: number; udp: number; playing: number };
  /** Connections refused since the start, by reason. */
  refused: { per_address_limit: number };
}

export interface RelayServer {
  readonly port: number;
  readonly udpPorts: [number, number];
  readonly connections: number;
  stats(): RelayServerStats;
  /** RTSP sessions playing the device's streams for viewers (the recorder's and this box's other readers' not counted). */
  viewersOf(deviceId: string): number;
  close(): Promise<void>;
}

export async function startRelayServer(opts: RelayServerOptions): Promise<RelayServer> {
  const perAddress = new Map<string, number>();
  const sockets = new Set<Socket>();
  const now = opts.now ?? Date.now;
  const maxPerAddress = opts.maxConnectionsPerAddress ?? 16;
  const trusted = opts.trustedAddress ?? isLoopbackAddress;
  const timeoutS = opts.sessionTimeoutS ?? 60;
  const sessions = new RelaySessions({
    timeoutS,
    maxSessionS: opts.maxSessionS ?? 3600,
    maxPerAddress,
    now,
    ...(opts.sweepMs ? { sweepMs: opts.sweepMs } : {}),
  });
  const udpIpv6 = isIPv6(opts.host);
  const udp = await openRelayUdp({
    host: opts.host,
    port: opts.udpPort ?? 0,
    onRtcpFrom: (address) => sessions.touchUdp(address),
  });
  // Anyone on the LAN can open connections and send requests at will: a flood must not become a
  // flood of log writes.
  const tooMany = throttledLog({
    logger: opts.logger,
    level: 'warn',
    msg: 'relay: too many connections from one address',
    intervalMs: REPEAT_LOG_INTERVAL_MS,
  });
  const failed = throttledLog({
    logger: opts.logger,
    level: 'error',
    msg: 'relay: request failed',
    intervalMs: REPEAT_LOG_INTERVAL_MS,
  });
  const ctx: RelayConnectionContext = {
    tickets: opts.tickets,
    streams: opts.streams,
    logger: opts.logger,
    failed,
    now,
    sessions,
    udp,
    udpIpv6,
    timeoutS,
    trusted,
  };

  const server: Server = createServer((socket) => {
    const address = socket.remoteAddress ?? '?';
    const count = (perAddress.get(address) ?? 0) + 1;
    // The box's own addresses are its own readers' (the motion watcher, the transcoder), not a LAN client.
    if (count > maxPerAddress && !trusted(address)) {
      tooMany.hit({ address }, address);
      socket.destroy();
      return;
    }
    perAddress.set(address, count);
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.once('close', () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    new RelayConnection(socket, ctx).serve();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => resolve());
    });
  } catch (err) {
    sessions.close();
    tooMany.close();
    failed.close();
    await udp.close();
    throw err;
  }
  const port = (server.address() as { port: number }).port;
  return {
    port,
    udpPorts: [udp.rtpPort, udp.rtcpPort],
    get connections() {
      return sockets.size;
    },
    stats: () => ({
      connections: sockets.size,
      sessions: sessions.counts(),
      refused: { per_address_limit: tooMany.total },
    }),
    viewersOf: (deviceId) => sessions.viewersOf(deviceId),
    close: async () => {
      sessions.close();
      tooMany.close();
      failed.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await udp.close();
    },
  };
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (a dual-stack listener reports those). */
export function isLoopbackAddress(address: string): boolean {
  return address === '::1' || /^(?:::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address);
}
