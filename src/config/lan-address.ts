import os from 'node:os';

// What a null public_host (api.public_host, rtsp.public_host) stands for: the address LAN clients
// most likely reach this box at.

/** This box's first non-internal IPv4 address, or null when it has none. */
export function firstLanAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}
