import { createPublicKey } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { normalizeHost, type PushHostEntry } from '../domain/push-hosts.js';

// Where pushes may go, and what a subscription's keys must be (pure). The gateway makes HTTPS
// requests to the endpoint any signed-in user subscribes, so an endpoint must be https on a host of
// notifications.push_hosts, and a public service's name must resolve to a public address (checked
// again at connect time, src/notify/sender.ts: DNS rebinding). docs/notifications.md.

/** Longest endpoint taken (the browsers' are 150–400 characters). */
export const MAX_ENDPOINT_LENGTH = 2048;

/** An endpoint the policy allows: where to connect, and whether its addresses must be public. */
export interface AllowedEndpoint {
  url: URL;
  /** Host as connected to: no brackets, no trailing dot. */
  host: string;
  port: number;
  /** true: a host the owner listed by name (a self-hosted service); it may resolve to a LAN or loopback address. */
  anyAddress: boolean;
}

export type EndpointCheck = { ok: true; endpoint: AllowedEndpoint } | { ok: false; problem: string };

/** Whether `endpoint` may receive pushes under `hosts` (notifications.push_hosts, parsed). */
export function checkEndpoint(endpoint: string, hosts: readonly PushHostEntry[]): EndpointCheck {
  const refuse = (problem: string): EndpointCheck => ({ ok: false, problem });
  if (endpoint.length > MAX_ENDPOINT_LENGTH) return refuse(`endpoint is longer than ${MAX_ENDPOINT_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return refuse('endpoint is not a URL');
  }
  if (url.protocol !== 'https:') return refuse('endpoint must be https');
  if (url.username !== '' || url.password !== '') return refuse('endpoint must not carry a user name or password');
  if (url.hash !== '' || endpoint.includes('#')) return refuse('endpoint must not have a fragment');
  const host = normalizeHost(url.hostname);
  const port = url.port === '' ? 443 : Number(url.port);
  const ip = isIP(host) !== 0;
  const named = hosts.filter((h) => (h.suffix ? !ip && host.endsWith(`.${h.host}`) : h.host === host));
  if (named.length === 0) {
    if (ip && !isPublicAddress(host))
      return refuse(`endpoint host ${host} is a loopback, link-local or private address`);
    return refuse(`endpoint host ${host} is not a known push service (notifications.push_hosts)`);
  }
  const entry = named.find((h) => h.port === port);
  if (!entry)
    return refuse(
      `endpoint port ${port} of ${host} is not allowed (notifications.push_hosts lists ${named.map((h) => h.port).join(', ')})`,
    );
  // A listed address is named as such by the owner; a public service's name must lead to a public address.
  return { ok: true, endpoint: { url, host, port, anyAddress: entry.ownerNamed } };
}

// Every range that is not the public internet: this host, the LAN, link-local, carrier-grade NAT,
// documentation, benchmarking, multicast and reserved ranges (RFC 6890 and its IPv6 counterparts).
const NOT_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv6');

/** An IPv4 address carried in an IPv6 one (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), else null. */
function embeddedIpv4(address: string): string | null {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return null;
  if (m[1]) return m[1];
  const hi = parseInt(m[2] ?? '0', 16);
  const lo = parseInt(m[3] ?? '0', 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** Whether an IP address (v4 or v6) is on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== null) return isPublicAddress(v4);
    return !NOT_PUBLIC.check(address, 'ipv6');
  }
  return !NOT_PUBLIC.check(address, 'ipv4');
}

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;
/** Longest key text read (a p256dh is 87 characters, an auth secret 22). */
export const MAX_KEY_LENGTH = 256;

/** The keys as stored (unpadded base64url), or why they cannot encrypt a push (RFC 8291). */
export function checkKeys(
  p256dh: string,
  auth: string,
): { ok: true; p256dh: string; auth: string } | { ok: false; problem: string } {
  const refuse = (problem: string) => ({ ok: false as const, problem });
  if (p256dh.length > MAX_KEY_LENGTH || !BASE64URL.test(p256dh)) return refuse('keys.p256dh must be base64url');
  if (auth.length > MAX_KEY_LENGTH || !BASE64URL.test(auth)) return refuse('keys.auth must be base64url');
  const point = Buffer.from(p256dh, 'base64url');
  if (point.length !== 65 || point[0] !== 0x04)
    return refuse(`keys.p256dh must be a 65-byte uncompressed P-256 point (got ${point.length} bytes)`);
  try {
    createPublicKey({
      key: {
        kty: 'EC',
        crv: 'P-256',
        x: point.subarray(1, 33).toString('base64url'),
        y: point.subarray(33).toString('base64url'),
      },
      format: 'jwk',
    });
  } catch {
    return refuse('keys.p256dh is not a point of the P-256 curve');
  }
  const secret = Buffer.from(auth, 'base64url');
  if (secret.length !== 16) return refuse(`keys.auth must be 16 bytes (got ${secret.length})`);
  return { ok: true, p256dh: point.toString('base64url'), auth: secret.toString('base64url') };
}
