import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errorResponse, errorResponses, FileBody, Id, parserErrorResponses } from '../../schemas.js';
import { sendFootageMp4 } from './download.js';
import type { FootageRoutesOptions } from './options.js';
import { claimsOf, mintFootageTicket, privateHeaders, TicketedAddress, TicketParam, ticketErrors } from './ticketed.js';
import { footageWindow, noFootageIn, requireDevice, requireFootage, WindowQuery } from './window.js';

// A download of a window of footage that a browser's download link can fetch (docs/api.md,
// "Continuous footage"): GET /v1/devices/{device_id}/footage/export mints a short-lived
// download_url for recordings:write; the MP4 itself is served under /v1/footage/export/{ticket},
// the ticket being the credential, as the bearer's /footage/download serves it. The browser saves
// it as it comes, so an hour of footage never sits in the page's memory.

export const footageExportUrlRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (
  app,
  { store, footage },
) => {
  app.get(
    '/v1/devices/:device_id/footage/export',
    {
      config: { scope: 'recordings:write' },
      schema: {
        operationId: 'exportDeviceFootage',
        summary: 'A download address for a window of continuous footage',
        description:
          'A short-lived download_url that a download link fetches without the bearer token: the same MP4 as /footage/download. At most 24 hours.',
        tags: ['footage'],
        params: Type.Object({ device_id: Id }),
        querystring: WindowQuery,
        response: {
          200: TicketedAddress('download_url', 'Path of the MP4 on this gateway, with its ticket', 'FootageExport'),
          ...errorResponses,
          404: errorResponse('not_found: no such device, no footage in the window, or continuous recording is off'),
        },
      },
    },
    async (req) => {
      const { startMs, endMs } = footageWindow(req.query);
      const access = requireFootage(footage);
      const device = requireDevice(store, req.params.device_id);
      if (store.footageIn(device.id, startMs, endMs).length === 0) throw noFootageIn(device.id, startMs, endMs);
      const { ticket, expiresAt } = mintFootageTicket(access, { deviceId: device.id, startMs, endMs, download: true });
      return { download_url: `/v1/footage/export/${ticket}`, expires_at: expiresAt };
    },
  );
};

export const footageExportFileRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (
  app,
  { store, footage },
) => {
  // GET and HEAD declared together: Fastify's automatic HEAD route would read the whole export to discard it.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/footage/export/:ticket',
    config: { public: true },
    onRequest: privateHeaders,
    schema: {
      operationId: 'footageExportFile',
      summary: 'The MP4 of a download_url',
      tags: ['footage'],
      params: Type.Object({ ticket: TicketParam }),
      response: {
        200: FileBody('video/mp4', 'The MP4'),
        206: FileBody('video/mp4', 'The requested byte range'),
        ...ticketErrors,
        404: errorResponse('not_found: the footage or the device is gone since the ticket was minted'),
        416: errorResponse('range_not_satisfiable: the range starts past the end (Content-Range: bytes */size)'),
        ...parserErrorResponses,
      },
    },
    handler: async (req, reply) => {
      const c = claimsOf(app, footage, req.params.ticket, req.url, 'download');
      const device = requireDevice(store, c.deviceId);
      return sendFootageMp4(req, reply, requireFootage(footage).root, store, device, c);
    },
  });
};
