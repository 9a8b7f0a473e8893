import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import Type from 'typebox';
import { NotFoundError } from '../../../domain/errors.js';
import type { Recording } from '../../../domain/types.js';
import { storedFile } from '../../clip-files.js';
import { sendRanged } from '../../range-reply.js';
import { errorResponse, errorResponses, FileBody, Id, NoBody } from '../../schemas.js';
import { requireRecording } from './lookup.js';
import type { RecordingRoutesOptions } from './options.js';

// GET and HEAD /v1/recordings/{id}/download: the clip file as an attachment (docs/api.md).

/** An ETag that changes if the file does: recording ids are never reused, size and mtime cover a rewrite. */
const etagOf = (rec: Recording, size: number, mtimeMs: number) =>
  `"${rec.id}-${size.toString(36)}-${Math.floor(mtimeMs).toString(36)}"`;

export const downloadRecordingRoute: FastifyPluginAsyncTypebox<
  Pick<RecordingRoutesOptions, 'store' | 'storageDir'>
> = async (app, { store, storageDir }) => {
  const root = path.resolve(storageDir);
  // GET and HEAD declared together: Fastify's automatic HEAD route would read the whole file to discard it.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/recordings/:recording_id/download',
    config: { scope: 'recordings:write' },
    schema: {
      operationId: 'downloadRecording',
      summary: 'Download a recording (MP4)',
      description:
        'Streams the clip from disk. Supports HEAD, a single byte Range (206/416), If-None-Match and If-Range.',
      tags: ['recordings'],
      params: Type.Object({ recording_id: Id }),
      response: {
        200: FileBody('video/mp4', 'The MP4 file'),
        206: FileBody('video/mp4', 'The requested byte range'),
        304: NoBody('Not modified (If-None-Match)'),
        ...errorResponses,
        404: errorResponse('not_found: no recording with this id, or its file has gone'),
        416: errorResponse('range_not_satisfiable: the range starts past the end (Content-Range: bytes */size)'),
      },
    },
    handler: async (req, reply) => {
      const rec = requireRecording(store, req.params.recording_id);
      const file = storedFile(root, rec.fileName);
      const info = file === null ? null : await stat(file).catch(() => null);
      if (file === null || !info?.isFile()) throw new NotFoundError('recording', rec.id);
      return sendClip(req, reply, rec, file, info);
    },
  });
};

/** The clip's headers, then 304, 416, or the whole file or the byte range the request asks for. */
function sendClip(req: FastifyRequest, reply: FastifyReply, rec: Recording, file: string, info: Stats): FastifyReply {
  const size = info.size;
  const etag = etagOf(rec, size, info.mtimeMs);
  const lastModified = new Date(Math.floor(info.mtimeMs / 1000) * 1000).toUTCString();
  reply.headers({
    'content-type': 'video/mp4',
    etag,
    'last-modified': lastModified,
    'accept-ranges': 'bytes',
    'cache-control': 'private, max-age=0, must-revalidate',
    'content-disposition': `attachment; filename="${rec.deviceId}-${new Date(rec.startedAt).toISOString().replace(/[:.]/g, '-')}.mp4"`,
  });

  if (req.headers['if-none-match']?.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    return reply.code(304).send();
  }
  const ifRange = req.headers['if-range'];
  const rangeApplies = ifRange === undefined || ifRange === etag || ifRange === lastModified;
  const range = rangeApplies ? req.headers.range : undefined;
  return sendRanged(req, reply, { size, range, what: 'the file' }, (start, end) =>
    createReadStream(file, { start, end, highWaterMark: 256 * 1024 }),
  );
}
