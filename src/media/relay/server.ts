import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { BaseLogger } from 'pino';
import {
  formatResponse,
  parseTransport,
  reasonPhrase,
  RtspHeaders,
  RtspParseError,
  RtspStreamReader,
  type RtspRequest,
} from '../rtsp/index.js';
import { TicketError, type TicketClaims, type TicketSigner } from '../ticket.js';
import type { FanOutReader } from './fanout.js';
import { StreamUnavailableError, type RelayStreams, type StreamHandle } from './streams.js';

// The relay's server side for LAN viewers: rtsp://gateway:8554/live/<ticket>[/trackID=N].
// The ticket is checked on DESCRIBE, SETUP and PLAY (an expired one starts nothing); a session
// started before expiry plays until the viewer ends it or maxSessionS passes. RTP goes over the
// RTSP connection (interleaved). Camera addresses and credentials never reach a viewer.

export interface RelayServerOptions {
  host: string;
  port: number;
  tickets: TicketSigner;
  streams: RelayStreams;
  logger: BaseLogger;
  maxConnectionsPerAddress?: number;
  /** Connection closed after this long without a byte from the viewer. */
  idleTimeoutS?: number;
  maxSessionS?: number;
  now?: () => number;
}

const PUBLIC = 'OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER, SET_PARAMETER';
const PATH = /^\/live\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22})(?:\/(.*))?$/;

interface Session {
  id: string;
  claims: TicketClaims;
  handle: StreamHandle;
  channels: Map<number, number>; // track → RTP channel
  detach: (() => void) | null;
}

class HttpishError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface RelayServer {
  readonly port: number;
  close(): Promise<void>;
  readonly connections: number;
}

