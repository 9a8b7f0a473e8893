import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { StreamProfile } from '../../domain/types.js';
import { TooManySessionsError } from './errors.js';
import type { FanOutReader } from './fanout.js';
import type { StreamHandle } from './streams.js';
import type { RelayUdp } from './udp.js';

// RTSP sessions of the relay's viewers, apart from their connections: a session with RTP over UDP
// outlives the RTSP connection that set it up (RFC 2326 §3.7) and ends on TEARDOWN, after
// `timeoutS` without a request or an RTCP receiver report from its viewer, or at `maxSessionS`.
// A session with RTP on the connection (interleaved) ends with its connection.

export type TrackOutput = { kind: 'tcp'; channel: number } | { kind: 'udp'; rtpPort: number; rtcpPort: number };

export interface RelaySession {
  readonly id: string;
  readonly deviceId: string;
  readonly profile: StreamProfile;
  /** The viewer's address: UDP goes there and nowhere else; other addresses cannot use the id. */
  readonly address: string;
  readonly transport: 'tcp' | 'udp';
  readonly handle: StreamHandle;
  /** A session of this box's own readers (recorder ticket): not cut at maxSessionS. */
  readonly unlimited: boolean;
  readonly tracks: Map<number, TrackOutput>;
  /** The connection that set it up; null once that closed (UDP sessions only). */
  connection: Socket | null;
  readonly startedAt: number;
  lastSeen: number;
  detach: (() => void) | null;
}

export interface RelaySessionsOptions {
  timeoutS: number;
  maxSessionS: number;
  maxPerAddress: number;
  now: () => number;
  /** How often timeouts are checked; short in tests. */
  sweepMs?: number;
}

export class RelaySessions {
  private readonly byId = new Map<string, RelaySession>();
  private readonly byAddress = new Map<string, Set<RelaySession>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: RelaySessionsOptions) {
    this.sweeper = setInterval(() => this.sweep(), opts.sweepMs ?? 2000);
    this.sweeper.unref();
  }

  get size(): number {
    return this.byId.size;
  }

  /** Counts by transport, for /metrics. */
  counts(): { tcp: number; udp: number; playing: number } {
    let tcp = 0;
    let playing = 0;
    for (const s of this.byId.values()) {
      if (s.transport === 'tcp') tcp++;
      if (s.detach) playing++;
    }
    return { tcp, udp: this.byId.size - tcp, playing };
  }

  /** Sessions playing the device's streams for viewers on the LAN (not this box's own readers). */
  viewersOf(deviceId: string): number {
    let n = 0;
    for (const s of this.byId.values()) if (s.deviceId === deviceId && s.detach && !s.unlimited) n++;
    return n;
  }

  /** `limited`: false for the box's own addresses (its own readers, a session per camera each). */
  create(
    init: Omit<RelaySession, 'id' | 'startedAt' | 'lastSeen' | 'detach' | 'tracks'>,
    limited = true,
  ): RelaySession {
    const mine = this.byAddress.get(init.address);
    if (limited && mine && mine.size >= this.opts.maxPerAddress)
      throw new TooManySessionsError(`more than ${this.opts.maxPerAddress} sessions from ${init.address}`);
    const now = this.opts.now();
    const session: RelaySession = {
      ...init,
      id: randomBytes(8).toString('hex'),
      tracks: new Map(),
      startedAt: now,
      lastSeen: now,
      detach: null,
    };
    this.byId.set(session.id, session);
    if (mine) mine.add(session);
    else this.byAddress.set(init.address, new Set([session]));
    return session;
  }

  /** The session with this id, if it belongs to this address (and is touched: it is alive). */
  find(id: string, address: string): RelaySession | null {
    const session = this.byId.get(id);
    if (!session || session.address !== address) return null;
    session.lastSeen = this.opts.now();
    return session;
  }

  /** An RTCP packet from this address keeps its UDP sessions alive. */
  touchUdp(address: string): void {
    const mine = this.byAddress.get(address);
    if (!mine) return;
    const now = this.opts.now();
    for (const s of mine) if (s.transport === 'udp') s.lastSeen = now;
  }

  end(session: RelaySession): void {
    if (this.byId.get(session.id) !== session) return;
    this.byId.delete(session.id);
    const mine = this.byAddress.get(session.address);
    mine?.delete(session);
    if (mine?.size === 0) this.byAddress.delete(session.address);
    session.detach?.();
    session.detach = null;
  }

  /** The connection closed: its interleaved sessions end, its UDP sessions go on by themselves. */
  connectionClosed(connection: Socket): void {
    for (const s of [...this.byId.values()]) {
      if (s.connection !== connection) continue;
      if (s.transport === 'tcp') this.end(s);
      else s.connection = null;
    }
  }

  private sweep(): void {
    const now = this.opts.now();
    for (const s of [...this.byId.values()]) {
      const timedOut = s.transport === 'udp' && now - s.lastSeen > this.opts.timeoutS * 1000;
      const tooLong = !s.unlimited && now - s.startedAt > this.opts.maxSessionS * 1000;
      if (!timedOut && !tooLong) continue;
      this.end(s);
      // Over max_session_s the viewer is told by its connection closing (interleaved data would
      // otherwise just stop, and a player would wait for its own timeout).
      if (tooLong) s.connection?.destroy();
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const s of [...this.byId.values()]) this.end(s);
  }
}

