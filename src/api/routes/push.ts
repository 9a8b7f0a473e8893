import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type, { type Static } from 'typebox';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import type { AlertType } from '../../domain/types.js';
import type {
  NewPushSubscription,
  PushSubscriptionChange,
  PushSubscriptionRecord,
  QuietHours,
  SavedPushSubscription,
} from '../../store/store.js';
import { subjectOf } from '../authenticate.js';
import { badRequest } from '../errors.js';
import type { PushNotifications } from '../ports.js';
import { Envelope, errorResponse, errorResponses, Id, NoBody, notFoundResponse } from '../schemas.js';
import {
  Devices,
  Types,
  NullableQuietHours,
  PushSubscriptionSchema,
  PushInfoSchema,
  PushTestSchema,
} from './push-schemas.js';

// Web Push (docs/notifications.md): the gateway's VAPID public key, and each signed-in user's own
// subscriptions, made by the web app for a browser. Any signed-in user may have them, so every
// route takes alerts:read, the scope a push tells of (a viewer's too); a user sees and changes only
// the subscriptions their token's subject made (another's id is 404, as an unknown one is).

/** What the push routes read and write of the store. */
export interface PushRoutesStore {
  savePushSubscription(s: NewPushSubscription, bounds: { perOwner: number; total: number }): SavedPushSubscription;
  pushSubscriptionsOf(owner: string): PushSubscriptionRecord[];
  getPushSubscription(id: string): PushSubscriptionRecord | null;
  changePushSubscription(id: string, owner: string, change: PushSubscriptionChange): PushSubscriptionRecord | null;
  deletePushSubscription(id: string, owner: string): boolean;
  getDevice(id: string): object | null;
}

export interface PushRoutesOptions {
  store: PushRoutesStore;
  push: PushNotifications;
}

/** Pushed unless a subscription says otherwise: what someone wants to hear of at once. */
export const DEFAULT_PUSH_TYPES: readonly AlertType[] = ['human', 'vehicle'];
const SubscribeBody = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: 2048, description: 'PushSubscription.endpoint' }),
    keys: Type.Object(
      {
        p256dh: Type.String({ minLength: 1, maxLength: 256, description: 'base64url, 65 bytes' }),
        auth: Type.String({ minLength: 1, maxLength: 256, description: 'base64url, 16 bytes' }),
      },
      { additionalProperties: true, description: 'PushSubscription.toJSON().keys (other members are ignored)' },
    ),
    expirationTime: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], { description: 'As PushSubscription.toJSON() has it; ignored' }),
    ),
    devices: Type.Optional(Devices),
    types: Type.Optional(Types),
    quiet_hours: Type.Optional(NullableQuietHours),
  },
  { additionalProperties: false },
);

const ChangeBody = Type.Object(
  { devices: Type.Optional(Devices), types: Type.Optional(Types), quiet_hours: Type.Optional(NullableQuietHours) },
  { additionalProperties: false, description: 'Any of devices, types, quiet_hours' },
);

const SubscriptionParams = Type.Object({ subscription_id: Id });

type PushSubscriptionJson = Static<typeof PushSubscriptionSchema>;

const clock = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
const minutesOf = (text: string) => Number(text.slice(0, 2)) * 60 + Number(text.slice(3, 5));

export function presentPushSubscription(s: PushSubscriptionRecord): PushSubscriptionJson {
  return {
    id: s.id,
    endpoint: s.endpoint,
    devices: s.devices,
    types: s.types,
    quiet_hours: s.quietHours ? { start: clock(s.quietHours.start), end: clock(s.quietHours.end) } : null,
    created_at: new Date(s.createdAt).toISOString(),
  };
}

const conflict = (meaning: string) => ({ 409: errorResponse(`conflict: ${meaning}`) });
const SCOPE = 'alerts:read';

