// The gateway's own web app as a client of the local authorization server (docs/oauth.md): a
// public client registered by the gateway itself (store migration 9), code + PKCE S256, no consent
// page, and one redirect URI per address of this box: https://{host}/signin/callback, where {host}
// is the Host the browser used when it is one of this box's names or addresses on the API's port.

export const FIRST_PARTY_CLIENT_ID = 'gateway-web';
export const FIRST_PARTY_CALLBACK_PATH = '/signin/callback';

export function isFirstPartyClient(clientId: string): boolean {
  return clientId === FIRST_PARTY_CLIENT_ID;
}

// A Host header: a name or IPv4 address, or a bracketed IPv6 literal, and an optional port.
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::([0-9]{1,5}))?$/;

export interface FirstPartyHosts {
  /** The port the API listens on (the browser's Host must name it, or omit it for 443). */
  apiPort: number;
  /** Whether a host name or address (IPv6 without brackets or with) is one of this box's. */
  isOwnHost: (host: string) => boolean;
}

/**
 * The origin (`https://host[:port]`) a request reached this gateway by, from its Host header, or
 * null when that Host is not this box on the API's port (a name a proxy or an attacker chose:
 * nothing is ever sent there, nor named in an answer).
 */
export function ownOrigin(hostHeader: string | undefined, hosts: FirstPartyHosts): string | null {
  if (hostHeader === undefined) return null;
  const m = HOST_HEADER.exec(hostHeader);
  if (!m) return null;
  const name = (m[1] as string).toLowerCase();
  const port = m[2] === undefined ? 443 : Number(m[2]);
  if (port !== hosts.apiPort || !hosts.isOwnHost(name)) return null;
  try {
    return new URL(`https://${name}:${port}`).origin;
  } catch {
    return null;
  }
}

/** The one redirect URI gateway-web may use on a request that came with this Host header, or null (see ownOrigin). */
export function firstPartyRedirectUri(hostHeader: string | undefined, hosts: FirstPartyHosts): string | null {
  const origin = ownOrigin(hostHeader, hosts);
  return origin === null ? null : `${origin}${FIRST_PARTY_CALLBACK_PATH}`;
}
