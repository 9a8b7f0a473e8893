import { createHash } from 'node:crypto';

// The names a device is known by besides its id (the store's device_aliases table). A camera may be
// configured and also discovered, or moved by DHCP: whichever alias is seen first names the device,
// and any alias seen later leads back to it. Here rather than in onvif because the store keeps them.
// The prefixes are stored, and the device_rows view (migration 7) reads the address of `url:` ones,
// so they cannot change.

/** The camera's WS-Discovery endpoint reference, as stableEndpoint writes it. */
export type EndpointAlias = `epr:${string}`;
/** `serial:<manufacturer>:<serial number>`; the manufacturer is empty when the camera tells none. */
export type SerialAlias = `serial:${string}:${string}`;
/**
 * The address its owner gave for the camera: an ONVIF device service URL, or a plain RTSP camera's
 * main stream URL (as parseRtspUrl keeps it).
 */
export type UrlAlias = `url:${string}`;
export type DeviceAlias = EndpointAlias | SerialAlias | UrlAlias;

/** The only way aliases are made, so that one camera always gets the same text. */
export const aliasOf = {
  /** Null when the endpoint reference cannot identify the device over time (see stableEndpoint). */
  endpoint(endpointReference: string): EndpointAlias | null {
    const stable = stableEndpoint(endpointReference);
    return stable === null ? null : `epr:${stable}`;
  },
  /** Null without a serial number: a manufacturer alone names no camera. */
  serial(manufacturer: string | null, serialNumber: string | null): SerialAlias | null {
    return serialNumber?.trim() ? `serial:${manufacturer ?? ''}:${serialNumber}` : null;
  },
  url(onvifUrl: string): UrlAlias {
    return `url:${onvifUrl}`;
  },
};

/** Whether text read back from the store is an alias of one of the three kinds. */
export function isDeviceAlias(text: string): text is DeviceAlias {
  return text.startsWith('epr:') || text.startsWith('url:') || /^serial:[^:]*:/.test(text);
}

/** The endpoint reference an `epr:` alias names; null for the other kinds. */
export function endpointOf(alias: DeviceAlias): string | null {
  return alias.startsWith('epr:') ? alias.slice('epr:'.length) : null;
}

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IPV4_TEXT = /(?:^|[^\d.])\d{1,3}(?:\.\d{1,3}){3}(?:$|[^\d.])/;

/**
 * The endpoint reference in the form identity is derived from, or null when it cannot identify a
 * device over time. UUIDs compare case-insensitively and firmware writes them as "urn:uuid:X",
 * "uuid:X" or a bare "X"; all become "urn:uuid:x". Endpoints that are URLs or contain an IPv4
 * address (some firmware puts its XAddr there) change with DHCP and are refused.
 */
export function stableEndpoint(endpoint: string): string | null {
  const e = endpoint.trim();
  const uuid = /^(?:urn:)?uuid:(.+)$/i.exec(e)?.[1] ?? (UUID_TEXT.test(e) ? e : null);
  if (uuid !== null)
    return /^[0-9a-f-]+$/i.test(uuid) && /[0-9a-f]/i.test(uuid) ? `urn:uuid:${uuid.toLowerCase()}` : null;
  if (e.length === 0 || /^[a-z][a-z0-9+.-]*:\/\//i.test(e) || IPV4_TEXT.test(e)) return null;
  // Other URNs: the "urn" scheme and the namespace identifier are case-insensitive (RFC 8141).
  return e.replace(/^urn:([a-z0-9][a-z0-9-]{0,31}):/i, (_m, nid: string) => `urn:${nid.toLowerCase()}:`);
}

/**
 * A stable, opaque, URL-safe device id ("dev_" + 24 characters of [A-Za-z0-9_-]) from the alias that
 * names a new device: callers pass the longest-lived one they have (endpoint reference, else serial,
 * else address), since only the endpoint reference and the serial survive a DHCP move. The serial
 * alone is hashed, not the manufacturer: the cloud knows devices by these ids, so the hash of
 * each kind is fixed (test/domain/device-alias.test.ts pins it). Throws
 * RangeError for an alias that aliasOf would not have made (an unusable endpoint, no serial).
 */
export function deviceIdFrom(alias: DeviceAlias): string {
  return `dev_${createHash('sha256').update(identityKey(alias), 'utf8').digest().subarray(0, 18).toString('base64url')}`;
}

function identityKey(alias: DeviceAlias): string {
  const endpoint = endpointOf(alias);
  if (endpoint !== null) {
    const stable = stableEndpoint(endpoint);
    if (stable === null)
      throw new RangeError(`no stable identity: endpoint ${JSON.stringify(endpoint)} cannot identify a device`);
    return `endpoint\u0000${stable}`;
  }
  if (alias.startsWith('url:')) return `address\u0000${alias.slice('url:'.length)}`;
  // The manufacturer ends at the first ':' (a serial number may hold colons, e.g. a MAC address).
  const afterPrefix = alias.slice('serial:'.length);
  const serial = afterPrefix.slice(afterPrefix.indexOf(':') + 1).trim();
  if (!afterPrefix.includes(':') || serial === '')
    throw new RangeError(`no stable identity: ${JSON.stringify(alias)} holds no serial number`);
  return `serial\u0000${serial}`;
}
