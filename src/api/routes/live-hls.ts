import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { parseBlockingRequest } from '../../media/hls/blocking-request.js';
import type { CameraMuxer } from '../../media/hls/camera-muxer.js';
import { HlsNotFoundError } from '../../media/hls/errors.js';
import { writeMediaPlaylist, writeMultivariantPlaylist } from '../../media/hls/playlist.js';
import type { HlsService } from '../../media/hls/service.js';
import { SESSION_ID, type HlsSession } from '../../media/hls/sessions.js';
import { startingClaims, type TicketSigner } from '../../media/ticket.js';
import { errorResponse, parserErrorResponses } from '../schemas.js';

// Low-Latency HLS for browsers and players (registered by routes/live.ts under /live), under the stream ticket of
// GET /v1/devices/{id}/stream?protocol=hls (docs/live.md):
//   /live/<ticket>/index.m3u8               starts a session (ticket unexpired): a multivariant
//                                           playlist naming <session>/index.m3u8
//   /live/<ticket>/<session>/index.m3u8     the media playlist (blocking reload: _HLS_msn, _HLS_part)
//   /live/<ticket>/<session>/init.mp4, seg<msn>.mp4, part<id>.mp4
// The session paths hold until the session ends (rtsp.max_session_s after its start, or idle),
// whatever the ticket's expiry. No bearer token: the ticket and the session id are the credentials.

export interface LiveHlsRoutesOptions {
  hls: HlsService;
  tickets: Pick<TicketSigner, 'verify'>;
  now?: () => number;
}

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';
const MEDIA_TYPE = 'video/mp4';
const SEGMENT_FILE = /^seg(\d{1,15})\.mp4$/;
const PART_FILE = /^part(\d{1,15})\.mp4$/;

const Ticket = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'The stream ticket of GET /v1/devices/{device_id}/stream (protocol=hls)',
});
const TicketParams = Type.Object({ ticket: Ticket });
const SessionParams = Type.Object({
  ticket: Ticket,
  session: Type.String({
    maxLength: 64,
    description: 'The session id the multivariant playlist named (22 base64url characters)',
  }),
  file: Type.String({
    maxLength: 64,
    description: '`index.m3u8`, `init.mp4`, `seg{msn}.mp4` or `part{id}.mp4`, as the playlists name them',
  }),
});
// Read by parseBlockingRequest, which says exactly what is wrong (400); the schema documents them
// and checks only that each comes once.
const BlockingQuery = Type.Object({
  _HLS_msn: Type.Optional(
    Type.String({
      maxLength: 32,
      description: 'Blocking reload of the media playlist: answer once segment _HLS_msn (a decimal integer) is in it',
    }),
  ),
  _HLS_part: Type.Optional(
    Type.String({ maxLength: 32, description: 'With _HLS_msn: once part _HLS_part of that segment is' }),
  ),
});

// The OpenAPI description (docs/live.md, "In the OpenAPI document"): bodies are playlists and fMP4, not JSON.
const PLAYLIST_BODY = { [PLAYLIST_TYPE]: { schema: { type: 'string' } } };
const notFound = errorResponse(
  'not_found: no such live stream, session or file (also for a ticket that is not valid, whichever check failed)',
);
const unavailable = errorResponse(
  'temporarily_unavailable or stream_unavailable: a bound is reached, the camera stream cannot be had, or nothing new came in time (Retry-After)',
);
const startDoc = {
  summary: "Start watching over LL-HLS: the multivariant playlist naming the session's media playlist",
  description:
    "A new session, or the ticket's session while it lasts (one per ticket). Every URI inside is relative and keeps the ticket in its path.",
  operationId: 'startHlsSession',
  tags: ['live'],
  params: TicketParams,
  response: {
    200: { description: 'The multivariant playlist: one variant, {session}/index.m3u8', content: PLAYLIST_BODY },
    400: errorResponse('invalid_request: the ticket is longer than a ticket can be'),
    401: errorResponse('expired_ticket: the stream address expired: get a new one'),
    404: notFound,
    ...parserErrorResponses,
    503: unavailable,
  },
};
const fileDoc = {
  summary: 'A file of an LL-HLS session: its media playlist (blocking reload), init segment, segments and parts',
  description:
    "Holds until the session ends (rtsp.max_session_s after its start, or idle), whatever the ticket's expiry. A blocking reload, or the part the preload hint names, is held until it can be answered (at most three target durations).",
  operationId: 'getHlsSessionFile',
  tags: ['live'],
  params: SessionParams,
  querystring: BlockingQuery,
  response: {
    200: {
      description: 'The media playlist (index.m3u8), or fMP4 media (init.mp4, seg{msn}.mp4, part{id}.mp4)',
      content: { ...PLAYLIST_BODY, [MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } } },
    },
    400: errorResponse('invalid_request: _HLS_msn / _HLS_part malformed, repeated, or beyond the live edge'),
    404: notFound,
    ...parserErrorResponses,
    503: unavailable,
  },
};

