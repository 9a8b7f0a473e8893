import os from 'node:os';
import { isIP } from 'node:net';

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

/** A host as compared: without IPv6 brackets or a trailing dot, lower case. */
export function bareHost(host: string): string {
  const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return unbracketed.toLowerCase().replace(/\.$/, '');
}

/**
 * Whether a request's host is this box: one of its interface addresses, its host name (also with
 * `.local`, as mDNS announces it), `localhost`, or one of `ownNames` (configured public names).
 * Anything else (a name a proxy or an attacker put in the Host header) is not.
 */
export function isOwnHost(
  host: string,
  ownNames: readonly string[],
  addresses: () => string[] = interfaceAddresses,
): boolean {
  const name = bareHost(host);
  if (name === '') return false;
  if (isIP(name)) return addresses().some((a) => bareHost(a) === name || bareHost(a) === name.replace(/^::ffff:/, ''));
  const hostname = os.hostname().toLowerCase();
  return ['localhost', hostname, `${hostname}.local`, ...ownNames].some((n) => bareHost(n) === name);
}
