import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { NotFoundError } from '../../../domain/errors.js';
import { DATE_FILTER_PATTERN } from '../../date-filter.js';
import { errorResponse, errorResponses, Id } from '../../schemas.js';
import type { FootageRoutesOptions } from './options.js';
import { footageWindow, requireDevice, requireFootage } from './window.js';

// GET /v1/devices/{device_id}/footage/frame: the picture of a moment of footage (the keyframe at or
// before it), what a timeline shows while it is scrubbed (media/footage/frames.ts).

const JpegBody = {
  description: 'The picture',
  content: { 'image/jpeg': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } },
};

export const footageFrameRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (app, { store, footage }) => {
  app.get(
    '/v1/devices/:device_id/footage/frame',
    {
      config: { scope: 'recordings:read' },
      schema: {
        operationId: 'getDeviceFootageFrame',
        summary: 'The picture of a moment of continuous footage (JPEG)',
        description:
          'The keyframe at or before `at`, as a JPEG `width` pixels wide (its height in proportion; absent: as recorded). Every moment of one group of pictures gives the same picture, ' +
          'made once and kept; X-Picture-Time says the moment it shows.',
        tags: ['footage'],
        params: Type.Object({ device_id: Id }),
        querystring: Type.Object(
          {
            at: Type.String({ pattern: DATE_FILTER_PATTERN, description: 'The moment: a date-time with offset' }),
            width: Type.Optional(
              Type.Integer({ minimum: 16, maximum: 3840, description: 'Width of the picture in pixels' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: JpegBody,
          ...errorResponses,
          404: errorResponse('not_found: no such device, no footage of that moment, or continuous recording is off'),
        },
      },
    },
    async (req, reply) => {
      const { startMs: atMs } = footageWindow(
        { start: req.query.at, end: new Date(Date.now() + 86_400_000).toISOString() },
        Infinity,
      );
      const { frames } = requireFootage(footage);
      const device = requireDevice(store, req.params.device_id);
      const picture = await frames.frame(device.id, atMs, req.query.width ?? null);
      if (!picture) throw new NotFoundError('footage', `${device.id} at ${new Date(atMs).toISOString()}`);
      return reply
        .type('image/jpeg')
        .headers({
          etag: picture.etag,
          'cache-control': 'private, max-age=3600',
          'x-picture-time': new Date(picture.atMs).toISOString(),
        })
        .send(picture.jpeg);
    },
  );
};
