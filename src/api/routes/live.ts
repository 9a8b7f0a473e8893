import cors from '@fastify/cors';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { SDP_MAX_BYTES } from '../../media/sdp.js';
import { startingClaims, type TicketSigner } from '../../media/ticket.js';
import { NotSdpError, SdpTooLargeError } from '../../media/webrtc/errors.js';
import type { WebRtcSessions } from '../../media/webrtc/sessions.js';
import type { HlsService } from '../../media/hls/service.js';
import { ApiError } from '../errors.js';
import { liveHlsRoutes } from './live-hls.js';
import { errorResponse, NoBody, parserErrorResponses } from '../schemas.js';

// Browser live view under /live/{ticket}/…: the WHEP endpoint (RFC 9725) of WebRTC sessions.
// No bearer token: the stream ticket in the path is the credential (src/media/ticket.ts), as in
// the relay's rtsp:// addresses. A ticket starts sessions until its expires_at (then 401); a
// tampered, malformed or unknown one gets the same 404 as a path that does not exist. A started
// session goes on until DELETE, its peer leaves, or rtsp.max_session_s.
//
// Registered with prefix /live, as one scope for WHEP and LL-HLS (routes/live-hls.ts): CORS
// (@fastify/cors) applies to /live/* only, lets any origin read the answers (no cookies are
// involved: the ticket in the path is the credential), answers the preflights of WHEP's POST,
// PATCH and DELETE and exposes Location.

export interface LiveRoutesOptions {
  tickets: TicketSigner;
  /** WebRTC sessions; absent (webrtc.enabled false): no WHEP endpoint. */
  webrtc?: WebRtcSessions;
  /** LL-HLS; absent: no playlists. */
  hls?: HlsService;
  /** rtsp.max_session_s: the longest a started session lasts. */
  maxSessionS: number;
  now?: () => number;
}

/** Reads an application/sdp body as text, up to SDP_MAX_BYTES (more: 413 without reading on). */
function readSdpBody(
  request: FastifyRequest,
  payload: IncomingMessage,
  done: (err: Error | null, body?: string) => void,
): void {
  const declared = Number(request.headers['content-length'] ?? NaN);
  if (declared > SDP_MAX_BYTES) return done(new SdpTooLargeError(SDP_MAX_BYTES));
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: Error | null, body?: string) => {
    if (finished) return;
    finished = true;
    payload.removeAllListeners('data');
    done(err, body);
  };
  payload.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > SDP_MAX_BYTES) return finish(new SdpTooLargeError(SDP_MAX_BYTES));
    chunks.push(chunk);
  });
  payload.once('end', () => finish(null, Buffer.concat(chunks).toString('utf8')));
  payload.once('error', (err) => finish(err));
}

export const liveRoutes: FastifyPluginAsync<LiveRoutesOptions> = async (app, opts) => {
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Content-Type', 'If-Match'],
    exposedHeaders: ['Location', 'Allow'],
    // A plain OPTIONS (no preflight) is answered too: WHEP clients may send one.
    strictPreflight: false,
    maxAge: 600,
  });
  const now = opts.now ?? Date.now;
  const { webrtc, hls } = opts;
  if (webrtc) await app.register(whepRoutes, { tickets: opts.tickets, webrtc, maxSessionS: opts.maxSessionS, now });
  if (hls) await app.register(liveHlsRoutes, { hls, tickets: opts.tickets, now });
};

