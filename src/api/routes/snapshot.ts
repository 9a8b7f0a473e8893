import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { DeviceUnavailableError, NotFoundError } from '../../domain/errors.js';
import type { Device } from '../../domain/types.js';
import type { DeviceSnapshots } from '../ports.js';
import { errorResponse, errorResponses, Id, NoBody } from '../schemas.js';

// GET /v1/devices/{device_id}/snapshot: the camera's current picture (src/media/still/). The
// picture changes about once a second, so clients revalidate every time (no-cache) and an
// unchanged one costs a 304.

/** What the snapshot route reads of the store: the device, to answer 404 or 409 before asking the camera. */
export interface SnapshotStore {
  getDevice(id: string): Device | null;
}

export interface SnapshotRoutesOptions {
  store: SnapshotStore;
  snapshots: DeviceSnapshots;
}

/** The picture, sent from memory (FileBody is for files streamed from disk). */
const JpegBody = {
  description: 'The JPEG',
  content: { 'image/jpeg': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } },
};

export const SNAPSHOT_MIN_WIDTH = 64;
export const SNAPSHOT_MAX_WIDTH = 3840;

export const snapshotRoutes: FastifyPluginAsyncTypebox<SnapshotRoutesOptions> = async (app, { store, snapshots }) => {
  app.get(
    '/v1/devices/:device_id/snapshot',
    {
      config: { scope: 'devices:read' },
      schema: {
        operationId: 'getDeviceSnapshot',
        summary: "A device's current picture (JPEG)",
        description:
          "The relay's latest keyframe decoded once, or the camera's own snapshot when the relay has none yet; one picture serves every request for about a second. ETag and If-None-Match (304); Cache-Control: no-cache.",
        tags: ['devices'],
        params: Type.Object({ device_id: Id }),
        querystring: Type.Object(
          {
            width: Type.Optional(
              Type.Integer({
                minimum: SNAPSHOT_MIN_WIDTH,
                maximum: SNAPSHOT_MAX_WIDTH,
                description:
                  "Width of the picture in pixels, the height keeping the aspect ratio; absent: the camera's own size",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: JpegBody,
          304: NoBody('Not modified (If-None-Match)'),
          ...errorResponses,
          404: errorResponse('not_found: no device with this id'),
          409: errorResponse(
            'device_unavailable: the device is not online, or has no video stream and no snapshot address',
          ),
          503: errorResponse(
            "snapshot_unavailable: no picture could be had from the stream or the camera right now; temporarily_unavailable: too many pictures being made, or the token issuer's keys cannot be had (Retry-After)",
          ),
        },
      },
    },
    async (req, reply) => {
      const id = req.params.device_id;
      const device = store.getDevice(id);
      if (!device) throw new NotFoundError('device', id);
      if (device.status !== 'online') throw new DeviceUnavailableError(`device ${id} is ${device.status}`);
      const snapshot = await snapshots.get(id, req.query.width ?? null);
      reply.headers({ etag: snapshot.etag, 'cache-control': 'no-cache' });
      if (req.headers['if-none-match']?.split(',').some((t) => t.trim() === snapshot.etag || t.trim() === '*'))
        return reply.code(304).send();
      reply.headers({ 'content-type': 'image/jpeg', 'content-length': String(snapshot.jpeg.length) });
      return reply.send(snapshot.jpeg);
    },
  );
};
