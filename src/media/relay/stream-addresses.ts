import { isIP } from 'node:net';
import { bareHost, firstLanAddress, interfaceAddresses, isOwnHost } from '../../config/lan-address.js';
import { DeviceUnavailableError } from '../../domain/errors.js';
import type { StreamProfile, StreamProtocol } from '../../domain/types.js';
import type { TicketSigner } from '../ticket.js';

// The time-limited live-stream addresses GET /v1/devices/{id}/stream answers with, one function per
// protocol. Every one carries a stream ticket (src/media/ticket.ts) in its path, never an access
// token. RTSP goes to the relay's port at rtsp.public_host (or the first LAN address); the browser
// protocols (WebRTC's WHEP endpoint, LL-HLS) go to the API's own port and, when the request reached
// the API by one of this box's names or addresses, to that same host: a web app then stays on its
// own origin and its certificate.

export interface IssuedStreamAddress {
  url: string;
  /** ms since the epoch (whole seconds: tickets carry seconds). */
  expiresAt: number;
}

export interface StreamAddressIssuerOptions {
  tickets: TicketSigner;
  ticketTtlS: number;
  /** rtsp.public_host: the name put into addresses; null: this box's first LAN address. */
  publicHost: string | null;
  relayPort: number;
  apiPort: number;
  /** Other names this box answers to (api.public_host, …), besides its interface addresses. */
  ownNames?: readonly string[];
  /** This box's interface addresses (tests pass their own). */
  interfaceAddresses?: () => string[];
  now?: () => number;
}

export interface AddressRequest {
  deviceId: string;
  profile: StreamProfile;
  /** The host name or address the API request came in on (its Host header), if any. */
  requestHost?: string | null;
}

/** A host for a URL's authority: IPv6 literals in brackets. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

export class StreamAddressIssuer {
  private readonly now: () => number;
  private readonly listAddresses: () => string[];

  constructor(private readonly opts: StreamAddressIssuerOptions) {
    this.now = opts.now ?? Date.now;
    this.listAddresses = opts.interfaceAddresses ?? interfaceAddresses;
  }

  rtsp(req: AddressRequest): IssuedStreamAddress {
    return this.issue(req, (ticket) => `rtsp://${urlHost(this.defaultHost())}:${this.opts.relayPort}/live/${ticket}`);
  }

  /** The WHEP endpoint (RFC 9725) of the live view in a browser. */
  webrtc(req: AddressRequest): IssuedStreamAddress {
    return this.issue(
      req,
      (ticket) => `https://${urlHost(this.browserHost(req.requestHost))}:${this.opts.apiPort}/live/${ticket}/whep`,
    );
  }

  /** The LL-HLS playlist; the URIs inside it are relative and keep the ticket path. */
  hls(req: AddressRequest): IssuedStreamAddress {
    return this.issue(
      req,
      (ticket) =>
        `https://${urlHost(this.browserHost(req.requestHost))}:${this.opts.apiPort}/live/${ticket}/index.m3u8`,
    );
  }

  byProtocol(protocol: StreamProtocol, req: AddressRequest): IssuedStreamAddress {
    return protocol === 'webrtc' ? this.webrtc(req) : protocol === 'hls' ? this.hls(req) : this.rtsp(req);
  }

  /**
   * Whether a request's host is this box: one of its interface addresses, its host name (also with
   * `.local`, as mDNS announces it), `localhost`, or a configured public name. Anything else (a
   * name a proxy or an attacker put in the Host header) is never echoed into an address.
   */
  isOwnHost(host: string): boolean {
    return isOwnHost(
      host,
      [...(this.opts.publicHost ? [this.opts.publicHost] : []), ...(this.opts.ownNames ?? [])],
      this.listAddresses,
    );
  }

  private browserHost(requestHost: string | null | undefined): string {
    if (requestHost && this.isOwnHost(requestHost)) return bareHost(requestHost);
    return this.defaultHost();
  }

  private defaultHost(): string {
    return this.opts.publicHost ?? firstLanAddress() ?? '127.0.0.1';
  }

  private issue(req: AddressRequest, format: (ticket: string) => string): IssuedStreamAddress {
    const expiresAt = (Math.floor(this.now() / 1000) + this.opts.ticketTtlS) * 1000;
    const ticket = this.opts.tickets.issue({ deviceId: req.deviceId, profile: req.profile, expiresAt });
    return { url: format(ticket), expiresAt };
  }
}

/** Whether a camera can be streamed now. */
export interface StreamAvailability {
  isOnline(deviceId: string): boolean;
  hasStream(deviceId: string, profile: StreamProfile): boolean;
}

/**
 * Addresses only for a camera that is online and has the profile asked for: anything else is
 * DeviceUnavailableError (the API's 409), not an address that would lead nowhere.
 */
export function availableStreamAddresses(issuer: StreamAddressIssuer, availability: StreamAvailability) {
  return {
    issue: async (
      deviceId: string,
      profile: StreamProfile,
      options: { protocol?: StreamProtocol; requestHost?: string | null } = {},
    ): Promise<IssuedStreamAddress> => {
      if (!availability.isOnline(deviceId)) throw new DeviceUnavailableError(`device ${deviceId} is not online`);
      if (!availability.hasStream(deviceId, profile))
        throw new DeviceUnavailableError(`device ${deviceId} has no ${profile} stream`);
      return issuer.byProtocol(options.protocol ?? 'rtsp', {
        deviceId,
        profile,
        requestHost: options.requestHost ?? null,
      });
    },
  };
}

/**
 * The live addresses of config rtsp.* (ticket lifetime, public host) for the relay's and the
 * API's ports, for cameras that are online and have the profile asked for.
 */
export function createStreamAddresses(
  config: { rtsp: { ticket_ttl_s: number; public_host: string | null }; api: { public_host: string | null } },
  deps: {
    tickets: TicketSigner;
    relayPort: number;
    apiPort: number;
    devices: { getDevice(deviceId: string): { status: string } | null };
    cameras: { streamSource(deviceId: string, profile: StreamProfile): unknown };
  },
) {
  const issuer = new StreamAddressIssuer({
    tickets: deps.tickets,
    ticketTtlS: config.rtsp.ticket_ttl_s,
    publicHost: config.rtsp.public_host,
    relayPort: deps.relayPort,
    apiPort: deps.apiPort,
    ownNames: config.api.public_host ? [config.api.public_host] : [],
  });
  return availableStreamAddresses(issuer, {
    isOnline: (deviceId) => deps.devices.getDevice(deviceId)?.status === 'online',
    hasStream: (deviceId, profile) => deps.cameras.streamSource(deviceId, profile) !== null,
  });
}
