import os from 'node:os';

// This box's addresses: every one (the names a request may have reached it by, the certificate's
// addresses), and what a null public_host (api.public_host, rtsp.public_host) stands for: the
// address LAN clients most likely reach this box at.

/** Every address of this box's network interfaces, loopback included. */
export function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}

/** This box's first non-internal IPv4 address, or null when it has none. */
export function firstLanAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}
