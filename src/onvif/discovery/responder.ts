import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import type { BaseLogger } from 'pino';
import {
  buildBye,
  buildHello,
  buildProbeMatch,
  DEFAULT_TYPES,
  MAX_DISCOVERY_MESSAGE_BYTES,
  parseProbe,
  typesMatch,
  WSD_MULTICAST_ADDRESS,
  WSD_PORT,
  type AppSequence,
} from './messages.js';
import { bindSocket, closeSocket } from './udp.js';

// The device side of WS-Discovery, for the camera simulator. Many responders (one per simulated
// camera) share a host: each binds the discovery port with SO_REUSEADDR on the wildcard address,
// where the kernel hands every one of them a copy of each multicast Probe. A responder given its
// own `address` also binds that address and port, so a unicast Probe to it reaches it alone (the
// kernel prefers the exact binding) and its answers and announcements carry it as source.

export interface DiscoveryResponderOptions {
  endpoint: string;
  xaddrs: string[];
  scopes?: string[];
  /** Default dn:NetworkVideoTransmitter and tds:Device. */
  types?: string[];
  /** Discovery port, default 3702; 0 picks a free one (read it back from `port`). */
  port?: number;
  multicastAddress?: string;
  /** Address of the interface to join the group on and to multicast from, e.g. 127.0.0.1. */
  interfaceAddress?: string;
  /** This device's own unicast address (e.g. 127.0.0.21); it answers unicast Probes there. */
  address?: string;
  metadataVersion?: number;
  logger: BaseLogger;
}

export interface DiscoveryResponder {
  readonly port: number;
  /** Multicasts a Hello. */
  hello(): Promise<void>;
  /** Multicasts a Bye. */
  bye(): Promise<void>;
  close(): Promise<void>;
}

/** Starts answering Probes; resolves once the sockets are bound and the group is joined. */
export async function createDiscoveryResponder(opts: DiscoveryResponderOptions): Promise<DiscoveryResponder> {
  const group = opts.multicastAddress ?? WSD_MULTICAST_ADDRESS;
  const types = opts.types ?? [...DEFAULT_TYPES];
  const log = opts.logger;
  // WS-Discovery AppSequence: a new instance id per start, a message number that only grows.
  const instanceId = Math.floor(Date.now() / 1000);
  let messageNumber = 0;
  let closed = false;
  const nextSequence = (): AppSequence => ({ instanceId, messageNumber: ++messageNumber });
  const description = () => ({
    messageId: `urn:uuid:${randomUUID()}`,
    endpoint: opts.endpoint,
    types,
    scopes: opts.scopes ?? [],
    xaddrs: opts.xaddrs,
    metadataVersion: opts.metadataVersion ?? 1,
    appSequence: nextSequence(),
  });

  const sockets: dgram.Socket[] = [];
  const open = async (port: number, address: string): Promise<dgram.Socket> => {
    const socket = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    sockets.push(socket);
    socket.on('error', (err) => log.warn({ err, endpoint: opts.endpoint }, 'discovery responder: socket error'));
    socket.on('message', (buf, rinfo) => {
      void answer(buf, rinfo);
    });
    await bindSocket(socket, port, address);
    if (opts.interfaceAddress !== undefined) socket.setMulticastInterface(opts.interfaceAddress);
    socket.setMulticastTTL(1);
    socket.setMulticastLoopback(true);
    return socket;
  };

  const answer = async (buf: Buffer, rinfo: dgram.RemoteInfo): Promise<void> => {
    if (buf.length > MAX_DISCOVERY_MESSAGE_BYTES) return;
    const probe = await parseProbe(buf.toString('utf8'));
    // Scopes in the Probe are not matched: a simulated camera answers any Probe for its types.
    // sender is null only while start-up is still binding; a Probe then is answered by the next round.
    if (!probe || closed || sender === null || !typesMatch(probe.types, types)) return;
    const reply = buildProbeMatch({ ...description(), relatesTo: probe.messageId });
    sender.send(reply, rinfo.port, rinfo.address, (err) => {
      if (err) log.warn({ err, to: rinfo.address }, 'discovery responder: ProbeMatch not sent');
    });
  };

  let sender: dgram.Socket | null = null;
  let port: number;
  try {
    const multicastSocket = await open(opts.port ?? WSD_PORT, '0.0.0.0');
    port = multicastSocket.address().port;
    try {
      multicastSocket.addMembership(group, opts.interfaceAddress);
    } catch (err) {
      log.warn(
        { err, endpoint: opts.endpoint },
        'discovery responder: cannot join the multicast group; answering unicast Probes only',
      );
    }
    sender = opts.address === undefined ? multicastSocket : await open(port, opts.address);
  } catch (err) {
    await Promise.all(sockets.map(closeSocket));
    throw err;
  }

  const from: dgram.Socket = sender;
  const multicast = (xml: string): Promise<void> => {
    if (closed) return Promise.reject(new Error('discovery responder closed'));
    return new Promise((resolve, reject) => from.send(xml, port, group, (err) => (err ? reject(err) : resolve())));
  };

  return {
    port,
    hello: () => multicast(buildHello(description())),
    bye: () => multicast(buildBye(description())),
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all(sockets.map(closeSocket));
    },
  };
}
