import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { RTSP_DEFAULT_PORTS, rtspUrlForDisplay } from '../../domain/rtsp-url.js';
import type { BaseLogger } from 'pino';
import {
  answerChallenge,
  chooseChallenge,
  formatRequest,
  parseChallenges,
  parseRtpInfo,
  parseSession,
  parseTransport,
  RtspHeaders,
  RtspStreamReader,
  type Challenge,
  type RtspResponse,
} from '../rtsp/index.js';
import { mediaCodecs, parseSdp, resolveControl, type MediaCodec, type SdpSession } from '../sdp.js';
import { UpstreamError } from './errors.js';

// The relay's client side: one RTSP session to a camera, RTP over the RTSP TCP connection
// (interleaved), Basic or Digest authentication, keep-alive, and a stall watchdog. Packets are
// handed to onPacket as views into the received chunk (a copy where a packet spans two): each socket
// read is memory of its own that nothing writes again, so the receiver may keep them as they are.

export interface UpstreamTrack {
  index: number;
  codec: MediaCodec;
  /** Absolute control URL (without credentials). */
  control: string;
  /** Interleaved channel of its RTP; RTCP is channel + 1. */
  channel: number;
}

export interface UpstreamOptions {
  /** rtsp://host[:port]/path, or rtsps:// (TLS); credentials in the URL are ignored (give them below). */
  url: string;
  username: string | null;
  password: string | null;
  logger: BaseLogger;
  /** Per request, and the longest silence before the session counts as stalled. */
  timeoutMs?: number;
  onPacket: (track: number, packet: Buffer) => void;
  /** RTCP from the camera (sender reports, for viewers' A/V sync); a view like onPacket's. */
  onRtcp?: (track: number, packet: Buffer) => void;
  onClose: (err: UpstreamError) => void;
}

const USER_AGENT = 'edge-gateway-relay';

