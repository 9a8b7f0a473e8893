import { isIP } from 'node:net';

// The hosts Web Push notifications may be sent to (config notifications.push_hosts): the gateway
// makes HTTPS requests to whatever endpoint a signed-in user subscribes, so only push services are
// allowed. Below config, which refuses a malformed entry when the file is loaded; src/notify checks
// each subscription's endpoint against the parsed entries.

/**
 * The public push services of the browsers people use (Chrome, Edge's older builds, Samsung and
 * Opera: FCM; Firefox: Mozilla's autopush; Safari: Apple's; Edge: WNS). They and every `*.` entry
 * are public services: their names must resolve to public addresses, checked at connect time.
 */
export const DEFAULT_PUSH_HOSTS: readonly string[] = [
  'fcm.googleapis.com',
  'updates.push.services.mozilla.com',
  'web.push.apple.com',
  '*.notify.windows.com',
];

/** One entry of notifications.push_hosts, as the endpoint check reads it. */
export interface PushHostEntry {
  /** Lower case, without a trailing dot; an IPv6 address without brackets. For a suffix entry, what follows `*.`. */
  host: string;
  /** `*.host`: any name that ends in `.host` (one label or more before it), never `host` itself. */
  suffix: boolean;
  port: number;
  /** A host the owner named, not one of the public services: it may resolve to a LAN or loopback address. */
  ownerNamed: boolean;
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** `entry` read as a push host, or why it cannot be one. */
export function readPushHost(entry: string): { entry: PushHostEntry } | { problem: string } {
  const text = entry.trim().toLowerCase();
  const suffix = text.startsWith('*.');
  const rest = suffix ? text.slice(2) : text;
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(rest);
  if (!m?.[1]) return { problem: 'must be host, host:port or *.domain[:port] (an IPv6 address in brackets)' };
  const port = m[2] === undefined ? 443 : Number(m[2]);
  if (!(port >= 1 && port <= 65535)) return { problem: `has port ${m[2]}, not one of 1–65535` };
  const host = normalizeHost(m[1]);
  const ip = isIP(host) !== 0;
  if (suffix && (ip || !host.includes('.')))
    return { problem: 'a *. entry must name a domain of two labels or more (*.notify.windows.com)' };
  if (!ip && (!NAME.test(host) || host.length > 253)) return { problem: `names no valid host (${host})` };
  const ownerNamed = !suffix && !DEFAULT_PUSH_HOSTS.includes(host);
  return { entry: { host, suffix, port, ownerNamed } };
}

/** A URL's or entry's host compared as the endpoint check compares them: lower case, no brackets, no trailing dot. */
export function normalizeHost(host: string): string {
  const h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) return h.slice(1, -1);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}
