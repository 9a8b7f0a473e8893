import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';

// The relay's UDP side for viewers that SETUP with RTP over UDP: one socket pair (RTP, RTCP on the
// next port) for all of them, as RTSP servers commonly do, so a viewer costs no sockets. Packets go
// only to the address of the viewer's own RTSP connection: a SETUP naming another destination
// cannot turn the relay into a traffic cannon aimed at a third host.

export interface RelayUdp {
  readonly rtpPort: number;
  readonly rtcpPort: number;
  sendRtp(packet: Buffer, port: number, address: string): void;
  sendRtcp(packet: Buffer, port: number, address: string): void;
  /** Bytes handed to the sockets and not yet sent by the kernel (both sockets). */
  queuedBytes(): number;
  close(): Promise<void>;
}

export interface RelayUdpOptions {
  host: string;
  /** RTP port (even); RTCP is the next one. 0: any free pair. */
  port: number;
  /** Called for every datagram a viewer sends to the RTCP port (receiver reports: it is alive). */
  onRtcpFrom: (address: string) => void;
}

function bind(socket: UdpSocket, port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const onError = () => resolve(false);
    socket.once('error', onError);
    socket.bind(port, host, () => {
      socket.off('error', onError);
      resolve(true);
    });
  });
}

/** Strips the IPv4-mapped prefix a dual-stack TCP socket reports, for an IPv4 UDP socket. */
export function udpAddressOf(remoteAddress: string, ipv6: boolean): string {
  return !ipv6 && remoteAddress.startsWith('::ffff:') ? remoteAddress.slice(7) : remoteAddress;
}

export async function openRelayUdp(opts: RelayUdpOptions): Promise<RelayUdp> {
  const type = isIPv6(opts.host) ? 'udp6' : 'udp4';
  for (let attempt = 0; attempt < 50; attempt++) {
    const rtp = createSocket({ type, reuseAddr: false });
    const rtcp = createSocket({ type, reuseAddr: false });
    // With port 0 the kernel picks the RTP port; the pair needs the next one free as well.
    const rtpBound = await bind(rtp, opts.port, opts.host);
    const rtpPort = rtpBound ? rtp.address().port : 0;
    const rtcpBound = rtpBound && (opts.port !== 0 || rtpPort % 2 === 0) && (await bind(rtcp, rtpPort + 1, opts.host));
    if (!rtcpBound) {
      for (const s of [rtp, rtcp]) {
        try {
          s.close();
        } catch {
          // never bound: nothing to close
        }
      }
      if (opts.port !== 0) throw new Error(`cannot bind UDP ports ${opts.port}-${opts.port + 1} on ${opts.host}`);
      continue;
    }
    // Viewers send NAT keep-alives to the RTP port; nothing to do with them but read them away.
    rtp.on('message', () => undefined);
    rtcp.on('message', (_msg, rinfo) => opts.onRtcpFrom(rinfo.address));
    // Sends to a viewer that went away fail with ICMP errors reported here; they are not fatal.
    rtp.on('error', () => undefined);
    rtcp.on('error', () => undefined);
    return {
      rtpPort,
      rtcpPort: rtpPort + 1,
      sendRtp: (packet, port, address) => rtp.send(packet, port, address),
      sendRtcp: (packet, port, address) => rtcp.send(packet, port, address),
      queuedBytes: () => rtp.getSendQueueSize() + rtcp.getSendQueueSize(),
      close: async () => {
        await Promise.all([
          new Promise<void>((r) => rtp.close(() => r())),
          new Promise<void>((r) => rtcp.close(() => r())),
        ]);
      },
    };
  }
  throw new Error(`no free pair of UDP ports on ${opts.host}`);
}