export class UpstreamSession {
  private cseq = 0;
  private readonly pending = new Map<
    number,
    { resolve: (r: RtspResponse) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private challenge: Challenge | null = null;
  private session: string | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private lastDataAt = Date.now();
  private closed = false;
  private readonly channels = new Map<number, number>(); // RTP channel → track index
  private readonly rtcpChannels = new Map<number, number>(); // RTCP channel → track index
  sdp: SdpSession | null = null;
  /** The session's URL (RFC 2326: PLAY and TEARDOWN of an aggregate go there). */
  private aggregateUrl = '';
  tracks: UpstreamTrack[] = [];
  /** Each track's RTP time at the start of play, from the RTP-Info of the PLAY answer (see rtp-clock.ts). */
  playRtpTimes: Array<number | undefined> = [];

  private constructor(
    private readonly socket: Socket,
    private readonly opts: UpstreamOptions,
    private readonly url: URL,
  ) {}

  /** Connects, DESCRIBEs, SETUPs every track over TCP and PLAYs. */
  static async open(opts: UpstreamOptions): Promise<UpstreamSession> {
    const up = new UpstreamSession(await dial(opts), opts, withoutCredentials(opts.url));
    up.attach();
    await up.run(() => up.handshake());
    return up;
  }

  /**
   * What the camera says of the stream (OPTIONS and DESCRIBE, as open() begins), then the
   * connection is closed: no session is set up at the camera. Throws the UpstreamError open() would.
   */
  static async describe(
    opts: Pick<UpstreamOptions, 'url' | 'username' | 'password' | 'logger' | 'timeoutMs'>,
  ): Promise<SdpSession> {
    const full: UpstreamOptions = { ...opts, onPacket: () => undefined, onClose: () => undefined };
    const up = new UpstreamSession(await dial(full), full, withoutCredentials(opts.url));
    up.attach();
    const sdp = await up.run(async () => {
      await up.request('OPTIONS', up.url.href);
      const described = await up.request('DESCRIBE', up.url.href, { Accept: 'application/sdp' });
      return parseSdp(described.body);
    });
    up.close();
    return sdp;
  }

  /** A step of the handshake; a failure closes the session and is thrown as one error with its kind. */
  private async run<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      // One error, with a kind, for both the close report and the caller (a malformed SDP or
      // header is the camera's protocol fault).
      const failure =
        err instanceof UpstreamError
          ? err
          : new UpstreamError(err instanceof Error ? err.message : String(err), 'protocol');
      this.close(failure);
      throw failure;
    }
  }

  private get timeoutMs(): number {
    return this.opts.timeoutMs ?? 10_000;
  }

  private attach(): void {
    const reader = new RtspStreamReader();
    this.socket.on('data', (chunk: Buffer) => {
      this.lastDataAt = Date.now();
      try {
        reader.push(chunk);
        for (let item = reader.next(); item; item = reader.next()) {
          if (item.kind === 'interleaved') {
            const track = this.channels.get(item.channel);
            if (track !== undefined) this.opts.onPacket(track, item.payload);
            else {
              const rtcpTrack = this.rtcpChannels.get(item.channel);
              if (rtcpTrack !== undefined) this.opts.onRtcp?.(rtcpTrack, item.payload);
            }
          } else if (item.kind === 'response') {
            const cseq = Number(item.msg.headers.get('cseq'));
            this.opts.logger.debug({ camera: this.url.host, cseq, status: item.msg.status }, 'camera RTSP response');
            const waiter = this.pending.get(cseq);
            if (waiter) {
              this.pending.delete(cseq);
              clearTimeout(waiter.timer);
              waiter.resolve(item.msg);
            }
          }
          // Requests from the camera (rare: ANNOUNCE, GET_PARAMETER) need no answer for a live pull.
        }
      } catch (err) {
        this.close(new UpstreamError(`camera sent malformed RTSP: ${(err as Error).message}`, 'protocol'));
      }
    });
    this.socket.on('error', (err) =>
      this.close(new UpstreamError(`camera connection failed: ${err.message}`, 'closed')),
    );
    this.socket.on('close', () => this.close(new UpstreamError('camera closed the connection', 'closed')));
  }

  private send(method: string, uri: string, extra: Record<string, string> = {}): Promise<RtspResponse> {
    if (this.closed) return Promise.reject(new UpstreamError('session closed', 'closed'));
    const cseq = ++this.cseq;
    const headers = new RtspHeaders({ CSeq: String(cseq), 'User-Agent': USER_AGENT, ...extra });
    if (this.session) headers.set('Session', this.session);
    if (this.challenge && this.opts.username !== null) {
      headers.set(
        'Authorization',
        answerChallenge(this.challenge, {
          username: this.opts.username,
          password: this.opts.password ?? '',
          method,
          uri,
          nc: cseq,
        }),
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(cseq);
        reject(new UpstreamError(`${method} got no answer within ${this.timeoutMs} ms`, 'stalled'));
      }, this.timeoutMs);
      this.pending.set(cseq, { resolve, reject, timer });
      this.opts.logger.debug(
        { camera: this.url.host, method, uri: rtspUrlForDisplay(uri), cseq },
        'camera RTSP request',
      );
      this.socket.write(formatRequest({ method, uri, version: 'RTSP/1.0', headers, body: Buffer.alloc(0) }));
    });
  }

  /** Sends a request, answering one authentication challenge when the camera asks for it. */
  private async request(method: string, uri: string, extra: Record<string, string> = {}): Promise<RtspResponse> {
    let res = await this.send(method, uri, extra);
    if (res.status === 401 && this.opts.username !== null) {
      const challenge = chooseChallenge(parseChallenges(res.headers.getAll('www-authenticate')));
      if (!challenge)
        throw new UpstreamError(
          `${method}: the camera asks for an authentication scheme we do not speak`,
          'unauthorized',
        );
      this.challenge = challenge;
      res = await this.send(method, uri, extra);
    }
    if (res.status === 401) throw new UpstreamError(`${method}: the camera refused the credentials`, 'unauthorized');
    if (res.status !== 200)
      throw new UpstreamError(
        `${method}: the camera answered ${res.status} ${res.reason}`,
        res.status === 503 ? 'busy' : 'refused',
      );
    return res;
  }

  private async handshake(): Promise<void> {
    const base = this.url.href;
    await this.request('OPTIONS', base);
    const described = await this.request('DESCRIBE', base, { Accept: 'application/sdp' });
    const sdp = parseSdp(described.body);
    const contentBase = described.headers.get('content-base') ?? described.headers.get('content-location') ?? base;
    const codecs = mediaCodecs(sdp);
    this.tracks = sdp.media.map((m, index) => ({
      index,
      codec: codecs.find((c) => c.index === index) as MediaCodec,
      control: resolveControl(contentBase, m.control),
      channel: index * 2,
    }));
    for (const track of this.tracks) {
      const res = await this.request('SETUP', track.control, {
        Transport: `RTP/AVP/TCP;unicast;interleaved=${track.channel}-${track.channel + 1}`,
      });
      const session = res.headers.get('session');
      if (!session) throw new UpstreamError('SETUP answer without a Session', 'protocol');
      const parsed = parseSession(session);
      this.session = parsed.id;
      // A camera may pick other channels than asked for; its answer is what it will send on.
      const chosen = parseTransport(res.headers.get('transport') ?? '').find((t) => t.interleaved)?.interleaved;
      if (chosen) track.channel = chosen[0];
      this.channels.set(track.channel, track.index);
      this.rtcpChannels.set(chosen?.[1] ?? track.channel + 1, track.index);
      if (track.index === 0) this.startKeepAlive((parsed.timeout ?? 60) * 1000);
    }
    this.sdp = sdp;
    this.aggregateUrl = resolveControl(contentBase, sdp.control);
    const played = await this.request('PLAY', this.aggregateUrl, { Range: 'npt=0.000-' });
    this.playRtpTimes = playRtpTimes(played.headers.get('rtp-info'), this.tracks);
    this.lastDataAt = Date.now();
    this.watchdog = setInterval(
      () => {
        if (Date.now() - this.lastDataAt > this.timeoutMs)
          this.close(new UpstreamError(`no data from the camera for ${this.timeoutMs} ms`, 'stalled'));
      },
      Math.min(1000, this.timeoutMs),
    );
    this.watchdog.unref();
  }

  private startKeepAlive(sessionTimeoutMs: number): void {
    // Half the session timeout, as clients commonly do; OPTIONS is understood by every camera.
    this.keepAlive = setInterval(
      () => {
        // request(), not send(): a camera that ended the nonce's life answers 401 stale=TRUE, and
        // the new challenge must be taken up or every later request is refused.
        this.request('OPTIONS', this.url.href).catch((err: unknown) => {
          if (err instanceof UpstreamError && err.kind === 'unauthorized') this.close(err);
        });
      },
      Math.max(1000, sessionTimeoutMs / 2),
    );
    this.keepAlive.unref();
  }

  /**
   * Asks the camera for a keyframe: an RTCP PLI (RFC 4585 6.3.1) on the track's RTCP channel. Many
   * cameras ignore it (their GOP is fixed); false when the session cannot send one.
   */
  requestKeyframe(track: number, mediaSsrc: number): boolean {
    const upstreamTrack = this.tracks[track];
    if (this.closed || this.socket.destroyed || !upstreamTrack) return false;
    const channel = [...this.rtcpChannels].find(([, index]) => index === track)?.[0];
    if (channel === undefined) return false;
    const frame = Buffer.alloc(4 + 12);
    frame[0] = 0x24; // '$': interleaved data (RFC 2326 10.12)
    frame[1] = channel;
    frame.writeUInt16BE(12, 2);
    frame[4] = 0x81; // V=2, FMT=1 (PLI)
    frame[5] = 206; // payload-specific feedback
    frame.writeUInt16BE(2, 6);
    frame.writeUInt32BE(1, 8); // our sender SSRC: we send no RTP to the camera
    frame.writeUInt32BE(mediaSsrc >>> 0, 12);
    this.socket.write(frame);
    return true;
  }

  /** Ends the session (TEARDOWN, best effort) and reports why through onClose, once. */
  close(reason: UpstreamError = new UpstreamError('closed by the relay', 'closed')): void {
    if (this.closed) return;
    if (this.session && !this.socket.destroyed) {
      const headers = new RtspHeaders({ CSeq: String(++this.cseq), 'User-Agent': USER_AGENT, Session: this.session });
      if (this.challenge && this.opts.username !== null) {
        headers.set(
          'Authorization',
          answerChallenge(this.challenge, {
            username: this.opts.username,
            password: this.opts.password ?? '',
            method: 'TEARDOWN',
            uri: this.aggregateUrl || this.url.href,
            nc: this.cseq,
          }),
        );
      }
      this.socket.write(
        formatRequest({
          method: 'TEARDOWN',
          uri: this.aggregateUrl || this.url.href,
          version: 'RTSP/1.0',
          headers,
          body: Buffer.alloc(0),
        }),
      );
    }
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    if (this.watchdog) clearInterval(this.watchdog);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(reason);
    }
    this.pending.clear();
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.opts.onClose(reason);
  }
}

