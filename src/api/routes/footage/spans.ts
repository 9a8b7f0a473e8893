import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { footageSpans } from '../../../media/footage/range-plan.js';
import { errorResponse, errorResponses, Id } from '../../schemas.js';
import type { FootageRoutesOptions } from './options.js';
import { footageWindow, requireDevice, requireFootage, WindowQuery } from './window.js';

// GET /v1/devices/{device_id}/footage: the spans of continuous footage in a window (docs/api.md).

export const SpanSchema = Type.Object(
  {
    start: Type.String({ format: 'date-time', description: 'First moment of footage in the span' }),
    end: Type.String({ format: 'date-time', description: 'End of the span (exclusive)' }),
  },
  { additionalProperties: false, title: 'FootageSpan' },
);

export const footageSpansRoute: FastifyPluginAsyncTypebox<FootageRoutesOptions> = async (app, { store, footage }) => {
  app.get(
    '/v1/devices/:device_id/footage',
    {
      config: { scope: 'recordings:read' },
      schema: {
        operationId: 'listDeviceFootage',
        summary: "The spans of a device's continuous footage in a window",
        description:
          'Footage files merged where they touch, clipped to the window, in time order; gaps (camera down, gateway stopped) are gaps. A window of at most 24 hours.',
        tags: ['footage'],
        params: Type.Object({ device_id: Id }),
        querystring: WindowQuery,
        response: {
          200: Type.Object({ data: Type.Array(SpanSchema) }, { additionalProperties: false, title: 'FootageSpanList' }),
          ...errorResponses,
          404: errorResponse('not_found: no such device, or continuous recording is off'),
        },
      },
    },
    async (req) => {
      const { startMs, endMs } = footageWindow(req.query);
      requireFootage(footage);
      requireDevice(store, req.params.device_id);
      const spans = footageSpans(store.footageIn(req.params.device_id, startMs, endMs), startMs, endMs);
      return {
        data: spans.map((s) => ({ start: new Date(s.startMs).toISOString(), end: new Date(s.endMs).toISOString() })),
      };
    },
  );
};
