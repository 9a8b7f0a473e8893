import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { hasScope } from '../../../auth/scope-claim.js';
import { NotFoundError } from '../../../domain/errors.js';
import { presentRecording, type MintPlayback } from '../../../domain/present.js';
import { EVENT_TYPES, type Recording } from '../../../domain/types.js';
import { DATE_FILTER_PATTERN, parseDateBound, type DateBound } from '../../date-filter.js';
import { badRequest, DateFilterError } from '../../errors.js';
import { decodeCursorParam, envelope } from '../../paging.js';
import { Envelope, errorResponses, Id, notFoundResponse, PageQuery, RecordingSchema } from '../../schemas.js';
import { requireRecording } from './lookup.js';
import type { RecordingRoutesOptions } from './options.js';

// The routes that answer recording objects (JSON): a device's list, and one recording by id.

// A playback address is minted per request (it expires), so these answers are not memoised as
// other lists are; only for a token that may play recordings.
function presenter(req: FastifyRequest, mintPlayback: MintPlayback | undefined) {
  const mint = mintPlayback && req.token && hasScope(req.token.scopes, 'recordings:read') ? mintPlayback : undefined;
  return (rec: Recording) => presentRecording(rec, mint);
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

export const listDeviceRecordingsRoute: FastifyPluginAsyncTypebox<
  Pick<RecordingRoutesOptions, 'store' | 'mintPlayback'>
> = async (app, { store, mintPlayback }) => {
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
      if (from !== undefined && to !== undefined && from > to)
        throw badRequest('query parameter start_date is after end_date');
      if (!store.getDevice(req.params.device_id)) throw new NotFoundError('device', req.params.device_id);
      const page = store.listRecordings({
        deviceId: req.params.device_id,
        from,
        to,
        eventType: q.event_type,
        limit: q.limit,
        after: decodeCursorParam(q.cursor),
      });
      return envelope(page, presenter(req, mintPlayback));
    },
  );
};

export const getRecordingRoute: FastifyPluginAsyncTypebox<
  Pick<RecordingRoutesOptions, 'store' | 'mintPlayback'>
> = async (app, { store, mintPlayback }) => {
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
    async (req) => presenter(req, mintPlayback)(requireRecording(store, req.params.recording_id)),
  );
};
