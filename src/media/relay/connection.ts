import type { Socket } from 'node:net';
import type { BaseLogger } from 'pino';
import {
  formatResponse,
  formatRtpInfo,
  parseTransport,
  reasonPhrase,
  RtspHeaders,
  RtspStreamReader,
  type RtspRequest,
  type TransportSpec,
} from '../rtsp/index.js';
import { RtspParseError } from '../rtsp/errors.js';
import type { ThrottledLog } from '../../daemon/throttled-log.js';
import type { TicketClaims, TicketSigner } from '../ticket.js';
import { TicketError } from '../errors.js';
import { sessionReader, type RelaySession, type RelaySessions } from './sessions.js';
import { RtspStatusError, StreamUnavailableError, TooManySessionsError } from './errors.js';
import type { RelayStreams } from './streams.js';
import { udpAddressOf, type RelayUdp } from './udp.js';

// One viewer's RTSP connection to the relay: its requests answered one at a time and in order,
// the ticket checked on DESCRIBE, SETUP and PLAY, and the connection's idle rule. The sessions it
// sets up live in RelaySessions (a UDP session outlives its connection); accepting connections and
// limiting them per address is server.ts's.

/** What every connection of one relay server shares. */
export interface RelayConnectionContext {
  tickets: TicketSigner;
  streams: RelayStreams;
  logger: BaseLogger;
  /** Requests that failed unexpectedly (500): any viewer can repeat one at will. */
  failed: ThrottledLog;
  now: () => number;
  sessions: RelaySessions;
  udp: RelayUdp;
  udpIpv6: boolean;
  timeoutS: number;
  /** Addresses of this box, from which recorder tickets are honoured. */
  trusted: (address: string) => boolean;
}

const PUBLIC = 'OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER, SET_PARAMETER';
const PATH = /^\/live\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22})(?:\/(.*))?$/;

interface Verified {
  claims: TicketClaims;
  /** The path after the ticket (`trackID=N`), if any. */
  rest: string | undefined;
}

/** The transport a SETUP gets: the viewer's first offer the relay can serve. */
function chooseTransport(specs: TransportSpec[]): TransportSpec | null {
  return (
    specs.find((s) => s.delivery !== 'multicast' && (s.lowerTransport === 'TCP' || s.clientPort !== undefined)) ?? null
  );
}

export class RelayConnection {
  private readonly address: string;
  private readonly reader = new RtspStreamReader();
  private queue = Promise.resolve();
  /** Sessions set up on this connection that play RTP over it: they keep it open while silent. */
  private interleavedPlaying = 0;
  /** Requests read but not yet answered: a DESCRIBE waits for the camera session to open. */
  private unanswered = 0;
  /** Recorder tickets only work from this box (a copied URL is no use elsewhere). */
  private readonly fromTrusted: boolean;

  constructor(
    private readonly socket: Socket,
    private readonly ctx: RelayConnectionContext,
  ) {
    this.address = socket.remoteAddress ?? '?';
    this.fromTrusted = ctx.trusted(this.address);
  }

