import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { StreamAddressIssuer } from '../../../src/media/relay/stream-addresses.js';
import { TicketSigner } from '../../../src/media/ticket.js';

// The three kinds of live-stream address: where each points, the ticket inside, and which request
// hosts are echoed (this box's) or replaced (anything else in a Host header).

const tickets = new TicketSigner(Buffer.alloc(32, 7));
const NOW = 1_764_000_000_500;

function issuer(publicHost: string | null = '192.0.2.10') {
  return new StreamAddressIssuer({
    tickets,
    ticketTtlS: 300,
    publicHost,
    relayPort: 8554,
    apiPort: 8443,
    ownNames: ['gw.example.lan'],
    interfaceAddresses: () => ['127.0.0.1', '::1', '192.0.2.10', 'fe80::1'],
    now: () => NOW,
  });
}

const TICKET = '([A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22})';

function ticketOf(url: string, pattern: RegExp): string {
  const m = pattern.exec(url);
  if (!m?.[1]) throw new Error(`${url} does not match ${pattern}`);
  return m[1];
}

describe('stream addresses', () => {
  it('rtsp: the relay port at rtsp.public_host, whatever host the request came on', () => {
    const a = issuer().rtsp({ deviceId: 'cam-1', profile: 'sub', requestHost: '127.0.0.1' });
    const ticket = ticketOf(a.url, new RegExp(`^rtsp://192\\.0\\.2\\.10:8554/live/${TICKET}$`));
    expect(tickets.verify(ticket, NOW)).toEqual({ deviceId: 'cam-1', profile: 'sub', expiresAt: a.expiresAt });
    // Whole seconds: a ticket carries seconds.
    expect(a.expiresAt).toBe((Math.floor(NOW / 1000) + 300) * 1000);
  });

  it('webrtc: the WHEP endpoint on the API port, at the host the request reached when it is this box', () => {
    const a = issuer().webrtc({ deviceId: 'cam-1', profile: 'main', requestHost: '127.0.0.1' });
    const ticket = ticketOf(a.url, new RegExp(`^https://127\\.0\\.0\\.1:8443/live/${TICKET}/whep$`));
    expect(tickets.verify(ticket, NOW).profile).toBe('main');
    expect(issuer().webrtc({ deviceId: 'cam-1', profile: 'main', requestHost: 'GW.example.lan' }).url).toMatch(
      /^https:\/\/gw\.example\.lan:8443\//,
    );
    expect(issuer().webrtc({ deviceId: 'cam-1', profile: 'main', requestHost: '[::1]' }).url).toMatch(
      /^https:\/\/\[::1\]:8443\//,
    );
    expect(issuer().webrtc({ deviceId: 'cam-1', profile: 'main', requestHost: `${os.hostname()}.local` }).url).toMatch(
      new RegExp(`^https://${os.hostname().toLowerCase().replace(/\./g, '\\.')}\\.local:8443/`),
    );
  });

  it('hls: the playlist on the API port, same host rule', () => {
    const a = issuer().hls({ deviceId: 'cam-2', profile: 'sub', requestHost: '192.0.2.10' });
    const ticket = ticketOf(a.url, new RegExp(`^https://192\\.0\\.2\\.10:8443/live/${TICKET}/index\\.m3u8$`));
    expect(tickets.verify(ticket, NOW)).toMatchObject({ deviceId: 'cam-2', profile: 'sub' });
  });

  it('a Host that is not this box (a proxy, a forged header) is never echoed: rtsp.public_host instead', () => {
    for (const host of ['evil.example', '203.0.113.9', '', 'gw.example.lan.evil', '127.0.0.1.nip.io']) {
      expect(issuer().webrtc({ deviceId: 'cam-1', profile: 'main', requestHost: host }).url).toMatch(
        /^https:\/\/192\.0\.2\.10:8443\//,
      );
      expect(issuer().hls({ deviceId: 'cam-1', profile: 'main', requestHost: host }).url).toMatch(
        /^https:\/\/192\.0\.2\.10:8443\//,
      );
    }
    expect(issuer().webrtc({ deviceId: 'cam-1', profile: 'main', requestHost: null }).url).toMatch(
      /^https:\/\/192\.0\.2\.10:8443\//,
    );
  });

  it('without rtsp.public_host: the first LAN address, else loopback', () => {
    const url = issuer(null).webrtc({ deviceId: 'cam-1', profile: 'main', requestHost: 'evil.example' }).url;
    const lan =
      Object.values(os.networkInterfaces())
        .flatMap((l) => l ?? [])
        .find((a) => a.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';
    expect(url.startsWith(`https://${lan}:8443/live/`)).toBe(true);
  });

  it('byProtocol picks the function of each protocol', () => {
    const i = issuer();
    const req = { deviceId: 'cam-1', profile: 'main' as const, requestHost: '127.0.0.1' };
    expect(i.byProtocol('rtsp', req).url).toMatch(/^rtsp:\/\//);
    expect(i.byProtocol('webrtc', req).url).toMatch(/\/whep$/);
    expect(i.byProtocol('hls', req).url).toMatch(/\/index\.m3u8$/);
  });
});
