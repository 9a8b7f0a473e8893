import { isIP } from 'node:net';

// A listen address written as host:port (metrics.listen): an IPv4 address, [IPv6] in brackets, or
// localhost, then a port (0: any free one, as tests use). Names other than localhost are refused:
// what they resolve to may change, and a listener must know where it is.

export interface ListenAddress {
  host: string;
  port: number;
}

export function parseListenAddress(text: string): ListenAddress {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || host === undefined || port > 65535)
    throw new Error('must be host:port, such as 127.0.0.1:9464 or [::1]:9464');
  if (m[1] !== undefined ? isIP(host) !== 6 : host !== 'localhost' && isIP(host) !== 4) {
    throw new Error(`host must be an IPv4 address, [IPv6 address] or localhost (got ${JSON.stringify(host)})`);
  }
  return { host, port };
}
