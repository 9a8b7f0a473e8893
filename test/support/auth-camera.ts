import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import {
  formatChallenge,
  formatInterleaved,
  formatResponse,
  formatRtpInfo,
  formatSession,
  formatTransportSpec,
  parseAuthorization,
  parseSession,
  parseTransport,
  reasonPhrase,
  RtspHeaders,
  RtspStreamReader,
  verifyDigest,
  type Authorization,
  type Challenge,
  type DigestAlgorithm,
  type RtspRequest,
} from '../../src/media/rtsp/index.js';
import { RtspParseError } from '../../src/media/rtsp/errors.js';
import { readRtpHeader } from '../../src/media/rtp.js';
import { senderReport } from './rtcp.js';

// A camera for the relay's client to log in to: real RTSP over a real TCP socket, built from the
// project's own protocol functions, with the authentication schemes cameras use (Basic, Digest
// MD5, Digest SHA-256, several offered at once). gst-rtsp-server, the other test camera, only
// offers Digest MD5. It keeps what a test needs to tell how the client logged in: the raw bytes
// it received, each accepted Authorization's scheme and algorithm, and its connection count.

export type AuthScheme = 'basic' | 'digest-md5' | 'digest-sha256';

export interface AuthCameraOptions {
  /** RTP packets of one H.264 stream (e.g. from captureRtp), sent in a loop after PLAY. */
  packets: readonly Buffer[];
  username: string;
  password: string;
  /** Challenges in the order they are sent; empty for a camera without authentication. */
  schemes: readonly AuthScheme[];
  /** Put every challenge in one WWW-Authenticate header, comma-separated, as some cameras do. */
  oneHeader?: boolean;
  /** Offer qop=auth in Digest challenges (default true); false is the RFC 2069 form. */
  qop?: boolean;
  realm?: string;
  /** Path of the stream; the URL is rtsp://127.0.0.1:<port><path>. */
  path?: string;
  /** Channels SETUP answers with instead of those the client asked for. */
  interleaved?: [number, number];
  /** Seconds, in the SETUP answer's Session header. */
  sessionTimeout?: number;
  packetIntervalMs?: number;
  /**
   * The first DESCRIBEs of the stream, each `busy` (answered 503) or `drop` (the connection closed
   * unanswered), before the camera answers with the SDP.
   */
  failedDescribes?: ReadonlyArray<'busy' | 'drop'>;
}

export interface AcceptedAuth {
  connection: number;
  method: string;
  scheme: 'Basic' | 'Digest';
  /** Null for Basic. */
  algorithm: DigestAlgorithm | null;
  /** Null for Basic and for RFC 2069 style Digest. */
  qop: string | null;
}

export interface SeenRequest {
  connection: number;
  method: string;
  uri: string;
  headers: RtspHeaders;
  /** 0: the connection was closed instead of an answer. */
  status: number;
}

type Verified = Omit<AcceptedAuth, 'connection' | 'method'>;

interface Connection {
  id: number;
  socket: Socket;
  session: string | null;
  channels: [number, number] | null;
  streamer: NodeJS.Timeout | null;
}

const DIGEST_ALGORITHM: Readonly<Record<Exclude<AuthScheme, 'basic'>, DigestAlgorithm>> = {
  'digest-md5': 'MD5',
  'digest-sha256': 'SHA-256',
};

/** SPS and PPS (NAL types 7 and 8) as sent, alone or in a STAP-A, base64 for sprop-parameter-sets. */
function parameterSets(packets: readonly Buffer[]): string | null {
  const found: { sps?: Buffer; pps?: Buffer } = {};
  const take = (nal: Buffer): void => {
    const type = (nal[0] ?? 0) & 0x1f;
    if (type === 7) found.sps ??= nal;
    else if (type === 8) found.pps ??= nal;
  };
  for (const packet of packets) {
    const h = readRtpHeader(packet);
    if (h === null || h.payloadLength === 0) continue;
    const payload = packet.subarray(h.payloadOffset, h.payloadOffset + h.payloadLength);
    if (((payload[0] ?? 0) & 0x1f) === 24) {
      for (let i = 1; i + 2 <= payload.length;) {
        const size = payload.readUInt16BE(i);
        take(payload.subarray(i + 2, i + 2 + size));
        i += 2 + size;
      }
    } else {
      take(payload);
    }
    if (found.sps !== undefined && found.pps !== undefined)
      return `${found.sps.toString('base64')},${found.pps.toString('base64')}`;
  }
  return null;
}