/**
 * A session as a fan-out reader: RTP and the camera's sender reports framed on the RTSP connection
 * (backpressure from that socket) or sent over UDP to the viewer's ports.
 */
export function sessionReader(session: RelaySession, udp: RelayUdp, udpAddress: string, end: () => void): FanOutReader {
  if (session.transport === 'udp') {
    return {
      pendingBytes: () => udp.queuedBytes(),
      deliver: (track, packet) => {
        const out = session.tracks.get(track);
        if (out?.kind === 'udp') udp.sendRtp(packet, out.rtpPort, udpAddress);
      },
      deliverRtcp: (track, report) => {
        const out = session.tracks.get(track);
        if (out?.kind === 'udp') udp.sendRtcp(report, out.rtcpPort, udpAddress);
      },
      // Behind means the shared UDP sockets are (the kernel drops per viewer, unseen): rare, and
      // then every UDP viewer is; or the stream ended for all readers.
      evict: end,
    };
  }
  const socket = session.connection as Socket;
  const frames = new InterleavedBatch(socket);
  return {
    pendingBytes: () => socket.writableLength + frames.bytes,
    deliver: (track, packet) => {
      const out = session.tracks.get(track);
      if (out?.kind === 'tcp' && !socket.destroyed) frames.add(out.channel, packet);
    },
    deliverRtcp: (track, report) => {
      const out = session.tracks.get(track);
      if (out?.kind === 'tcp' && !socket.destroyed) frames.add(out.channel + 1, report);
    },
    evict: () => socket.destroy(),
  };
}

/**
 * Interleaved frames (RFC 2326 §10.12: `$`, channel, length, packet) gathered while the packets of
 * one camera read are handed out, and written together once that read is done (next tick). A
 * camera sends a picture as one burst of a few dozen packets: one system call (and one wake-up of
 * the reader) per picture instead of one per packet. The packets are
 * written as they are (the socket gathers them, corked); only their 4-byte headers are new, all in
 * one small buffer per batch.
 */
export class InterleavedBatch {
  private packets: Buffer[] = [];
  private channels: number[] = [];
  /** Bytes gathered and not yet written, headers included. */
  bytes = 0;

  constructor(private readonly socket: Pick<Socket, 'cork' | 'uncork' | 'write' | 'destroyed'>) {}

  add(channel: number, packet: Buffer): void {
    if (this.packets.length === 0) process.nextTick(() => this.flush());
    this.packets.push(packet);
    this.channels.push(channel);
    this.bytes += 4 + packet.length;
  }

  private flush(): void {
    const { packets, channels, socket } = this;
    this.packets = [];
    this.channels = [];
    this.bytes = 0;
    if (socket.destroyed) return;
    const headers = Buffer.allocUnsafe(4 * packets.length);
    socket.cork();
    for (const [i, packet] of packets.entries()) {
      const at = 4 * i;
      headers[at] = 0x24;
      headers[at + 1] = channels[i] ?? 0;
      headers.writeUInt16BE(packet.length, at + 2);
      socket.write(headers.subarray(at, at + 4));
      socket.write(packet);
    }
    socket.uncork();
  }
}