/** The URL requests name: credentials never go in one (they are answered to a challenge). */
function withoutCredentials(text: string): URL {
  const url = new URL(text);
  url.username = '';
  url.password = '';
  return url;
}

/**
 * The connection to the camera: TCP, or TLS for rtsps://. A camera's certificate is self-signed,
 * so it is not verified: TLS keeps the stream and the login from being read on the wire, while
 * the camera is known by the address its owner gave (as for rtsp://).
 */
function dial(opts: Pick<UpstreamOptions, 'url' | 'timeoutMs'>): Promise<Socket> {
  const url = withoutCredentials(opts.url);
  const secure = url.protocol === 'rtsps:';
  // RTSP is not a scheme the URL parser knows: an IPv6 host keeps its brackets.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port || (secure ? RTSP_DEFAULT_PORTS['rtsps:'] : RTSP_DEFAULT_PORTS['rtsp:']));
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise<Socket>((resolve, reject) => {
    const s: Socket = secure
      ? tlsConnect({ host, port, rejectUnauthorized: false })
      : connect({ host, port, noDelay: true });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new UpstreamError(`no connection to ${url.host} within ${timeoutMs} ms`, 'unreachable'));
    }, timeoutMs);
    s.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      s.setNoDelay(true);
      resolve(s);
    });
    s.once('error', (err: Error) => {
      clearTimeout(timer);
      reject(new UpstreamError(`cannot connect to ${url.host}: ${err.message}`, 'unreachable'));
    });
  });
}

/**
 * A URL's path and query, without a trailing slash: cameras name their tracks in RTP-Info with another host or port
 * than the one dialled.
 */
function pathOf(url: string): string {
  return url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, '').replace(/\/+$/, '');
}

/**
 * Each track's rtptime from the RTP-Info of a camera's PLAY answer (undefined where it names none).
 * A malformed header gives none at all: the relay then works without it, as if it were missing.
 */
export function playRtpTimes(
  header: string | undefined,
  tracks: ReadonlyArray<{ control: string }>,
): Array<number | undefined> {
  const times: Array<number | undefined> = tracks.map(() => undefined);
  if (header === undefined) return times;
  let entries;
  try {
    entries = parseRtpInfo(header);
  } catch {
    return times;
  }
  for (const entry of entries) {
    if (entry.rtptime === undefined) continue;
    const at = tracks.findIndex((t) => pathOf(t.control) === pathOf(entry.url) || t.control === entry.url);
    if (at >= 0) times[at] = entry.rtptime;
  }
  return times;
}
