import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import Type from 'typebox';
import { EVENT_TYPES, type Recording } from '../../domain/types.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Store } from '../../store/store.js';
import { DATE_FILTER_PATTERN, DateFilterError, parseDateBound, type DateBound } from '../date-filter.js';
import { badRequest } from '../errors.js';
import { hasScope } from '../../auth/scope-claim.js';
import { storedFile } from '../clip-files.js';
import { decodeCursorParam, envelope } from '../paging.js';
import { presentRecording, type MintPlayback } from '../../domain/present.js';
import { contentRange, parseRange } from '../range.js';
import { Envelope, errorResponse, errorResponses, FileBody, Id, NoBody, notFoundResponse, PageQuery, RecordingSchema } from '../schemas.js';

export interface RecordingRoutesOptions {
  store: Store;
  /** Directory the recordings' file names are relative to. */
  storageDir: string;
  /** Playback tickets for the recordings' playback_url (src/api/routes/playback.ts); absent: null. */
  mintPlayback?: MintPlayback;
}

const DateParam = (bound: string) =>
  Type.String({
    pattern: DATE_FILTER_PATTERN,
    description: `${bound} (inclusive): YYYY-MM-DD for a whole day in the gateway's time zone, or a date-time with offset`,
  });

function bound(value: string | undefined, name: string, which: DateBound): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseDateBound(value, which);
  } catch (err) {
    if (err instanceof DateFilterError) throw badRequest(`query parameter ${name} ${err.message}`);
    throw err;
  }
}

/** An ETag that changes if the file does: recording ids are never reused, size and mtime cover a rewrite. */
const etagOf = (rec: Recording, size: number, mtimeMs: number) => `"${rec.id}-${size.toString(36)}-${Math.floor(mtimeMs).toString(36)}"`;

export const recordingRoutes: FastifyPluginAsyncTypebox<RecordingRoutesOptions> = async (app, { store, storageDir, mintPlayback }) => {
  const root = path.resolve(storageDir);
  // A playback address is minted per request (it expires), so these answers are not memoised as
  // other lists are; only for a token that may play recordings.
  const presenter = (req: FastifyRequest) => {
    const mint = mintPlayback && req.token && hasScope(req.token.scopes, 'recordings:read') ? mintPlayback : undefined;
    return (rec: Recording) => presentRecording(rec, mint);
  };
  const requireRecording = (id: string) => {
    const rec = store.getRecording(id);
    if (!rec) throw new NotFoundError('recording', id);
    return rec;
  };

  app.get(
    '/v1/devices/:device_id/recordings',
    {
      config: { scope: 'recordings:read' },
      schema: {
        operationId: 'listDeviceRecordings',
        summary: "List a device's recordings",
        tags: ['recordings'],
        params: Type.Object({ device_id: Id }),
        querystring: Type.Object(
          {
            start_date: Type.Optional(DateParam('Earliest start')),
            end_date: Type.Optional(DateParam('Latest start')),
            event_type: Type.Optional(Type.Enum([...EVENT_TYPES])),
            limit: PageQuery.limit,
            cursor: Type.Optional(PageQuery.cursor),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(RecordingSchema), ...errorResponses, ...notFoundResponse },
      },
    },
    async (req) => {
      const q = req.query;
      const from = bound(q.start_date, 'start_date', 'start');
      const to = bound(q.end_date, 'end_date', 'end');
      if (from !== undefined && to !== undefined && from > to) throw badRequest('query parameter start_date is after end_date');
      if (!store.getDevice(req.params.device_id)) throw new NotFoundError('device', req.params.device_id);
      const page = store.listRecordings({
        deviceId: req.params.device_id,
        from,
        to,
        eventType: q.event_type,
        limit: q.limit,
        after: decodeCursorParam(q.cursor),
      });
      return envelope(page, presenter(req));
    },
  );

  app.get(
    '/v1/recordings/:recording_id',
    {
      config: { scope: 'recordings:read' },
      schema: {
        operationId: 'getRecording',
        summary: 'Get a recording',
        tags: ['recordings'],
        params: Type.Object({ recording_id: Id }),
        response: { 200: RecordingSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (req) => presenter(req)(requireRecording(req.params.recording_id)),
  );

  // GET and HEAD declared together: Fastify's automatic HEAD route would read the whole file to discard it.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/recordings/:recording_id/download',
      config: { scope: 'recordings:write' },
      schema: {
        operationId: 'downloadRecording',
        summary: 'Download a recording (MP4)',
        description: 'Streams the clip from disk. Supports HEAD, a single byte Range (206/416), If-None-Match and If-Range.',
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
      const rec = requireRecording(req.params.recording_id);
      const file = storedFile(root, rec.fileName);
      const info = file === null ? null : await stat(file).catch(() => null);
      if (file === null || !info?.isFile()) throw new NotFoundError('recording', rec.id);

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
      const range = rangeApplies ? parseRange(req.headers.range, size) : ({ kind: 'none' } as const);

      if (range.kind === 'unsatisfiable') {
        reply.header('content-range', `bytes */${size}`).header('content-type', 'application/json; charset=utf-8');
        return reply.code(416).send({ error: 'range_not_satisfiable', error_description: `the file has ${size} bytes` });
      }
      const [start, end, status] = range.kind === 'range' ? [range.start, range.end, 206] : [0, size - 1, 200];
      if (status === 206) reply.header('content-range', contentRange(start, end, size));
      reply.code(status).header('content-length', String(size === 0 ? 0 : end - start + 1));
      if (req.method === 'HEAD' || size === 0) return reply.send(undefined);
      return reply.send(createReadStream(file, { start, end, highWaterMark: 256 * 1024 }));
    },
  });

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
      const rec = requireRecording(req.params.recording_id);
      // Beside the clip, same name (see src/media/recorder/clip-writer.ts).
      const file = storedFile(root, rec.fileName.replace(/\.mp4$/, '.jpg'));
      if (!file?.endsWith('.jpg')) throw new NotFoundError('thumbnail', rec.id);
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) throw new NotFoundError('thumbnail', rec.id);
      reply.headers({ 'content-type': 'image/jpeg', 'content-length': String(info.size), 'cache-control': 'private, max-age=86400, immutable' });
      return reply.send(createReadStream(file));
    },
  });
};
