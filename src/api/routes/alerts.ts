import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ALERT_TYPES, type Alert, type Page } from '../../domain/types.js';
import { NotFoundError } from '../../domain/errors.js';
import type { AlertFilter } from '../../store/media.js';
import { decodeCursorParam, pageResponder } from '../paging.js';
import { memoized, presentAlert } from '../../domain/present.js';
import { AlertSchema, Envelope, errorResponses, Id, notFoundResponse, PageQuery } from '../schemas.js';

/** What the alert routes read and write of the store: alerts listed, looked up and marked read. */
export interface AlertsStore {
  listAlerts(f: AlertFilter): Page<Alert>;
  getAlert(id: string): Alert | null;
  markAlertRead(id: string): Alert | null;
}

export interface AlertRoutesOptions {
  store: AlertsStore;
}

const AlertParams = Type.Object({ alert_id: Id });

export const alertRoutes: FastifyPluginAsyncTypebox<AlertRoutesOptions> = async (app, { store }) => {
  const respond = pageResponder(memoized(presentAlert));
  app.get(
    '/v1/alerts',
    {
      config: { scope: 'alerts:read' },
      schema: {
        operationId: 'listAlerts',
        summary: 'List alerts',
        tags: ['alerts'],
        querystring: Type.Object(
          {
            device_id: Type.Optional(Id),
            type: Type.Optional(Type.Enum([...ALERT_TYPES])),
            unread: Type.Optional(Type.Boolean({ description: 'true: only unread alerts; false: only read ones' })),
            limit: PageQuery.limit,
            cursor: Type.Optional(PageQuery.cursor),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(AlertSchema), ...errorResponses },
      },
    },
    (req, reply) => {
      const q = req.query;
      const page = store.listAlerts({
        deviceId: q.device_id,
        type: q.type,
        unread: q.unread,
        limit: q.limit,
        after: decodeCursorParam(q.cursor),
      });
      respond(reply, page);
    },
  );

  app.get(
    '/v1/alerts/:alert_id',
    {
      config: { scope: 'alerts:read' },
      schema: {
        operationId: 'getAlert',
        summary: 'Get an alert',
        tags: ['alerts'],
        params: AlertParams,
        response: { 200: AlertSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (req) => {
      const alert = store.getAlert(req.params.alert_id);
      if (!alert) throw new NotFoundError('alert', req.params.alert_id);
      return presentAlert(alert);
    },
  );

  app.post(
    '/v1/alerts/:alert_id/read',
    {
      config: { scope: 'alerts:write' },
      schema: {
        operationId: 'markAlertRead',
        summary: 'Mark an alert as read',
        description: 'Idempotent: marking again keeps the first read_at. The body is empty or {}.',
        tags: ['alerts'],
        params: AlertParams,
        body: Type.Object({}, { additionalProperties: false, description: 'Empty, or {}' }),
        response: { 200: AlertSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (req) => {
      const alert = store.markAlertRead(req.params.alert_id);
      if (!alert) throw new NotFoundError('alert', req.params.alert_id);
      return presentAlert(alert);
    },
  );
};