/** The WHEP endpoint: its own scope, for its SDP body parsers. */
const whepRoutes: FastifyPluginAsync<{
  tickets: TicketSigner;
  webrtc: WebRtcSessions;
  maxSessionS: number;
  now: () => number;
}> = async (app, opts) => {
  const now = opts.now;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/sdp', (request, payload, done) => readSdpBody(request, payload, done));
  // Trickle ICE fragments (PATCH): read, bounded, and answered 405.
  app.addContentTypeParser('application/trickle-ice-sdpfrag', (request, payload, done) =>
    readSdpBody(request, payload, done),
  );
  app.addContentTypeParser('*', (_request, _payload, done) => done(new NotSdpError()));

  const notFound = (reply: FastifyReply) => reply.callNotFound();

  // The OpenAPI description of the WHEP operations (RFC 9725); bodies are SDP, not JSON.
  const sdpBody = (description: string) => ({
    description,
    content: { 'application/sdp': { schema: { type: 'string' } } },
  });
  const unknownSession = {
    404: errorResponse(
      'not_found: no such live stream or session (also for a ticket that is not valid, whichever check failed)',
    ),
  };
  const whepDoc = {
    post: {
      summary: 'Start a WebRTC viewer session (WHEP): the SDP offer in, the answer out',
      operationId: 'startWhepSession',
      tags: ['live'],
      response: {
        201: sdpBody('The SDP answer; Location names the session'),
        400: errorResponse(
          'invalid_offer: the offer cannot be used; unsupported_codec: no codec in common (the camera codecs named)',
        ),
        401: errorResponse('expired_ticket: the stream address expired: get a new one'),
        ...unknownSession,
        413: errorResponse('payload_too_large: the offer is larger than allowed'),
        415: errorResponse('unsupported_media_type: the body is not application/sdp'),
        429: errorResponse('too_many_requests: too many sessions from this address (Retry-After)'),
        ...parserErrorResponses,
        503: errorResponse(
          'temporarily_unavailable or stream_unavailable: no room for a session, or the camera stream cannot be had (Retry-After)',
        ),
      },
    },
    delete: {
      summary: 'End a WebRTC viewer session (WHEP)',
      operationId: 'endWhepSession',
      tags: ['live'],
      response: { 200: NoBody('The session ended'), ...unknownSession, ...parserErrorResponses },
    },
    patch: {
      summary: 'Trickle ICE or ICE restart (WHEP): not taken, every candidate is in the answer',
      operationId: 'patchWhepSession',
      tags: ['live'],
      // Never a 2xx: PATCH is refused (RFC 9725 4.3.1 allows it); `default` stands for what else may come.
      response: {
        405: errorResponse('method_not_allowed: no trickle ICE or ICE restart (Allow says what is)'),
        ...unknownSession,
        ...parserErrorResponses,
        default: errorResponse('server_error'),
      },
    },
  };

  app.post<{ Params: { ticket: string } }>(
    '/:ticket/whep',
    { schema: whepDoc.post, config: { public: true } },
    async (request, reply) => {
      const claims = startingClaims(opts.tickets, request.params.ticket, now());
      if (!claims) return notFound(reply);
      if (typeof request.body !== 'string') throw new NotSdpError();
      const { id, answer } = await opts.webrtc.start({
        deviceId: claims.deviceId,
        profile: claims.profile,
        ticket: request.params.ticket,
        offerSdp: request.body,
        address: request.ip,
        endsAt: now() + opts.maxSessionS * 1000,
        // When Fastify began on the request, before its onRequest hooks: the session's timeline starts there.
        receivedAt: performance.now() - reply.elapsedTime,
      });
      return reply
        .code(201)
        .header('content-type', 'application/sdp')
        .header('location', `/live/${request.params.ticket}/whep/${id}`)
        .send(answer);
    },
  );

  app.delete<{ Params: { ticket: string; session: string } }>(
    '/:ticket/whep/:session',
    { schema: whepDoc.delete, config: { public: true } },
    async (request, reply) => {
      if (!opts.webrtc.end(request.params.session, request.params.ticket)) return notFound(reply);
      return reply.code(200).send();
    },
  );

  // No trickle ICE and no ICE restart: our answer carries every candidate (RFC 9725 4.3.1: 405).
  app.patch<{ Params: { ticket: string; session: string } }>(
    '/:ticket/whep/:session',
    { schema: whepDoc.patch, config: { public: true } },
    async (request, reply) => {
      if (!opts.webrtc.has(request.params.session, request.params.ticket)) return notFound(reply);
      throw new ApiError(
        'method_not_allowed',
        'this WHEP endpoint takes no trickle ICE or ICE restart: the answer has every candidate',
        { allow: 'DELETE, OPTIONS' },
      );
    },
  );
};
