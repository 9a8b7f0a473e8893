import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

// What the daemon asks of the machine at start.

/** The API's port, held from the start until the API binds it. */
export interface PortReservation {
  readonly port: number;
  /** Lets the port go, just before the API binds it; once is enough, more is harmless. */
  release(): Promise<void>;
}

/**
 * Port 0 (tests) is settled before the start, so the issuer URL can name the port. The probe that
 * found it keeps it until the API is about to listen: let go at once, the port stayed free for the
 * seconds a start takes, and a connection of another process (parallel tests) took it now and then
 * (EADDRINUSE when the API then listened).
 */
export async function reservePort(host: string, port: number): Promise<PortReservation> {
  if (port !== 0) return { port, release: () => Promise.resolve() };
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, host, resolve));
  const chosen = (probe.address() as AddressInfo).port;
  let released: Promise<void> | null = null;
  return {
    port: chosen,
    release: () => (released ??= new Promise<void>((resolve) => probe.close(() => resolve()))),
  };
}

/** systemd-timesyncd marks a synchronised clock with this file; other NTP daemons leave it unknown. */
export function clockSynchronized(): boolean | null {
  if (existsSync('/run/systemd/timesync/synchronized')) return true;
  return existsSync('/run/systemd/timesync') ? false : null;
}