  /** Starts reading requests; the connection lives until the socket closes. */
  serve(): void {
    const { socket, ctx } = this;
    const idleMs = ctx.timeoutS * 1000;
    socket.setTimeout(idleMs, () => {
      // A viewer that receives interleaved RTP need not say anything (some never send RTCP): a dead
      // one shows as a growing send queue, and the fan-out evicts it. A connection waiting for our
      // answer is not idle either: the socket is silent only because the camera is slow to open.
      if (this.interleavedPlaying === 0 && this.unanswered === 0) socket.destroy();
      else if (this.unanswered > 0) socket.setTimeout(idleMs);
    });
    socket.once('close', () => ctx.sessions.connectionClosed(socket));
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => this.read(chunk));
  }

  private read(chunk: Buffer): void {
    try {
      this.reader.push(chunk);
      for (let item = this.reader.next(); item; item = this.reader.next()) {
        if (item.kind !== 'request') continue; // RTCP receiver reports and stray responses
        const req = item.msg;
        // One request at a time, in order, as RTSP requires of answers on one connection.
        this.unanswered++;
        this.queue = this.queue.then(() =>
          this.handle(req)
            .catch((err: unknown) => this.refuse(req, err))
            .finally(() => this.unanswered--),
        );
      }
    } catch (err) {
      // Malformed or oversized input: answer once if we can, then drop the connection.
      if (err instanceof RtspParseError) this.reply(null, err.status);
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 200).unref();
    }
  }

  private refuse(req: RtspRequest, err: unknown): void {
    const status =
      err instanceof RtspStatusError
        ? err.status
        : err instanceof StreamUnavailableError
          ? 503
          : err instanceof RtspParseError
            ? err.status
            : 500;
    if (status === 500) this.ctx.failed.hit({ err, method: req.method }, req.method);
    else
      this.ctx.logger.debug({ method: req.method, status, reason: (err as Error).message }, 'relay: request refused');
    this.reply(req, status);
  }

  private async handle(req: RtspRequest): Promise<void> {
    switch (req.method) {
      case 'OPTIONS':
      case 'GET_PARAMETER':
      case 'SET_PARAMETER':
        return this.keepAlive(req);
      case 'DESCRIBE':
        return this.describe(req);
      case 'SETUP':
        return this.setup(req);
      case 'PLAY':
        return this.play(req);
      case 'TEARDOWN':
        return this.teardown(req);
      default:
        throw new RtspStatusError(501, `${req.method} is not implemented`);
    }
  }

  /**
   * OPTIONS, GET_PARAMETER, SET_PARAMETER: with a Session header they keep that session alive (sessionOf touches it).
   */
  private keepAlive(req: RtspRequest): void {
    const session = this.sessionOf(req);
    return this.reply(req, 200, req.method === 'OPTIONS' ? { Public: PUBLIC } : {}, undefined, session);
  }

  private async describe(req: RtspRequest): Promise<void> {
    const { claims } = this.verifyFor(req.uri);
    const stream = await this.ctx.streams.acquire(claims.deviceId, claims.profile);
    const base = req.uri.replace(/\/+$/, '');
    return this.reply(
      req,
      200,
      { 'Content-Type': 'application/sdp', 'Content-Base': `${base}/` },
      Buffer.from(stream.sdp),
    );
  }

  private async setup(req: RtspRequest): Promise<void> {
    const { ctx, socket, address } = this;
    const { claims, rest } = this.verifyFor(req.uri);
    const track = /^trackID=(\d+)$/.exec(rest ?? '')?.[1];
    if (track === undefined) throw new RtspStatusError(404, 'no such track');
    let session = this.sessionOf(req);
    if (session && (session.deviceId !== claims.deviceId || session.profile !== claims.profile))
      throw new RtspStatusError(459, 'one stream per session');
    if (session?.detach) throw new RtspStatusError(455, 'already playing');
    const transport = chooseTransport(parseTransport(req.headers.get('transport') ?? ''));
    if (!transport) throw new RtspStatusError(461, 'offer RTP/AVP/TCP (interleaved) or RTP/AVP with client_port');
    const kind = transport.lowerTransport === 'TCP' ? 'tcp' : 'udp';
    if (session && session.transport !== kind)
      throw new RtspStatusError(461, 'all tracks of a session use one transport');
    const handle = session?.handle ?? (await ctx.streams.acquire(claims.deviceId, claims.profile));
    const index = Number(track);
    if (index >= handle.trackCount) throw new RtspStatusError(404, 'no such track');
    if (socket.destroyed) return;
    try {
      session ??= ctx.sessions.create(
        {
          deviceId: claims.deviceId,
          profile: claims.profile,
          address,
          transport: kind,
          handle,
          connection: socket,
          unlimited: claims.recorder === true,
        },
        !this.fromTrusted,
      );
    } catch (err) {
      if (err instanceof TooManySessionsError) throw new RtspStatusError(453, err.message);
      throw err;
    }
    if (kind === 'tcp') {
      const channel = transport.interleaved?.[0] ?? index * 2;
      session.tracks.set(index, { kind, channel });
      return this.reply(
        req,
        200,
        { Transport: `RTP/AVP/TCP;unicast;interleaved=${channel}-${channel + 1}` },
        undefined,
        session,
      );
    }
    const [rtpPort, rtcpPort] = transport.clientPort as [number, number];
    session.tracks.set(index, { kind, rtpPort, rtcpPort });
    const client = udpAddressOf(address, ctx.udpIpv6);
    return this.reply(
      req,
      200,
      {
        Transport: `RTP/AVP;unicast;destination=${client};client_port=${rtpPort}-${rtcpPort};server_port=${ctx.udp.rtpPort}-${ctx.udp.rtcpPort}`,
      },
      undefined,
      session,
    );
  }

  private play(req: RtspRequest): void {
    const { ctx } = this;
    this.verifyFor(req.uri);
    const session = this.sessionOf(req);
    if (!session) throw new RtspStatusError(454, 'SETUP first, then PLAY with its Session');
    if (session.detach) return this.reply(req, 200, { Range: 'npt=now-' }, undefined, session);
    // Where each track starts for this viewer (the cached group of pictures), in the same tick as
    // the attach below, so RTP-Info matches the first packet sent.
    const base = req.uri.replace(/\/+$/, '');
    const rtpInfo = session.handle
      .startOfNextReader()
      .filter((s) => session.tracks.has(s.track))
      .map((s) => ({ url: `${base}/trackID=${s.track}`, seq: s.sequence, rtptime: s.rtpTime }));
    this.reply(
      req,
      200,
      { Range: 'npt=now-', ...(rtpInfo.length ? { 'RTP-Info': formatRtpInfo(rtpInfo) } : {}) },
      undefined,
      session,
    );
    session.detach = session.handle.attach(
      sessionReader(session, ctx.udp, udpAddressOf(this.address, ctx.udpIpv6), () => ctx.sessions.end(session)),
    );
    if (session.transport === 'tcp') {
      this.interleavedPlaying++;
      const detach = session.detach;
      session.detach = () => {
        this.interleavedPlaying--;
        detach();
      };
    }
  }

  private teardown(req: RtspRequest): void {
    const session = this.sessionOf(req);
    this.reply(req, 200);
    if (session) this.ctx.sessions.end(session);
  }

  private reply(
    req: RtspRequest | null,
    status: number,
    headers: Record<string, string> = {},
    body = Buffer.alloc(0),
    session: RelaySession | null = null,
  ): void {
    if (this.socket.destroyed) return;
    const h = new RtspHeaders({ CSeq: req?.headers.get('cseq') ?? '0', Server: 'edge-gateway', ...headers });
    if (session) h.set('Session', `${session.id};timeout=${this.ctx.timeoutS}`);
    this.socket.write(formatResponse({ status, reason: reasonPhrase(status), headers: h, body }));
  }

  private verify(uri: string): Verified {
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
      return { claims: this.ctx.tickets.verify(m[1] as string, this.ctx.now()), rest: m[2] };
    } catch (err) {
      if (err instanceof TicketError) throw new RtspStatusError(401, err.message);
      throw err;
    }
  }

  private verifyFor(uri: string): Verified {
    const verified = this.verify(uri);
    if (verified.claims.recorder && !this.fromTrusted)
      throw new RtspStatusError(401, 'a recorder ticket from another host');
    return verified;
  }

  /** The session a request names; 454 when it names one that is not (or not this viewer's). */
  private sessionOf(req: RtspRequest): RelaySession | null {
    const header = req.headers.get('session');
    if (header === undefined) return null;
    const found = this.ctx.sessions.find(header.split(';')[0]?.trim() ?? '', this.address);
    if (!found) throw new RtspStatusError(454, 'session not found');
    return found;
  }
}
