import { createServer, type Server, type Socket } from 'node:net';
import { isIPv6 } from 'node:net';
import type { BaseLogger } from 'pino';
import {
  formatResponse,
  formatRtpInfo,
  parseTransport,
  reasonPhrase,
  RtspHeaders,
  RtspParseError,
  RtspStreamReader,
  type RtspRequest,
  type TransportSpec,
} from '../rtsp/index.js';
import { REPEAT_LOG_INTERVAL_MS, throttledLog, type ThrottledLog } from '../../daemon/throttled-log.js';
import { TicketError, type TicketClaims, type TicketSigner } from '../ticket.js';
import { RelaySessions, sessionReader, TooManySessionsError, type RelaySession } from './sessions.js';
import { StreamUnavailableError, type RelayStreams } from './streams.js';
import { openRelayUdp, udpAddressOf, type RelayUdp } from './udp.js';

// The relay's server side for LAN viewers: rtsp://gateway:8554/live/<ticket>[/trackID=N].
// The ticket is checked on DESCRIBE, SETUP and PLAY (an expired one starts nothing); a session
// started before expiry plays until the viewer ends it, times out, or maxSessionS passes. RTP goes
// over the RTSP connection (interleaved) or over UDP to the viewer's address. Camera addresses and
// credentials never reach a viewer.

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

const PUBLIC = 'OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER, SET_PARAMETER';
const PATH = /^\/live\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22})(?:\/(.*))?$/;

class RtspStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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
  close(): Promise<void>;
}

interface Context {
  opts: RelayServerOptions;
  /** Requests that failed unexpectedly (500): any viewer can repeat one at will. */
  failed: ThrottledLog;
  now: () => number;
  sessions: RelaySessions;
  udp: RelayUdp;
  udpIpv6: boolean;
  timeoutS: number;
}