export async function startRelayServer(opts: RelayServerOptions): Promise<RelayServer> {
  const perAddress = new Map<string, number>();
  const sockets = new Set<Socket>();
  const now = opts.now ?? Date.now;
  const maxPerAddress = opts.maxConnectionsPerAddress ?? 16;

  const server: Server = createServer((socket) => {
    const address = socket.remoteAddress ?? '?';
    const count = (perAddress.get(address) ?? 0) + 1;
    if (count > maxPerAddress) {
      opts.logger.warn({ address }, 'relay: too many connections from one address');
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
    serveConnection(socket, opts, now);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    get connections() {
      return sockets.size;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function serveConnection(socket: Socket, opts: RelayServerOptions, now: () => number): void {
  const reader = new RtspStreamReader();
  let session: Session | null = null;
  let queue = Promise.resolve();
  socket.setTimeout((opts.idleTimeoutS ?? 60) * 1000, () => socket.destroy());
  const maxSession = setTimeout(() => socket.destroy(), (opts.maxSessionS ?? 3600) * 1000);
  maxSession.unref();

  const end = () => {
    clearTimeout(maxSession);
    session?.detach?.();
    session = null;
  };
  socket.once('close', end);
  socket.on('error', () => socket.destroy());

  const reply = (req: RtspRequest | null, status: number, headers: Record<string, string> = {}, body = Buffer.alloc(0)) => {
    const h = new RtspHeaders({ CSeq: req?.headers.get('cseq') ?? '0', Server: 'edge-gateway', ...headers });
    if (session && !h.has('session')) h.set('Session', `${session.id};timeout=${opts.idleTimeoutS ?? 60}`);
    socket.write(formatResponse({ status, reason: reasonPhrase(status), headers: h, body }));
  };

  const verify = (uri: string): { claims: TicketClaims; rest: string | undefined } => {
    let path = uri;
    if (/^rtsps?:\/\//i.test(uri)) {
      try {
        path = new URL(uri).pathname;
      } catch {
        throw new HttpishError(400, 'bad URL');
      }
    }
    const m = PATH.exec(path);
    if (!m) throw new HttpishError(404, 'no such stream');
    try {
      return { claims: opts.tickets.verify(m[1] as string, now()), rest: m[2] };
    } catch (err) {
      if (err instanceof TicketError) throw new HttpishError(401, err.message);
      throw err;
    }
  };

  const handle = async (req: RtspRequest): Promise<void> => {
    switch (req.method) {
      case 'OPTIONS':
        return reply(req, 200, { Public: PUBLIC });
      case 'GET_PARAMETER':
      case 'SET_PARAMETER':
        return reply(req, 200);
      case 'DESCRIBE': {
        const { claims } = verify(req.uri);
        const stream = await opts.streams.acquire(claims.deviceId, claims.profile);
        const base = req.uri.replace(/\/+$/, '');
        return reply(req, 200, { 'Content-Type': 'application/sdp', 'Content-Base': `${base}/` }, Buffer.from(stream.sdp));
      }
      case 'SETUP': {
        const { claims, rest } = verify(req.uri);
        const track = /^trackID=(\d+)$/.exec(rest ?? '')?.[1];
        if (track === undefined) throw new HttpishError(404, 'no such track');
        if (session && (session.claims.deviceId !== claims.deviceId || session.claims.profile !== claims.profile)) throw new HttpishError(459, 'one stream per session');
        const stream = session?.handle ?? (await opts.streams.acquire(claims.deviceId, claims.profile));
        const index = Number(track);
        if (index >= stream.trackCount) throw new HttpishError(404, 'no such track');
        const specs = parseTransport(req.headers.get('transport') ?? '');
        const tcp = specs.find((s) => s.lowerTransport === 'TCP');
        if (!tcp) throw new HttpishError(461, 'only RTP over the RTSP connection (TCP interleaved) is offered');
        const channel = tcp.interleaved?.[0] ?? index * 2;
        session ??= { id: randomBytes(8).toString('hex'), claims, handle: stream, channels: new Map(), detach: null };
        session.channels.set(index, channel);
        return reply(req, 200, { Transport: `RTP/AVP/TCP;unicast;interleaved=${channel}-${channel + 1}` });
      }
      case 'PLAY': {
        verify(req.uri);
        if (!session) throw new HttpishError(455, 'SETUP first');
        if (req.headers.get('session')?.split(';')[0] !== session.id) throw new HttpishError(454, 'session not found');
        reply(req, 200, { Range: 'npt=now-' });
        if (!session.detach) session.detach = session.handle.attach(viewer(socket, session));
        return;
      }
      case 'TEARDOWN':
        reply(req, 200);
        session?.detach?.();
        session = null;
        return;
      default:
        throw new HttpishError(501, `${req.method} is not implemented`);
    }
  };

  socket.on('data', (chunk: Buffer) => {
    try {
      reader.push(chunk);
      for (let item = reader.next(); item; item = reader.next()) {
        if (item.kind !== 'request') continue; // RTCP receiver reports and stray responses
        const req = item.msg;
        // One request at a time, in order, as RTSP requires of answers on one connection.
        queue = queue.then(() =>
          handle(req).catch((err: unknown) => {
            const status = err instanceof HttpishError ? err.status : err instanceof StreamUnavailableError ? 503 : err instanceof RtspParseError ? err.status : 500;
            if (status === 500) opts.logger.error({ err }, 'relay: request failed');
            reply(req, status);
          }),
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

/** A viewer as a fan-out reader: RTP framed on the RTSP connection, backpressure from its socket. */
function viewer(socket: Socket, session: Session): FanOutReader {
  return {
    pendingBytes: () => socket.writableLength,
    deliver: (track, packet) => {
      const channel = session.channels.get(track);
      if (channel === undefined || socket.destroyed) return;
      const header = Buffer.allocUnsafe(4);
      header[0] = 0x24;
      header[1] = channel;
      header.writeUInt16BE(packet.length, 2);
      socket.cork();
      socket.write(header);
      socket.write(packet);
      socket.uncork();
    },
    evict: () => socket.destroy(),
  };
}
