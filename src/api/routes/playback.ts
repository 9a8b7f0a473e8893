import send from '@fastify/send';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import path from 'node:path';
import Type from 'typebox';
import { NotFoundError } from '../../domain/errors.js';
import type { MintPlayback } from '../../domain/present.js';
import type { Recording } from '../../domain/types.js';
import type { TicketSigner } from '../../media/ticket.js';
import { TicketError } from '../../media/errors.js';
import { storedFile } from '../clip-files.js';
import { ApiError } from '../errors.js';
import { redactUrl } from '../log-url.js';
import { errorResponse, FileBody, Id, NoBody, parserErrorResponses } from '../schemas.js';

// A recording's playback_url: GET /v1/recordings/{id}/play?ticket=…, the clip for a <video>
// element, which cannot send an Authorization header. The ticket (src/media/ticket.ts, kind
// playback) is the credential: minted with the recording object for a token with
// recordings:read, it plays that one recording until it expires, and opens nothing else; an
// access token never goes into a URL (RFC 6750 §2.3). docs/api.md, "Playing a clip".
//
// Ranges, conditional requests and HEAD are @fastify/send's (the file server under
// @fastify/static): one byte range → 206; several ranges, or a unit other than bytes → the whole
// file with 200 (RFC 9110 §14.2 lets a server ignore Range; a media element asks for one range);
// a bytes range past the end, or one that cannot be read (bytes=abc, bytes=9-3) → 416.

/** What the playback route reads of the store: the recording a ticket names, for its file. */
export interface PlaybackStore {
  getRecording(id: string): Recording | null;
}

export interface PlaybackRoutesOptions {
  store: PlaybackStore;
  /** Directory the recordings' file names are relative to. */
  storageDir: string;
  tickets: Pick<TicketSigner, 'verifyPlayback'>;
  now?: () => number;
}

/** Tickets kept per expiry step: more than a few pages of a list (200 each) apps page through. */
const MAX_CACHED_TICKETS = 4096;

/**
 * Mints playback tickets accepted for at least `ttlS` seconds, their expiry rounded up to a whole
 * `stepS`: every request within one step gets the same ticket for a recording, so a polled list
 * costs one HMAC per recording and step, not one per recording and request (an HMAC costs more
 * than presenting the recording does).
 */
export function playbackMinter(
  tickets: Pick<TicketSigner, 'issuePlayback'>,
  ttlS: number,
  now: () => number = Date.now,
  stepS = 60,
): MintPlayback {
  const stepMs = stepS * 1000;
  let cachedFor = 0;
  let cache = new Map<string, string>();
  return (recordingId) => {
    const expiresAt = Math.ceil((now() + ttlS * 1000) / stepMs) * stepMs;
    if (expiresAt !== cachedFor) {
      cachedFor = expiresAt;
      cache = new Map();
    }
    let ticket = cache.get(recordingId);
    if (ticket === undefined) {
      ticket = tickets.issuePlayback({ recordingId, expiresAt });
      if (cache.size < MAX_CACHED_TICKETS) cache.set(recordingId, ticket);
    }
    return { ticket, expiresAt };
  };
}

const TicketQuery = Type.Object(
  {
    ticket: Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        "The ticket in the recording's playback_url (the whole URL is handed out as it is; no access token here)",
    }),
  },
  { additionalProperties: false },
);

/** Every answer of this route, errors too: the URL holds a credential, so nothing keeps it or passes it on. */
const PRIVATE_HEADERS = {
  'cache-control': 'private, no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export const playbackRoutes: FastifyPluginAsyncTypebox<PlaybackRoutesOptions> = async (app, opts) => {
  const now = opts.now ?? Date.now;
  const root = path.resolve(opts.storageDir);

  // GET and HEAD declared together: Fastify's automatic HEAD route would read the whole file to discard it.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/recordings/:recording_id/play',
    config: { public: true },
    schema: {
      operationId: 'playRecording',
      summary: 'Play a recording in a <video> element (its playback_url)',
      description:
        "The clip as MP4 for a media element, which sends no Authorization header: the credential is the short-lived ticket of the recording's playback_url, for that recording only. " +
        'Supports HEAD, a single byte Range (206; several ranges are answered with the whole file; a range past the end or unreadable: 416), If-None-Match / If-Modified-Since (304) and If-Range. Never cached, sent with Referrer-Policy: no-referrer.',
      tags: ['recordings'],
      params: Type.Object({ recording_id: Id }),
      querystring: TicketQuery,
      response: {
        200: FileBody('video/mp4', 'The MP4 file'),
        206: FileBody('video/mp4', 'The requested byte range'),
        304: NoBody('Not modified (If-None-Match, If-Modified-Since)'),
        400: errorResponse(
          'invalid_request: no ticket, the ticket given twice, another query parameter, or a malformed recording id',
        ),
        401: errorResponse('expired_ticket: the playback address has expired: get a new one with the recording'),
        403: errorResponse(
          'invalid_ticket: the ticket is altered, malformed, of another key, for another recording, or a stream ticket (error_description says which)',
        ),
        404: errorResponse('not_found: the recording (or its file) is gone since the ticket was minted'),
        412: errorResponse('precondition_failed: If-Match or If-Unmodified-Since does not hold'),
        416: errorResponse(
          'range_not_satisfiable: the bytes range starts past the end or cannot be read (Content-Range: bytes */size)',
        ),
        ...parserErrorResponses,
      },
    },
    onRequest: (_req, reply, done) => {
      reply.headers(PRIVATE_HEADERS);
      done();
    },
    handler: async (req, reply) => {
      const id = req.params.recording_id;
      try {
        opts.tickets.verifyPlayback(req.query.ticket, now(), id);
      } catch (err) {
        if (err instanceof TicketError)
          req.log.debug({ url: redactUrl(req.url), reason: err.reason }, 'playback ticket refused');
        throw err;
      }
      // After the ticket: only its holder learns whether the recording is still there.
      const rec = opts.store.getRecording(id);
      const file = rec && storedFile(root, rec.fileName);
      if (!file) throw new NotFoundError('recording', id);

      const sent = await send(req.raw, encodeURI(`/${path.relative(root, file)}`), {
        root,
        index: false,
        dotfiles: 'deny',
        cacheControl: false,
        highWaterMark: 256 * 1024,
      });
      if (sent.type === 'file') {
        // send's headers (Content-Length, Content-Range, ETag, Last-Modified, Accept-Ranges), then ours again.
        reply.code(sent.statusCode).headers(sent.headers).headers(PRIVATE_HEADERS);
        if (sent.statusCode !== 304) reply.header('content-type', 'video/mp4');
        if (req.method === 'HEAD' || sent.statusCode === 304) {
          sent.stream.destroy();
          return reply.send(undefined);
        }
        return reply.send(sent.stream);
      }
      sent.stream.destroy();
      if (sent.type === 'directory' || sent.statusCode === 404) throw new NotFoundError('recording', id);
      if (sent.statusCode === 416) {
        const contentRange = sent.headers['Content-Range'] ?? 'bytes */0';
        const size = contentRange.slice('bytes */'.length);
        throw new ApiError(
          'range_not_satisfiable',
          `no byte range of the file (${size} bytes) can be read from Range: ask for bytes=first-last, bytes=first- or bytes=-suffix`,
          {
            'content-range': contentRange,
          },
        );
      }
      if (sent.statusCode === 412)
        throw new ApiError('precondition_failed', 'If-Match or If-Unmodified-Since does not hold for the file');
      throw sent.metadata.error;
    },
  });
};
