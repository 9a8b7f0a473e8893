import type { Server, Socket } from 'node:net';
import { Counter, Gauge, type Registry } from 'prom-client';
import { REPEAT_LOG_INTERVAL_MS, throttledLog, type LevelLogger } from '../daemon/throttled-log.js';

// Connections to the API port are cheap to open and, without a bound, free to keep: an idle TLS
// connection, a slowloris request or a client that stops reading an answer holds a file descriptor
// and some memory for as long as its sender likes. Node's request timeout ends requests that do not
// arrive in time (also a connection that never sends one) and its keep-alive timeout ends idle
// connections between requests; this caps how many one address may hold at once, and closes a
// connection on which nothing has moved either way for idleTimeoutMs (a client that stopped reading
// a download). Counted on the raw TCP socket, before TLS: a handshake never finished counts too.
//
// Why a sweep and not a socket timeout (Fastify's connectionTimeout): a socket timeout is re-armed
// on every read and write of every request, ~5 µs of a 50-device list's ~60 (docs/performance.md).
// Here each open connection costs a look once a second instead, and a request nothing at all.

export interface ConnectionGuardOptions {
  maxPerAddress: number;
  /** A connection on which no byte has moved either way for this long is closed (api.idle_timeout_s). */
  idleTimeoutMs: number;
  registry: Registry;
  logger: LevelLogger;
}

export interface ConnectionGuard {
  /** Open connections per address (for tests and diagnostics). */
  open(address: string): number;
  close(): void;
}

/** How often open connections are looked at: at most a second past idleTimeoutMs, and half of a shorter one. */
const sweepInterval = (idleTimeoutMs: number): number => Math.min(1000, Math.max(50, idleTimeoutMs / 2));

interface Traffic {
  /** Bytes read and written so far, as of the last look. */
  bytes: number;
  /** When the last look found bytes had moved (performance.now(), ms). */
  movedAt: number;
}

export function guardConnections(server: Server, opts: ConnectionGuardOptions): ConnectionGuard {
  const perAddress = new Map<string, number>();
  const traffic = new Map<Socket, Traffic>();
  const refused = new Counter({
    name: 'edge_gateway_api_connections_refused_total',
    help: 'API connections closed at once because their address already held api.max_connections_per_address',
    registers: [opts.registry],
  });
  const quietClosed = new Counter({
    name: 'edge_gateway_api_connections_idle_closed_total',
    help: 'API connections closed because no byte moved either way for api.idle_timeout_s',
    registers: [opts.registry],
  });
  new Gauge({
    name: 'edge_gateway_api_connections',
    help: 'Open connections to the API port',
    registers: [opts.registry],
    collect() {
      this.set(traffic.size);
    },
  });
  const log = throttledLog({ logger: opts.logger, level: 'warn', msg: 'API connection refused: too many from one address', intervalMs: REPEAT_LOG_INTERVAL_MS });
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '?';
    const held = perAddress.get(address) ?? 0;
    if (held >= opts.maxPerAddress) {
      refused.inc();
      log.hit({ address, limit: opts.maxPerAddress }, address);
      socket.destroy();
      return;
    }
    perAddress.set(address, held + 1);
    traffic.set(socket, { bytes: 0, movedAt: performance.now() });
    socket.once('close', () => {
      traffic.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });

  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [socket, seen] of traffic) {
      // The raw socket's counters include what TLS reads and writes through it, handshake included.
      const bytes = socket.bytesRead + socket.bytesWritten;
      if (bytes !== seen.bytes) {
        seen.bytes = bytes;
        seen.movedAt = now;
      } else if (now - seen.movedAt >= opts.idleTimeoutMs) {
        quietClosed.inc();
        socket.destroy();
      }
    }
  }, sweepInterval(opts.idleTimeoutMs));
  sweep.unref();

  return {
    open: (address) => perAddress.get(address) ?? 0,
    close: () => {
      clearInterval(sweep);
      log.close();
    },
  };
}
