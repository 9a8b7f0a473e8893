import type { Server, Socket } from 'node:net';
import { Counter, Gauge, type Registry } from 'prom-client';
import { REPEAT_LOG_INTERVAL_MS, throttledLog, type LevelLogger } from '../daemon/throttled-log.js';

// Connections to the API port are cheap to open and, without a bound, free to keep: an idle TLS
// connection, a slowloris request or a client that stops reading an answer holds a file descriptor
// and some memory for as long as its sender likes. Fastify's request and idle timeouts end them in
// time (the idle ones are closed and counted here); this caps how many one address may hold at
// once, so one host on the LAN cannot use up the gateway's descriptors while the timeouts run.
// Counted on the raw TCP socket, before TLS: a handshake never finished counts too.

export interface ConnectionGuardOptions {
  maxPerAddress: number;
  registry: Registry;
  logger: LevelLogger;
}

export interface ConnectionGuard {
  /** Open connections per address (for tests and diagnostics). */
  open(address: string): number;
  close(): void;
}

export function guardConnections(server: Server, opts: ConnectionGuardOptions): ConnectionGuard {
  const perAddress = new Map<string, number>();
  const refused = new Counter({
    name: 'edge_gateway_api_connections_refused_total',
    help: 'API connections closed at once because their address already held api.max_connections_per_address',
    registers: [opts.registry],
  });
  const open = new Gauge({
    name: 'edge_gateway_api_connections',
    help: 'Open connections to the API port',
    registers: [opts.registry],
  });
  const idleClosed = new Counter({
    name: 'edge_gateway_api_connections_idle_closed_total',
    help: 'API connections closed because nothing moved either way for api.idle_timeout_s',
    registers: [opts.registry],
  });
  // A listener takes the close over from Node, which would otherwise destroy the socket unseen.
  server.on('timeout', (socket: Socket) => {
    idleClosed.inc();
    socket.destroy();
  });
  const log = throttledLog({
    logger: opts.logger,
    level: 'warn',
    msg: 'API connection refused: too many from one address',
    intervalMs: REPEAT_LOG_INTERVAL_MS,
  });
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '?';
    const held = perAddress.get(address) ?? 0;
    if (held >= opts.maxPerAddress) {
      refused.inc();
      log.hit({ address, limit: opts.maxPerAddress }, address);
      socket.destroy();
      return;
    }
    perAddress.set(address, held + 1);
    open.inc();
    socket.once('close', () => {
      open.dec();
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  return { open: (address) => perAddress.get(address) ?? 0, close: () => log.close() };
}