export async function startRelayServer(opts: RelayServerOptions): Promise<RelayServer> {
  const perAddress = new Map<string, number>();
  const sockets = new Set<Socket>();
  const now = opts.now ?? Date.now;
  const maxPerAddress = opts.maxConnectionsPerAddress ?? 16;
  const trusted = opts.trustedAddress ?? isLoopbackAddress;
  const timeoutS = opts.sessionTimeoutS ?? 60;
  const sessions = new RelaySessions({ timeoutS, maxSessionS: opts.maxSessionS ?? 3600, maxPerAddress, now, ...(opts.sweepMs ? { sweepMs: opts.sweepMs } : {}) });
  const udpIpv6 = isIPv6(opts.host);
  const udp = await openRelayUdp({ host: opts.host, port: opts.udpPort ?? 0, onRtcpFrom: (address) => sessions.touchUdp(address) });
  // Anyone on the LAN can open connections and send requests at will: a flood must not become a
  // flood of log writes.
  const tooMany = throttledLog({ logger: opts.logger, level: 'warn', msg: 'relay: too many connections from one address', intervalMs: REPEAT_LOG_INTERVAL_MS });
  const failed = throttledLog({ logger: opts.logger, level: 'error', msg: 'relay: request failed', intervalMs: REPEAT_LOG_INTERVAL_MS });
  const ctx: Context = { opts, failed, now, sessions, udp, udpIpv6, timeoutS };

  const server: Server = createServer((socket) => {
    const address = socket.remoteAddress ?? '?';
    const count = (perAddress.get(address) ?? 0) + 1;
    // The box's own addresses are the recorder's (one connection per camera), not a LAN client.
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
    serveConnection(socket, ctx);
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
    stats: () => ({ connections: sockets.size, sessions: sessions.counts(), refused: { per_address_limit: tooMany.total } }),
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

/** The transport a SETUP gets: the viewer's first offer the relay can serve. */
function chooseTransport(specs: TransportSpec[]): TransportSpec | null {
  return specs.find((s) => s.delivery !== 'multicast' && (s.lowerTransport === 'TCP' || s.clientPort !== undefined)) ?? null;
}

function serveConnection(socket: Socket, ctx: Context): void {
  const { opts, sessions, udp } = ctx;
  const address = socket.remoteAddress ?? '?';
  const reader = new RtspStreamReader();
  let queue = Promise.resolve();
  /** Sessions set up on this connection that play RTP over it: they keep it open while silent. */
  let interleavedPlaying = 0;
  /** Requests read but not yet answered: a DESCRIBE waits for the camera session to open. */
  let unanswered = 0;
  const idleMs = ctx.timeoutS * 1000;
  socket.setTimeout(idleMs, () => {
    // A viewer that receives interleaved RTP need not say anything (some never send RTCP): a dead
    // one shows as a growing send queue, and the fan-out evicts it. A connection waiting for our
    // answer is not idle either: the socket is silent only because the camera is slow to open.
    if (interleavedPlaying === 0 && unanswered === 0) socket.destroy();
    else if (unanswered > 0) socket.setTimeout(idleMs);
  });
  socket.once('close', () => sessions.connectionClosed(socket));
  socket.on('error', () => socket.destroy());

  const reply = (req: RtspRequest | null, status: number, headers: Record<string, string> = {}, body = Buffer.alloc(0), session: RelaySession | null = null) => {
    if (socket.destroyed) return;
    const h = new RtspHeaders({ CSeq: req?.headers.get('cseq') ?? '0', Server: 'edge-gateway', ...headers });
    if (session) h.set('Session', `${session.id};timeout=${ctx.timeoutS}`);
    socket.write(formatResponse({ status, reason: reasonPhrase(status), headers: h, body }));
  };

  const verify = (uri: string): { claims: TicketClaims; rest: string | undefined } => {
    let path = uri;
    if (/^rtsps?:\/\//i.test(uri)) {
      try {
        path = new URL(uri).pathname;
      } catch {
        throw new RtspStatusError(400, 'bad URL');
      }
    }
    const m = PATH.exec(path);
    if (!m) throw new RtspStatusError(404, 'no such stream');
    try {
      return { claims: opts.tickets.verify(m[1] as string, ctx.now()), rest: m[2] };
    } catch (err) {
      if (err instanceof TicketError) throw new RtspStatusError(401, err.message);
      throw err;
    }
  };

  /** The recorder's tickets only work from this box (a copied URL is no use elsewhere). */
  const fromTrusted = (opts.trustedAddress ?? isLoopbackAddress)(address);
  const verifyFor = (uri: string): { claims: TicketClaims; rest: string | undefined } => {
    const verified = verify(uri);
    if (verified.claims.recorder && !fromTrusted) throw new RtspStatusError(401, 'a recorder ticket from another host');
    return verified;
  };

  /** The session a request names; 454 when it names one that is not (or not this viewer's). */
  const sessionOf = (req: RtspRequest): RelaySession | null => {
    const header = req.headers.get('session');
    if (header === undefined) return null;
    const found = sessions.find(header.split(';')[0]?.trim() ?? '', address);
    if (!found) throw new RtspStatusError(454, 'session not found');
    return found;
  };

  const setup = async (req: RtspRequest): Promise<void> => {
    const { claims, rest } = verifyFor(req.uri);
    const track = /^trackID=(\d+)$/.exec(rest ?? '')?.[1];
    if (track === undefined) throw new RtspStatusError(404, 'no such track');
    let session = sessionOf(req);
    if (session && (session.deviceId !== claims.deviceId || session.profile !== claims.profile)) throw new RtspStatusError(459, 'one stream per session');
    if (session?.detach) throw new RtspStatusError(455, 'already playing');
    const transport = chooseTransport(parseTransport(req.headers.get('transport') ?? ''));
    if (!transport) throw new RtspStatusError(461, 'offer RTP/AVP/TCP (interleaved) or RTP/AVP with client_port');
    const kind = transport.lowerTransport === 'TCP' ? 'tcp' : 'udp';
    if (session && session.transport !== kind) throw new RtspStatusError(461, 'all tracks of a session use one transport');
    const handle = session?.handle ?? (await opts.streams.acquire(claims.deviceId, claims.profile));
    const index = Number(track);
    if (index >= handle.trackCount) throw new RtspStatusError(404, 'no such track');
    if (socket.destroyed) return;
    try {
      session ??= sessions.create({ deviceId: claims.deviceId, profile: claims.profile, address, transport: kind, handle, connection: socket, unlimited: claims.recorder === true }, !fromTrusted);
    } catch (err) {
      if (err instanceof TooManySessionsError) throw new RtspStatusError(453, err.message);
      throw err;
    }
    if (kind === 'tcp') {
      const channel = transport.interleaved?.[0] ?? index * 2;
      session.tracks.set(index, { kind, channel });
      return reply(req, 200, { Transport: `RTP/AVP/TCP;unicast;interleaved=${channel}-${channel + 1}` }, undefined, session);
    }
    const [rtpPort, rtcpPort] = transport.clientPort as [number, number];
    session.tracks.set(index, { kind, rtpPort, rtcpPort });
    const client = udpAddressOf(address, ctx.udpIpv6);
    return reply(
      req,
      200,
      { Transport: `RTP/AVP;unicast;destination=${client};client_port=${rtpPort}-${rtcpPort};server_port=${udp.rtpPort}-${udp.rtcpPort}` },
      undefined,
      session,
    );
  };

  const play = (req: RtspRequest): void => {
    verifyFor(req.uri);
    const session = sessionOf(req);
    if (!session) throw new RtspStatusError(454, 'SETUP first, then PLAY with its Session');
    if (session.detach) return reply(req, 200, { Range: 'npt=now-' }, undefined, session);
    // Where each track starts for this viewer (the cached group of pictures), in the same tick as
    // the attach below, so RTP-Info matches the first packet sent.
    const base = req.uri.replace(/\/+$/, '');
    const rtpInfo = session.handle
      .startOfNextReader()
      .filter((s) => session.tracks.has(s.track))
      .map((s) => ({ url: `${base}/trackID=${s.track}`, seq: s.sequence, rtptime: s.rtpTime }));
    reply(req, 200, { Range: 'npt=now-', ...(rtpInfo.length ? { 'RTP-Info': formatRtpInfo(rtpInfo) } : {}) }, undefined, session);
    session.detach = session.handle.attach(sessionReader(session, udp, udpAddressOf(address, ctx.udpIpv6), () => sessions.end(session)));
    if (session.transport === 'tcp') {
      interleavedPlaying++;
      const detach = session.detach;
      session.detach = () => {
        interleavedPlaying--;
        detach();
      };
    }
  };

  const handle = async (req: RtspRequest): Promise<void> => {
    switch (req.method) {
      case 'OPTIONS':
      case 'GET_PARAMETER':
      case 'SET_PARAMETER': {
        // Keep-alives: with a Session header they keep that session alive (sessionOf touches it).
        const session = sessionOf(req);
        return reply(req, 200, req.method === 'OPTIONS' ? { Public: PUBLIC } : {}, undefined, session);
      }
      case 'DESCRIBE': {
        const { claims } = verifyFor(req.uri);
        const stream = await opts.streams.acquire(claims.deviceId, claims.profile);
        const base = req.uri.replace(/\/+$/, '');
        return reply(req, 200, { 'Content-Type': 'application/sdp', 'Content-Base': `${base}/` }, Buffer.from(stream.sdp));
      }
      case 'SETUP':
        return setup(req);
      case 'PLAY':
        return play(req);
      case 'TEARDOWN': {
        const session = sessionOf(req);
        reply(req, 200);
        if (session) sessions.end(session);
        return;
      }
      default:
        throw new RtspStatusError(501, `${req.method} is not implemented`);
    }
  };

  socket.on('data', (chunk: Buffer) => {
    try {
      reader.push(chunk);
      for (let item = reader.next(); item; item = reader.next()) {
        if (item.kind !== 'request') continue; // RTCP receiver reports and stray responses
        const req = item.msg;
        // One request at a time, in order, as RTSP requires of answers on one connection.
        unanswered++;
        queue = queue.then(() =>
          handle(req)
            .catch((err: unknown) => {
              const status = err instanceof RtspStatusError ? err.status : err instanceof StreamUnavailableError ? 503 : err instanceof RtspParseError ? err.status : 500;
              if (status === 500) ctx.failed.hit({ err, method: req.method }, req.method);
              else opts.logger.debug({ method: req.method, status, reason: (err as Error).message }, 'relay: request refused');
              reply(req, status);
            })
            .finally(() => unanswered--),
        );
      }
    } catch (err) {
      // Malformed or oversized input: answer once if we can, then drop the connection.
      if (err instanceof RtspParseError) reply(null, err.status);
      socket.end();
      setTimeout(() => socket.destroy(), 200).unref();
    }
  });
}