export const pushRoutes: FastifyPluginAsyncTypebox<PushRoutesOptions> = async (app, { store, push }) => {
  /** The caller's subscription with this id; 404 for another's as for an unknown one. */
  const ownSubscription = (req: FastifyRequest, id: string): PushSubscriptionRecord => {
    const s = store.getPushSubscription(id);
    if (!s || s.owner !== subjectOf(req)) throw new NotFoundError('push_subscription', id);
    return s;
  };
  const checkDevices = (devices: readonly string[] | null | undefined) => {
    const unknown = devices?.find((d) => store.getDevice(d) === null);
    if (unknown !== undefined) throw badRequest(`body field devices names no known camera (${unknown})`);
  };

  app.get(
    '/v1/push',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'getPushSettings',
        summary: "The gateway's VAPID public key for Web Push, and whether pushes are on",
        tags: ['push'],
        response: { 200: PushInfoSchema, ...errorResponses },
      },
    },
    async () => ({ vapid_public_key: push.publicKey, enabled: push.enabled }),
  );

  app.post(
    '/v1/push/subscriptions',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'subscribePush',
        summary: "Subscribe a browser to the gateway's alerts",
        description:
          'The body is PushSubscription.toJSON() with the choices added. 201 for a new subscription; the same endpoint sent again by the same user (token subject) changes that one and answers 200. Pushes go only to https endpoints of notifications.push_hosts (400 names why not).',
        tags: ['push'],
        body: SubscribeBody,
        response: {
          200: PushSubscriptionSchema,
          201: PushSubscriptionSchema,
          ...errorResponses,
          ...conflict(
            'the user has notifications.max_subscriptions_per_user subscriptions, or the gateway notifications.max_subscriptions',
          ),
        },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const problem = push.endpointProblem(b.endpoint);
      if (problem !== null) throw badRequest(`body field ${problem}`);
      const keys = push.checkKeys(b.keys.p256dh, b.keys.auth);
      if (!keys.ok) throw badRequest(`body field ${keys.problem}`);
      checkDevices(b.devices);
      const token = req.token;
      if (!token) throw new Error('the route runs after the token check');
      const saved = store.savePushSubscription(
        {
          owner: token.subject,
          grantId: push.grantOf(token),
          endpoint: b.endpoint,
          p256dh: keys.p256dh,
          auth: keys.auth,
          devices: b.devices ?? null,
          types: b.types ?? [...DEFAULT_PUSH_TYPES],
          quietHours: quietHoursOf(b.quiet_hours),
        },
        push.bounds,
      );
      if (saved.kind === 'full')
        throw new ConflictError(
          saved.bound === 'owner'
            ? `you have ${push.bounds.perOwner} push subscriptions already (notifications.max_subscriptions_per_user): remove one first`
            : `the gateway keeps ${push.bounds.total} push subscriptions already (notifications.max_subscriptions)`,
        );
      const id = saved.subscription.id;
      return reply
        .code(saved.kind === 'created' ? 201 : 200)
        .header('location', `/v1/push/subscriptions/${id}`)
        .send(presentPushSubscription(saved.subscription));
    },
  );

  app.get(
    '/v1/push/subscriptions',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'listPushSubscriptions',
        summary: "The caller's push subscriptions, newest first (one page: a user has a few)",
        tags: ['push'],
        response: { 200: Envelope(PushSubscriptionSchema), ...errorResponses },
      },
    },
    async (req) => ({
      data: store.pushSubscriptionsOf(subjectOf(req)).map(presentPushSubscription),
      next_cursor: null,
    }),
  );

  app.get(
    '/v1/push/subscriptions/:subscription_id',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'getPushSubscription',
        summary: 'One of the caller’s push subscriptions',
        tags: ['push'],
        params: SubscriptionParams,
        response: { 200: PushSubscriptionSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (req) => presentPushSubscription(ownSubscription(req, req.params.subscription_id)),
  );

  app.patch(
    '/v1/push/subscriptions/:subscription_id',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'updatePushSubscription',
        summary: 'Change which alerts a push subscription gets',
        tags: ['push'],
        params: SubscriptionParams,
        body: ChangeBody,
        response: { 200: PushSubscriptionSchema, ...errorResponses, ...notFoundResponse },
      },
    },
    async (req) => {
      const b = req.body;
      if (b.devices === undefined && b.types === undefined && b.quiet_hours === undefined)
        throw badRequest('the body names nothing to change (devices, types, quiet_hours)');
      ownSubscription(req, req.params.subscription_id);
      checkDevices(b.devices);
      const change: PushSubscriptionChange = {
        ...(b.devices !== undefined ? { devices: b.devices } : {}),
        ...(b.types !== undefined ? { types: b.types } : {}),
        ...(b.quiet_hours !== undefined ? { quietHours: quietHoursOf(b.quiet_hours) } : {}),
      };
      const changed = store.changePushSubscription(req.params.subscription_id, subjectOf(req), change);
      if (!changed) throw new NotFoundError('push_subscription', req.params.subscription_id);
      return presentPushSubscription(changed);
    },
  );

  app.delete(
    '/v1/push/subscriptions/:subscription_id',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'removePushSubscription',
        summary: 'Unsubscribe: no more pushes to that browser',
        tags: ['push'],
        params: SubscriptionParams,
        response: { 204: NoBody('Removed'), ...errorResponses, ...notFoundResponse },
      },
    },
    async (req, reply) => {
      if (!store.deletePushSubscription(req.params.subscription_id, subjectOf(req)))
        throw new NotFoundError('push_subscription', req.params.subscription_id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/push/subscriptions/:subscription_id/test',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'testPushSubscription',
        summary: 'Send a test notification to the subscription now',
        description:
          'Answers once the push service has (at most notifications.request_timeout_s): delivered, or its refusal in words. A push service saying the subscription is gone (404, 410) removes it. The body is empty or {}.',
        tags: ['push'],
        params: SubscriptionParams,
        body: Type.Object({}, { additionalProperties: false, description: 'Empty, or {}' }),
        response: {
          200: PushTestSchema,
          ...errorResponses,
          ...notFoundResponse,
          ...conflict('notifications are off (notifications.enabled: false)'),
        },
      },
    },
    async (req) => {
      const s = ownSubscription(req, req.params.subscription_id);
      if (!push.enabled)
        throw new ConflictError('notifications are off on this gateway (notifications.enabled: false)');
      return push.sendTest(s);
    },
  );
};

function quietHoursOf(q: { start: string; end: string } | null | undefined): QuietHours | null {
  if (!q) return null;
  const start = minutesOf(q.start);
  const end = minutesOf(q.end);
  if (start === end)
    throw badRequest('body field quiet_hours must end at another time than it starts (no pushes at all: unsubscribe)');
  return { start, end };
}
