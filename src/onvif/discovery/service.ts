import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import { isIPv4 } from 'node:net';
import os from 'node:os';
import type { BaseLogger } from 'pino';
import { stableEndpoint } from '../../domain/device-alias.js';
import {
  buildProbe,
  isOnvifCamera,
  MAX_DISCOVERY_MESSAGE_BYTES,
  parseDiscoveryMessages,
  WSD_MULTICAST_ADDRESS,
  WSD_PORT,
} from './messages.js';
import { bindSocket, closeSocket } from './udp.js';

// The I/O edge of WS-Discovery. Probes leave from one ephemeral socket per interface (bound to the
// interface's address, so the multicast interface and the reply address are both pinned) and from
// one ephemeral socket for unicast targets; ProbeMatches come back to those sockets. A separate
// listener on the discovery port, joined to the multicast group, hears Hello and Bye. The listener
// is optional: when another process holds the port without SO_REUSEADDR, probing still works.

/** Endpoints remembered per probe round for de-duplication; past this, repeats are emitted again rather than stored. */
export const MAX_ENDPOINTS_PER_ROUND = 1024;
/** Hello/Bye MessageIDs remembered to drop SOAP-over-UDP retransmissions of one announcement. */
const MAX_RECENT_ANNOUNCEMENTS = 512;
// Retransmissions follow within about a second. The window is short because some firmware reuses
// one MessageID for every message it sends, and its next real announcement must not be dropped.
const ANNOUNCEMENT_REPEAT_WINDOW_MS = 5_000;

export type FoundVia = 'probe' | 'hello' | 'unicast';

export interface Found {
  /**
   * EndpointReference Address as the device sent it; its alias (aliasOf.endpoint) gives the device id (deviceIdFrom).
   */
  endpoint: string;
  xaddrs: string[];
  scopes: string[];
  types: string[];
  via: FoundVia;
  /** Source address of the datagram. */
  from: string;
}

export interface DiscoveryEvents {
  found: [Found];
  bye: [endpoint: string];
}

export interface DiscoveryOptions {
  /** Interface names to probe and listen on; [] = every non-loopback IPv4 interface with an address. */
  interfaces: string[];
  /** "host" or "host:port" (IPv4 or a name); the port defaults to `port`. */
  unicastTargets: string[];
  intervalS: number;
  logger: BaseLogger;
  /** Discovery port, default 3702; tests use another so they never meet real devices or daemons. */
  port?: number;
  multicastAddress?: string;
  /** false: unicast targets only, no multicast Probe and no Hello/Bye listener. Default true. */
  multicast?: boolean;
}

export interface Discovery {
  start(): Promise<void>;
  probeNow(): Promise<void>;
  stop(): Promise<void>;
  on<K extends keyof DiscoveryEvents>(event: K, listener: (...args: DiscoveryEvents[K]) => void): this;
  off<K extends keyof DiscoveryEvents>(event: K, listener: (...args: DiscoveryEvents[K]) => void): this;
}

export interface InterfaceAddress {
  name: string;
  address: string;
}

type NetworkInterfaces = NodeJS.Dict<os.NetworkInterfaceInfo[]>;

/**
 * The interfaces to use: each named one's first IPv4 address (loopback allowed when named), or with
 * no names every non-internal interface that has an IPv4 address. `missing` lists named interfaces
 * that are absent or have no IPv4 address yet.
 */
export function selectInterfaces(
  names: readonly string[],
  nics: NetworkInterfaces,
): { selected: InterfaceAddress[]; missing: string[] } {
  const ipv4 = (name: string, allowInternal: boolean): string | null =>
    nics[name]?.find((a) => a.family === 'IPv4' && (allowInternal || !a.internal))?.address ?? null;
  const selected: InterfaceAddress[] = [];
  const missing: string[] = [];
  for (const name of names.length > 0 ? [...new Set(names)] : Object.keys(nics)) {
    const address = ipv4(name, names.length > 0);
    if (address !== null) selected.push({ name, address });
    else if (names.length > 0) missing.push(name);
  }
  return { selected, missing };
}

