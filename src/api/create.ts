import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/schema.js';
import type { HlsService } from '../media/hls/service.js';
import type { TicketSigner } from '../media/ticket.js';
import type { WebRtcSessions } from '../media/webrtc/sessions.js';
import { buildApiServer, type ApiServerOptions } from './server.js';

/** The parts the API answers from, as main.ts has made them (config api.* is read here). */
export type ApiParts = Omit<ApiServerOptions, 'bodyLimit' | 'connections' | 'live'> & {
  /** Live view: WebRTC is offered only when config webrtc.enabled. */
  live: { tickets: TicketSigner; hls: HlsService; webrtc: WebRtcSessions };
  /** The API's port, reserved at start (its release lets the server bind it). */
  port: { port: number; release(): Promise<void> };
};

/**
 * The HTTPS API (config api.*, the live view's rtsp.max_session_s and webrtc.enabled) on its
 * reserved port; resolves once it listens, with its https://host:port. Stopped by `defer` (requests
 * in flight finish first).
 */
export async function createApi(
  config: Config,
  parts: ApiParts,
  defer: (undo: () => unknown) => void,
): Promise<{ api: FastifyInstance; apiUrl: string }> {
  const { port, live, ...rest } = parts;
  const api = await buildApiServer({
    ...rest,
    bodyLimit: config.api.body_limit_bytes,
    connections: {
      maxPerAddress: config.api.max_connections_per_address,
      requestTimeoutMs: config.api.request_timeout_s * 1000,
      idleTimeoutMs: config.api.idle_timeout_s * 1000,
    },
    live: {
      tickets: live.tickets,
      hls: live.hls,
      maxSessionS: config.rtsp.max_session_s,
      ...(config.webrtc.enabled ? { webrtc: live.webrtc } : {}),
    },
  });
  defer(() => api.close());
  await port.release();
  await api.listen({ host: config.api.host, port: port.port });
  return { api, apiUrl: urlOf(api.server.address() as AddressInfo) };
}

/** https://host:port of a listening address (IPv6 in brackets). */
function urlOf(addr: AddressInfo): string {
  return `https://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}
