import send from '@fastify/send';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import path from 'node:path';
import Type from 'typebox';
import { NotFoundError } from '../../../domain/errors.js';
import { vodPlaylist } from '../../../media/footage/vod-playlist.js';
import { ApiError } from '../../errors.js';
import { errorResponse, errorResponses, FileBody, Id, parserErrorResponses } from '../../schemas.js';
import type { FootageRoutesOptions } from './options.js';
import {
  claimsOf,
  mintFootageTicket,
  PRIVATE_HEADERS,
  privateHeaders,
  TicketedAddress,
  TicketParam,
  ticketErrors,
} from './ticketed.js';
import { footageWindow, noFootageIn, requireDevice, requireFootage, WindowQuery } from './window.js';

// Playing a window of continuous footage (docs/api.md, "Continuous footage"):
// GET /v1/devices/{device_id}/footage/playback mints a short-lived ticketed playback_url, an HLS VOD
// playlist (vod-playlist.ts) for hls.js or a native HLS player; the playlist and the footage files
// it names are served under /v1/footage/play/{ticket}/, the ticket being the credential (a media
// element sends no Authorization header), for that device and window only.

/** GET /v1/devices/{device_id}/footage/playback: a ticketed playback address of a window. */
export const footagePlaybackRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (
  app,
  { store, footage },
) => {
  app.get(
    '/v1/devices/:device_id/footage/playback',
    {
      config: { scope: 'recordings:read' },
      schema: {
        operationId: 'playDeviceFootage',
        summary: 'A playback address for a window of continuous footage',
        description:
          'A short-lived playback_url (an HLS playlist, for hls.js or a native HLS player) that plays the window from start, across file boundaries; gaps are skipped, ' +
          'each stretch after one dated by its EXT-X-PROGRAM-DATE-TIME. At most 24 hours.',
        tags: ['footage'],
        params: Type.Object({ device_id: Id }),
        querystring: WindowQuery,
        response: {
          200: TicketedAddress(
            'playback_url',
            'Path of the playlist on this gateway, with its ticket',
            'FootagePlayback',
          ),
          ...errorResponses,
          404: errorResponse('not_found: no such device, no footage in the window, or continuous recording is off'),
        },
      },
    },
    async (req) => {
      const { startMs, endMs } = footageWindow(req.query);
      const access = requireFootage(footage);
      const device = requireDevice(store, req.params.device_id);
      const files = store.footageIn(device.id, startMs, endMs);
      if (!vodPlaylist(files, startMs, endMs, () => '')) throw noFootageIn(device.id, startMs, endMs);
      const { ticket, expiresAt } = mintFootageTicket(access, { deviceId: device.id, startMs, endMs });
      return { playback_url: `/v1/footage/play/${ticket}/index.m3u8`, expires_at: expiresAt };
    },
  );
};

/** GET /v1/footage/play/{ticket}/index.m3u8: the playlist of the ticket's window. */
export const footagePlaylistRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (
  app,
  { store, footage },
) => {
  app.get(
    '/v1/footage/play/:ticket/index.m3u8',
    {
      config: { public: true },
      onRequest: privateHeaders,
      schema: {
        operationId: 'footagePlaylist',
        summary: 'The HLS playlist of a playback_url',
        tags: ['footage'],
        params: Type.Object({ ticket: TicketParam }),
        response: {
          200: {
            description: 'HLS VOD media playlist',
            content: { 'application/vnd.apple.mpegurl': { schema: { type: 'string' } } },
          },
          ...ticketErrors,
          404: errorResponse('not_found: the footage is gone since the ticket was minted'),
          ...parserErrorResponses,
        },
      },
    },
    async (req, reply) => {
      const c = claimsOf(app, footage, req.params.ticket, req.url);
      const playlist = vodPlaylist(
        store.footageIn(c.deviceId, c.startMs, c.endMs),
        c.startMs,
        c.endMs,
        (f) => `file/${f.id}.mp4`,
      );
      if (!playlist) throw new NotFoundError('footage', `${c.deviceId} in the ticket's window`);
      return reply.type('application/vnd.apple.mpegurl').send(playlist.text);
    },
  );
};

/** GET and HEAD /v1/footage/play/{ticket}/file/{id}.mp4: a file of the ticket's device and window, by byte ranges. */
export const footageFileRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (app, { store, footage }) => {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/footage/play/:ticket/file/:file_id.mp4',
    config: { public: true },
    onRequest: privateHeaders,
    schema: {
      operationId: 'footageFile',
      summary: 'A footage file of a playback_url (byte ranges, as its playlist names them)',
      tags: ['footage'],
      params: Type.Object({ ticket: TicketParam, file_id: Type.Integer({ minimum: 1 }) }),
      response: {
        200: FileBody('video/mp4', 'The file'),
        206: FileBody('video/mp4', 'The requested byte range'),
        ...ticketErrors,
        404: errorResponse("not_found: no such file in the ticket's window (or it is gone)"),
        416: errorResponse('range_not_satisfiable: the range starts past the end'),
        ...parserErrorResponses,
      },
    },
    handler: async (req, reply) => {
      const c = claimsOf(app, footage, req.params.ticket, req.url);
      const root = path.resolve(requireFootage(footage).root);
      const file = store.footageFile(req.params.file_id);
      // Only a file of the ticket's device and window: the ticket opens nothing else.
      if (!file || file.deviceId !== c.deviceId || file.endMs <= c.startMs || file.startMs >= c.endMs)
        throw new NotFoundError('footage', String(req.params.file_id));
      const sent = await send(req.raw, encodeURI(`/${file.name}`), {
        root,
        index: false,
        dotfiles: 'deny',
        cacheControl: false,
        etag: false,
        lastModified: false,
        highWaterMark: 256 * 1024,
      });
      if (sent.type === 'file') {
        reply.code(sent.statusCode).headers(sent.headers).headers(PRIVATE_HEADERS).header('content-type', 'video/mp4');
        if (req.method === 'HEAD') {
          sent.stream.destroy();
          return reply.send(undefined);
        }
        return reply.send(sent.stream);
      }
      sent.stream.destroy();
      if (sent.statusCode === 416)
        throw new ApiError('range_not_satisfiable', 'the range starts past the end of the file', {
          'content-range': sent.headers['Content-Range'] ?? 'bytes */0',
        });
      throw new NotFoundError('footage', String(req.params.file_id));
    },
  });
};
