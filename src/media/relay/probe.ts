import { BlockList, isIP } from 'node:net';
import type { BaseLogger } from 'pino';
import { isOwnHost } from '../../config/lan-address.js';
import type { DeviceStatus } from '../../domain/types.js';
import { mediaCodecs } from '../sdp.js';
import { UpstreamError } from './errors.js';
import { UpstreamSession } from './upstream.js';

// What the gateway asks of a plain RTSP camera's stream before it lists the camera online, and
// which addresses such a camera may not have: the relay's own.

/**
 * Whether the relay could open the stream with this account now: `online` when the camera answers
 * DESCRIBE with an SDP holding video the relay takes (H.264 or H.265), `unauthorized` when it
 * refuses the account, `offline` otherwise; `reason` says why not, for the log. Never throws.
 */
export function probeCameraStream(deps: { logger: BaseLogger; timeoutMs?: number }) {
  return async (source: {
    url: string;
    username: string | null;
    password: string | null;
  }): Promise<{ status: DeviceStatus; reason: string | null }> => {
    try {
      const sdp = await UpstreamSession.describe({
        ...source,
        logger: deps.logger,
        ...(deps.timeoutMs !== undefined ? { timeoutMs: deps.timeoutMs } : {}),
      });
      const video = mediaCodecs(sdp).some(
        (c) => c.media === 'video' && (c.encoding === 'H264' || c.encoding === 'H265'),
      );
      return video
        ? { status: 'online', reason: null }
        : { status: 'offline', reason: 'the stream has no H.264 or H.265 video' };
    } catch (err) {
      const unauthorized = err instanceof UpstreamError && err.kind === 'unauthorized';
      return { status: unauthorized ? 'unauthorized' : 'offline', reason: (err as Error).message };
    }
  };
}

/** Addresses that reach this box whatever its interfaces: loopback, and "any", which connects locally. */
const LOCAL = new BlockList();
LOCAL.addSubnet('127.0.0.0', 8, 'ipv4');
LOCAL.addAddress('0.0.0.0', 'ipv4');
LOCAL.addAddress('::1', 'ipv6');
LOCAL.addAddress('::', 'ipv6');

/**
 * Whether host:port is the relay itself (rtsp.port on this box: a loopback address, one of its
 * interfaces' addresses, its host name, rtsp.host, rtsp.public_host or api.public_host). A camera
 * there would be the gateway reading its own relay, a loop. Names are compared as given, not
 * looked up in DNS.
 */
export function relayAddressCheck(
  config: { rtsp: { host: string; public_host: string | null }; api: { public_host: string | null } },
  relayPort: number,
  addresses?: () => string[],
): (host: string, port: number) => boolean {
  const names = [config.rtsp.host, config.rtsp.public_host, config.api.public_host].filter(
    (n): n is string => n !== null,
  );
  return (host, port) => {
    if (port !== relayPort) return false;
    const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const family = isIP(bare);
    if (family !== 0 && LOCAL.check(bare, family === 6 ? 'ipv6' : 'ipv4')) return true;
    return isOwnHost(bare, names, addresses);
  };
}
