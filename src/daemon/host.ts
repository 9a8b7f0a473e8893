import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

// What the daemon asks of the machine at start.

/** Port 0 (tests) is settled before the start, so the issuer URL can name the port. */
export async function choosePort(host: string, port: number): Promise<number> {
  if (port !== 0) return port;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, host, resolve));
  const chosen = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return chosen;
}

/** systemd-timesyncd marks a synchronised clock with this file; other NTP daemons leave it unknown. */
export function clockSynchronized(): boolean | null {
  if (existsSync('/run/systemd/timesync/synchronized')) return true;
  return existsSync('/run/systemd/timesync') ? false : null;
}