export interface UnicastTarget {
  host: string;
  port: number;
}

/** Parses "host" or "host:port". Throws RangeError on a malformed target (a configuration error). */
export function parseUnicastTarget(target: string, defaultPort: number): UnicastTarget {
  const m = /^([^\s:]+)(?::(\d{1,5}))?$/.exec(target.trim());
  const host = m?.[1];
  const port = m?.[2] === undefined ? defaultPort : Number(m[2]);
  if (!m || host === undefined || port < 1 || port > 65535)
    throw new RangeError(`unicast target ${JSON.stringify(target)} is not host or host:port (IPv4)`);
  return { host, port };
}

interface Round {
  /** MessageIDs of this round's Probes and whether each went out multicast or to a unicast target. */
  probes: Map<string, FoundVia>;
  seen: Set<string>;
}

interface InterfaceSocket extends InterfaceAddress {
  socket: dgram.Socket;
}

function send(socket: dgram.Socket, message: string, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => socket.send(message, port, host, (err) => (err ? reject(err) : resolve())));
}

class DiscoveryService extends EventEmitter<DiscoveryEvents> implements Discovery {
  private readonly port: number;
  private readonly group: string;
  private readonly multicast: boolean;
  private readonly targets: UnicastTarget[];
  private readonly log: BaseLogger;
  private listener: dgram.Socket | null = null;
  private unicastSocket: dgram.Socket | null = null;
  private readonly ifaceSockets = new Map<string, InterfaceSocket>();
  private round: Round = { probes: new Map(), seen: new Set() };
  /** "kind|MessageID" → when the entry stops suppressing repeats (ms since the epoch); insertion-ordered. */
  private readonly recentAnnouncements = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private state: 'new' | 'started' | 'stopped' = 'new';
  private started: Promise<void> | null = null;
  // Rounds run one after another: a round may create sockets, and two at once would race on them.
  private queue: Promise<void> = Promise.resolve();
  private lastMissing = '';

  constructor(private readonly opts: DiscoveryOptions) {
    super();
    this.port = opts.port ?? WSD_PORT;
    this.group = opts.multicastAddress ?? WSD_MULTICAST_ADDRESS;
    this.multicast = opts.multicast ?? true;
    this.log = opts.logger;
    if (!Number.isInteger(this.port) || this.port < 1 || this.port > 65535)
      throw new RangeError(`discovery port ${this.port} out of range`);
    if (!isIPv4(this.group)) throw new RangeError(`multicast address ${this.group} is not IPv4`);
    // setInterval silently turns delays past 2^31-1 ms into 1 ms, which would flood the LAN.
    if (!(opts.intervalS > 0) || opts.intervalS * 1000 > 2 ** 31 - 1)
      throw new RangeError(`discovery interval ${opts.intervalS} s is not a positive number`);
    this.targets = opts.unicastTargets.map((t) => parseUnicastTarget(t, this.port));
  }

  start(): Promise<void> {
    if (this.state === 'stopped') return Promise.reject(new Error('discovery was stopped'));
    this.started ??= this.doStart();
    return this.started;
  }

  private async doStart(): Promise<void> {
    this.state = 'started';
    if (this.multicast) await this.openListener();
    if (this.targets.length > 0) {
      const socket = this.newSocket('unicast');
      try {
        await bindSocket(socket, 0, '0.0.0.0');
        this.unicastSocket = socket;
      } catch (err) {
        this.log.warn({ err }, 'discovery: cannot open the unicast probe socket');
        await closeSocket(socket);
      }
    }
    // stop() may have been called while the sockets were opening; then there is nothing left to do.
    if (this.state !== 'started') return;
    await this.probeNow();
    if (this.state === 'started') {
      this.timer = setInterval(() => {
        this.probeNow().catch((err: unknown) => this.log.warn({ err }, 'discovery: probe round failed'));
      }, this.opts.intervalS * 1000);
      // Periodic probing must not keep a stopping process alive.
      this.timer.unref();
    }
  }