/** Aborts when the client closes the connection before the answer is sent (a blocked request then stops waiting). */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function media(reply: FastifyReply, bytes: Buffer, cacheSeconds: number): FastifyReply {
  return reply
    .header('content-type', MEDIA_TYPE)
    .header('cache-control', `private, max-age=${cacheSeconds}`)
    .send(bytes);
}

function playlist(reply: FastifyReply, text: string): FastifyReply {
  return reply.header('content-type', PLAYLIST_TYPE).header('cache-control', 'no-store').send(text);
}

export const liveHlsRoutes: FastifyPluginAsyncTypebox<LiveHlsRoutesOptions> = async (app, opts) => {
  const now = opts.now ?? Date.now;

  // Registered inside liveRoutes (prefix /live), whose @fastify/cors lets other origins read these.
  app.get('/:ticket/index.m3u8', { schema: startDoc, config: { public: true } }, async (req, reply) => {
    const claims = startingClaims(opts.tickets, req.params.ticket, now());
    if (!claims) return reply.callNotFound();
    const { session, muxer } = await opts.hls.start(
      req.params.ticket,
      claims.deviceId,
      claims.profile,
      clientGone(reply),
    );
    const text = writeMultivariantPlaylist([
      {
        uri: `${session.id}/index.m3u8`,
        bandwidth: muxer.bandwidth(),
        codecs: muxer.codecs,
        ...(muxer.resolution ? { resolution: muxer.resolution } : {}),
      },
    ]);
    return playlist(reply, text);
  });

  app.get('/:ticket/:session/:file', { schema: fileDoc, config: { public: true } }, async (req, reply) => {
    const { ticket, session: sessionId, file } = req.params;
    if (!SESSION_ID.test(sessionId)) throw new HlsNotFoundError('no such HLS session');
    const { session, muxer } = opts.hls.find(ticket, sessionId);
    if (file === 'index.m3u8') return playlist(reply, await mediaPlaylist(session, muxer, req.query, reply));
    if (file === 'init.mp4') {
      if (!muxer.init) throw new HlsNotFoundError('no init segment yet');
      return media(reply, muxer.init, 3600);
    }
    const segment = SEGMENT_FILE.exec(file);
    if (segment) {
      const parts = muxer.window.segment(Number(segment[1]));
      if (!parts) throw new HlsNotFoundError(`no segment ${segment[1]} in the live window`);
      return media(reply, Buffer.concat(parts.map((p) => p.bytes)), 60);
    }
    const part = PART_FILE.exec(file);
    if (part) {
      const id = Number(part[1]);
      // The preload hint names the part being made: its request waits for it (bounded).
      const found = await opts.hls.block(
        session,
        muxer,
        () => {
          const p = muxer.window.part(id);
          if (p === undefined) throw new HlsNotFoundError(`no part ${id} in the live window`);
          return p === 'wait' ? undefined : p;
        },
        clientGone(reply),
      );
      return media(reply, found.bytes, 60);
    }
    throw new HlsNotFoundError(`no such HLS file: ${file}`);
  });

  /** The media playlist now, or (blocking reload) once it holds the asked segment or part. */
  async function mediaPlaylist(
    session: HlsSession,
    muxer: CameraMuxer,
    query: Record<string, unknown>,
    reply: FastifyReply,
  ): Promise<string> {
    const blocking = parseBlockingRequest(query);
    if (blocking)
      await opts.hls.block(
        session,
        muxer,
        () => (muxer.window.readiness(blocking) === 'ready' ? true : undefined),
        clientGone(reply),
      );
    return writeMediaPlaylist(muxer.window.playlist());
  }
};