export class AuthCamera {
  readonly url: string;
  /** TCP connections accepted so far. */
  connections = 0;
  readonly accepted: AcceptedAuth[] = [];
  readonly requests: SeenRequest[] = [];
  /** RTP packets written to clients, over all connections. */
  packetsSent = 0;
  readonly #chunks: Buffer[] = [];
  readonly #live = new Set<Connection>();
  /** Nonces this camera issued and still accepts → the highest nonce count seen (0: none yet). */
  readonly #nonces = new Map<string, number>();
  readonly #realm: string;
  readonly #path: string;
  readonly #sdp: Buffer;
  readonly #ssrc: number;
  readonly #failedDescribes: Array<'busy' | 'drop'>;

  private constructor(
    private readonly server: Server,
    private readonly opts: AuthCameraOptions,
  ) {
    this.#realm = opts.realm ?? 'auth-camera';
    this.#path = opts.path ?? '/cam/main';
    this.#failedDescribes = [...(opts.failedDescribes ?? [])];
    this.url = `rtsp://127.0.0.1:${(server.address() as AddressInfo).port}${this.#path}`;
    const first = opts.packets[0];
    const h = first === undefined ? null : readRtpHeader(first);
    if (h === null) throw new TypeError('the camera needs RTP packets to send');
    this.#ssrc = h.ssrc;
    const sprop = parameterSets(opts.packets);
    const fmtp = sprop === null ? 'packetization-mode=1' : `packetization-mode=1;sprop-parameter-sets=${sprop}`;
    this.#sdp = Buffer.from(
      [
        'v=0',
        `o=- ${randomBytes(4).readUInt32BE(0)} 1 IN IP4 127.0.0.1`,
        's=auth-camera',
        'c=IN IP4 0.0.0.0',
        't=0 0',
        'a=control:*',
        `m=video 0 RTP/AVP ${h.payloadType}`,
        `a=rtpmap:${h.payloadType} H264/90000`,
        `a=fmtp:${h.payloadType} ${fmtp}`,
        'a=control:trackID=0',
        '',
      ].join('\r\n'),
    );
  }

  static async start(opts: AuthCameraOptions): Promise<AuthCamera> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const camera = new AuthCamera(server, opts);
    server.on('connection', (socket) => camera.accept(socket));
    return camera;
  }

  /** Every byte clients sent, in arrival order (connections' bytes are not interleaved with each other's mid-chunk). */
  received(): Buffer {
    return Buffer.concat(this.#chunks);
  }

  /** Forgets every issued nonce, as cameras do when a nonce's lifetime ends: the next use is stale. */
  expireNonces(): void {
    this.#nonces.clear();
  }

  /** Ends every connection mid-stream: `end` with a FIN, `reset` with an RST. */
  drop(how: 'end' | 'reset'): void {
    for (const conn of this.#live) {
      this.stopStreaming(conn);
      if (how === 'end') conn.socket.end();
      else conn.socket.resetAndDestroy();
    }
  }

  async close(): Promise<void> {
    for (const conn of this.#live) {
      this.stopStreaming(conn);
      conn.socket.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const conn: Connection = { id: ++this.connections, socket, session: null, channels: null, streamer: null };
    this.#live.add(conn);
    const reader = new RtspStreamReader();
    socket.on('data', (chunk: Buffer) => {
      this.#chunks.push(chunk);
      reader.push(chunk);
      try {
        for (let item = reader.next(); item; item = reader.next()) {
          if (item.kind === 'request') this.handle(conn, item.msg);
          // Interleaved frames from the client (receiver reports) need no answer.
        }
      } catch (err) {
        if (!(err instanceof RtspParseError)) throw err;
        this.reply(conn, err.status, new RtspHeaders());
        socket.end();
      }
    });
    // The client may go away while this camera still writes; that is the client's right.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.stopStreaming(conn);
      this.#live.delete(conn);
    });
  }

  private reply(conn: Connection, status: number, headers: RtspHeaders, body: Buffer = Buffer.alloc(0)): void {
    if (!conn.socket.writable) return;
    conn.socket.write(formatResponse({ status, reason: reasonPhrase(status), headers, body }));
  }

  private challenges(stale: boolean): string[] {
    const out: string[] = [];
    for (const scheme of this.opts.schemes) {
      if (scheme === 'basic') {
        out.push(formatChallenge({ scheme: 'Basic', realm: this.#realm }));
        continue;
      }
      const nonce = randomBytes(16).toString('hex');
      this.#nonces.set(nonce, 0);
      const ch: Challenge = {
        scheme: 'Digest',
        realm: this.#realm,
        nonce,
        algorithm: DIGEST_ALGORITHM[scheme],
        qop: this.opts.qop === false ? [] : ['auth'],
      };
      if (stale) ch.stale = true;
      out.push(formatChallenge(ch));
    }
    return this.opts.oneHeader === true ? [out.join(', ')] : out;
  }

  /** The accepted credentials, or why not: `challenge` and `stale` (401) or `malformed` (400). */
  private authenticate(req: RtspRequest): Verified | { failed: 'challenge' | 'stale' | 'malformed' } {
    const header = req.headers.get('authorization');
    if (header === undefined) return { failed: 'challenge' };
    let creds: Authorization;
    try {
      creds = parseAuthorization(header);
    } catch (err) {
      if (!(err instanceof RtspParseError)) throw err;
      return { failed: err.status === 401 ? 'challenge' : 'malformed' };
    }
    if (creds.scheme === 'Basic') {
      if (!this.opts.schemes.includes('basic')) return { failed: 'challenge' };
      if (creds.username !== this.opts.username || creds.password !== this.opts.password)
        return { failed: 'challenge' };
      return { scheme: 'Basic', algorithm: null, qop: null };
    }
    // Only what was offered: a client must not get in with an algorithm the camera never named.
    const algorithms = this.opts.schemes.filter((s) => s !== 'basic').map((s) => DIGEST_ALGORITHM[s]);
    if (algorithms.length === 0) return { failed: 'challenge' };
    const result = verifyDigest(header, {
      method: req.method,
      uri: req.uri,
      realm: this.#realm,
      algorithms,
      requireQop: this.opts.qop !== false,
      password: (u) => (u === this.opts.username ? this.opts.password : undefined),
      checkNonce: (nonce, nc) => {
        const last = this.#nonces.get(nonce);
        if (last === undefined) return false;
        if (nc === null) return true; // RFC 2069 style: nothing to count
        if (nc <= last) return false; // a replayed count
        this.#nonces.set(nonce, nc);
        return true;
      },
    });
    if (result.ok) return { scheme: 'Digest', algorithm: result.algorithm, qop: creds.qop ?? null };
    if (result.reason === 'malformed') return { failed: 'malformed' };
    return { failed: result.reason === 'stale' ? 'stale' : 'challenge' };
  }

  private handle(conn: Connection, req: RtspRequest): void {
    const headers = new RtspHeaders();
    const cseq = req.headers.get('cseq');
    if (cseq !== undefined) headers.set('CSeq', cseq);
    headers.set('Server', 'auth-camera');
    const seen = (status: number): void =>
      void this.requests.push({ connection: conn.id, method: req.method, uri: req.uri, headers: req.headers, status });
    const answer = (status: number, body?: Buffer): void => {
      seen(status);
      this.reply(conn, status, headers, body);
    };

    if (this.opts.schemes.length > 0) {
      const auth = this.authenticate(req);
      if ('failed' in auth) {
        if (auth.failed === 'malformed') return answer(400);
        for (const value of this.challenges(auth.failed === 'stale')) headers.append('WWW-Authenticate', value);
        return answer(401);
      }
      this.accepted.push({ connection: conn.id, method: req.method, ...auth });
    }

    const base = this.url;
    // Judged by the path, as cameras do: a client that reached it by another name (through a TLS
    // front, a NAT) names another scheme, host or port.
    const path = req.uri.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/, '');
    const isBase = path === this.#path || path === `${this.#path}/`;
    switch (req.method) {
      case 'OPTIONS':
        headers.set('Public', 'OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN');
        return answer(200);
      case 'DESCRIBE':
        if (!isBase) return answer(404);
        switch (this.#failedDescribes.shift()) {
          case 'busy':
            return answer(503);
          case 'drop':
            seen(0);
            conn.socket.destroy();
            return;
        }
        headers.set('Content-Base', `${base}/`);
        headers.set('Content-Type', 'application/sdp');
        return answer(200, this.#sdp);
      case 'SETUP': {
        if (path !== `${this.#path}/trackID=0`) return answer(404);
        if (!this.sessionMatches(conn, req, true)) return answer(454);
        let asked: [number, number] | undefined;
        try {
          asked = parseTransport(req.headers.get('transport') ?? '').find(
            (t) => t.lowerTransport === 'TCP',
          )?.interleaved;
        } catch (err) {
          if (!(err instanceof RtspParseError)) throw err;
          return answer(err.status === 461 ? 461 : 400);
        }
        if (asked === undefined) return answer(461); // UDP is not what this camera is for
        conn.channels = this.opts.interleaved ?? asked;
        conn.session ??= randomBytes(8).toString('hex');
        headers.set(
          'Transport',
          formatTransportSpec({
            protocol: 'RTP/AVP/TCP',
            lowerTransport: 'TCP',
            delivery: 'unicast',
            interleaved: conn.channels,
          }),
        );
        headers.set('Session', formatSession({ id: conn.session, timeout: this.opts.sessionTimeout ?? 60 }));
        return answer(200);
      }
      case 'PLAY': {
        if (!isBase) return answer(404);
        if (conn.session === null || conn.channels === null) return answer(455);
        if (!this.sessionMatches(conn, req, false)) return answer(454);
        const first = readRtpHeader(this.opts.packets[0] as Buffer);
        headers.set('Session', conn.session);
        headers.set('Range', 'npt=0.000-');
        headers.set(
          'RTP-Info',
          formatRtpInfo([{ url: `${base}/trackID=0`, seq: first?.sequence ?? 0, rtptime: first?.timestamp ?? 0 }]),
        );
        answer(200);
        this.startStreaming(conn, conn.channels);
        return;
      }
      case 'TEARDOWN':
        if (!this.sessionMatches(conn, req, false)) return answer(454);
        this.stopStreaming(conn);
        conn.session = null;
        conn.channels = null;
        return answer(200);
      default:
        return answer(501);
    }
  }

  /** Whether the request's Session names this connection's; `optional` when none is set up yet. */
  private sessionMatches(conn: Connection, req: RtspRequest, optional: boolean): boolean {
    const value = req.headers.get('session');
    if (value === undefined) return optional && conn.session === null;
    try {
      return parseSession(value).id === conn.session;
    } catch (err) {
      if (!(err instanceof RtspParseError)) throw err;
      return false;
    }
  }

  private startStreaming(conn: Connection, [rtp, rtcp]: [number, number]): void {
    this.stopStreaming(conn);
    const packets = this.opts.packets;
    const firstSeq = readRtpHeader(packets[0] as Buffer)?.sequence ?? 0;
    let n = 0;
    conn.streamer = setInterval(() => {
      if (!conn.socket.writable) return;
      const i = n % packets.length;
      const packet = Buffer.from(packets[i] as Buffer);
      // Sequence numbers keep counting across loops, so the stream looks like one long one.
      packet.writeUInt16BE((firstSeq + n) & 0xffff, 2);
      if (i === 0)
        conn.socket.write(formatInterleaved(rtcp, senderReport({ ssrc: this.#ssrc, rtpTime: packet.readUInt32BE(4) })));
      conn.socket.write(formatInterleaved(rtp, packet));
      this.packetsSent++;
      n++;
    }, this.opts.packetIntervalMs ?? 10);
  }

  private stopStreaming(conn: Connection): void {
    if (conn.streamer !== null) clearInterval(conn.streamer);
    conn.streamer = null;
  }
}