  private async openListener(): Promise<void> {
    const socket = this.newSocket('listener');
    try {
      await bindSocket(socket, this.port, '0.0.0.0');
      this.listener = socket;
    } catch (err) {
      this.log.warn(
        { err, port: this.port },
        'discovery: cannot bind the discovery port (another process holds it); Hello/Bye will not be heard, probing continues',
      );
      await closeSocket(socket);
    }
  }

  /** Sends one round of Probes now: multicast on each interface and to each unicast target. */
  probeNow(): Promise<void> {
    if (this.state !== 'started')
      return Promise.reject(new Error(this.state === 'new' ? 'discovery not started' : 'discovery was stopped'));
    const run = this.queue.then(() => this.runRound());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runRound(): Promise<void> {
    if (this.state !== 'started') return;
    if (this.multicast) await this.syncInterfaces();
    // Answers to the previous round's Probes are dropped from here on: each round asks again.
    const round: Round = { probes: new Map(), seen: new Set() };
    this.round = round;
    const sends: Promise<void>[] = [];
    const probe = (
      socket: dgram.Socket,
      via: FoundVia,
      port: number,
      host: string,
      what: Record<string, unknown>,
    ): void => {
      const id = `urn:uuid:${randomUUID()}`;
      round.probes.set(id, via);
      sends.push(
        send(socket, buildProbe(id), port, host).catch((err: unknown) =>
          this.log.warn({ err, ...what }, 'discovery: probe not sent'),
        ),
      );
    };
    for (const s of this.ifaceSockets.values()) probe(s.socket, 'probe', this.port, this.group, { interface: s.name });
    if (this.unicastSocket)
      for (const t of this.targets)
        probe(this.unicastSocket, 'unicast', t.port, t.host, { target: `${t.host}:${t.port}` });
    await Promise.all(sends);
  }

  /** Follows interfaces coming, going and changing address (DHCP) between rounds. */
  private async syncInterfaces(): Promise<void> {
    const { selected, missing } = selectInterfaces(this.opts.interfaces, os.networkInterfaces());
    const missingText = missing.join(',');
    if (missingText !== this.lastMissing) {
      if (missing.length > 0)
        this.log.warn(
          { interfaces: missing },
          'discovery: interfaces absent or without an IPv4 address; not probing there',
        );
      this.lastMissing = missingText;
    }
    const wanted = new Map(selected.map((i) => [`${i.name}|${i.address}`, i]));
    for (const [key, s] of this.ifaceSockets) {
      if (wanted.has(key)) continue;
      this.ifaceSockets.delete(key);
      this.leaveGroup(s.address);
      await closeSocket(s.socket);
    }
    for (const [key, iface] of wanted) {
      if (this.ifaceSockets.has(key)) continue;
      const socket = this.newSocket('interface');
      try {
        await bindSocket(socket, 0, iface.address);
        socket.setMulticastInterface(iface.address);
        // Discovery is link-local by design (WS-Discovery: TTL 1); looping back lets a device
        // simulator on the same host answer.
        socket.setMulticastTTL(1);
        socket.setMulticastLoopback(true);
      } catch (err) {
        this.log.warn({ err, interface: iface.name }, 'discovery: cannot probe on interface');
        await closeSocket(socket);
        continue;
      }
      if (this.state !== 'started') {
        await closeSocket(socket);
        return;
      }
      this.ifaceSockets.set(key, { ...iface, socket });
      this.joinGroup(iface);
    }
  }

  private joinGroup(iface: InterfaceAddress): void {
    if (!this.listener) return;
    try {
      this.listener.addMembership(this.group, iface.address);
    } catch (err) {
      // After an address change the kernel keeps the membership (it is per interface), so joining
      // again through the new address reports it as in use: already joined is what we want.
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return;
      this.log.warn(
        { err, interface: iface.name },
        'discovery: cannot join the multicast group; Hello/Bye on this interface will not be heard',
      );
    }
  }

  private leaveGroup(address: string): void {
    try {
      this.listener?.dropMembership(this.group, address);
    } catch {
      // The address is gone already. The kernel keeps memberships per interface, so at worst this
      // one lingers, harmlessly, until the listener closes.
    }
  }

  private newSocket(kind: 'listener' | 'interface' | 'unicast'): dgram.Socket {
    // reuseAddr matters for the listener: the discovery port is shared with other WS-Discovery
    // software on the host (and, in tests, with simulated cameras).
    const socket = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    socket.on('message', (buf, rinfo) => {
      this.receive(buf, rinfo.address).catch((err: unknown) =>
        this.log.error({ err, from: rinfo.address }, 'discovery: datagram handling failed'),
      );
    });
    socket.on('error', (err) => this.log.warn({ err, socket: kind }, 'discovery: socket error'));
    return socket;
  }

  private async receive(buf: Buffer, from: string): Promise<void> {
    if (buf.length > MAX_DISCOVERY_MESSAGE_BYTES) {
      this.log.debug({ from, bytes: buf.length }, 'discovery: oversized datagram dropped');
      return;
    }
    const messages = await parseDiscoveryMessages(buf.toString('utf8'));
    if (!messages || this.state !== 'started') return;
    const first = messages[0];
    if (first && first.kind !== 'probeMatch' && first.messageId && this.isRepeat(`${first.kind}|${first.messageId}`))
      return;
    for (const m of messages) {
      const key = stableEndpoint(m.endpoint) ?? m.endpoint;
      if (m.kind === 'bye') {
        this.round.seen.delete(key);
        this.deliver('bye', m.endpoint);
        continue;
      }
      if (!isOnvifCamera(m.types)) continue;
      let via: FoundVia = 'hello';
      if (m.kind === 'probeMatch') {
        const probedVia = m.relatesTo === null ? undefined : this.round.probes.get(m.relatesTo);
        if (probedVia === undefined) {
          this.log.debug(
            { from, relatesTo: m.relatesTo },
            'discovery: ProbeMatch for a Probe of another round or client ignored',
          );
          continue;
        }
        if (this.round.seen.has(key)) continue;
        if (this.round.seen.size < MAX_ENDPOINTS_PER_ROUND) this.round.seen.add(key);
        via = probedVia;
      }
      this.deliver('found', { endpoint: m.endpoint, xaddrs: m.xaddrs, scopes: m.scopes, types: m.types, via, from });
    }
  }

  /** Records an announcement; true when the same one was seen within the repeat window. */
  private isRepeat(key: string): boolean {
    const now = Date.now();
    for (const [k, expires] of this.recentAnnouncements) {
      if (expires > now && this.recentAnnouncements.size < MAX_RECENT_ANNOUNCEMENTS) break;
      this.recentAnnouncements.delete(k);
    }
    const expires = this.recentAnnouncements.get(key);
    if (expires !== undefined && expires > now) return true;
    // Re-inserted at the end so the map stays in expiry order for the pruning above.
    this.recentAnnouncements.delete(key);
    this.recentAnnouncements.set(key, now + ANNOUNCEMENT_REPEAT_WINDOW_MS);
    return false;
  }

  // Each listener is called on its own: with a plain emit, one that throws would starve the listeners
  // after it and unwind into the socket's message handler.
  private deliver(event: 'found', arg: Found): void;
  private deliver(event: 'bye', arg: string): void;
  private deliver(event: keyof DiscoveryEvents, arg: Found | string): void {
    for (const listener of this.rawListeners(event)) {
      try {
        (listener as (a: Found | string) => void).call(this, arg);
      } catch (err) {
        this.log.error({ err, event }, 'discovery: listener threw');
      }
    }
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.started?.catch(() => undefined);
    await this.queue;
    const sockets = [this.listener, this.unicastSocket, ...[...this.ifaceSockets.values()].map((s) => s.socket)];
    this.listener = null;
    this.unicastSocket = null;
    this.ifaceSockets.clear();
    await Promise.all(sockets.map((s) => (s ? closeSocket(s) : Promise.resolve())));
  }
}

/** Creates (but does not start) WS-Discovery for ONVIF cameras. Throws RangeError on bad options. */
export function createDiscovery(opts: DiscoveryOptions): Discovery {
  return new DiscoveryService(opts);
}
