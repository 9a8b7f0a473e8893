import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import Type from 'typebox';
import { NotFoundError } from '../../../domain/errors.js';
import { storedFile } from '../../clip-files.js';
import { errorResponse, errorResponses, FileBody, Id } from '../../schemas.js';
import { requireRecording } from './lookup.js';
import type { RecordingRoutesOptions } from './options.js';

export const recordingThumbnailRoute: FastifyPluginAsyncTypebox<
  Pick<RecordingRoutesOptions, 'store' | 'storageDir'>
> = async (app, { store, storageDir }) => {
  const root = path.resolve(storageDir);
  app.route({
    method: 'GET',
    url: '/v1/recordings/:recording_id/thumbnail',
    config: { scope: 'recordings:read' },
    schema: {
      operationId: 'getRecordingThumbnail',
      summary: "A recording's thumbnail (JPEG)",
      description: 'One picture from the moment the event started, 640 pixels wide. 404 when the clip has none.',
      tags: ['recordings'],
      params: Type.Object({ recording_id: Id }),
      response: {
        200: FileBody('image/jpeg', 'The JPEG'),
        ...errorResponses,
        404: errorResponse('not_found: no recording with this id, or its clip has no thumbnail'),
      },
    },
    handler: async (req, reply) => {
      const rec = requireRecording(store, req.params.recording_id);
      // Beside the clip, same name (see src/media/recorder/clip-writer.ts).
      const file = storedFile(root, rec.fileName.replace(/\.mp4$/, '.jpg'));
      if (!file?.endsWith('.jpg')) throw new NotFoundError('thumbnail', rec.id);
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) throw new NotFoundError('thumbnail', rec.id);
      reply.headers({
        'content-type': 'image/jpeg',
        'content-length': String(info.size),
        'cache-control': 'private, max-age=86400, immutable',
      });
      return reply.send(createReadStream(file));
    },
  });
};
