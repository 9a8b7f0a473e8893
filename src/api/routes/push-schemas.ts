import Type from 'typebox';
import { ALERT_TYPES } from '../../domain/types.js';
import { Id, Timestamp } from '../schemas.js';

// The JSON shapes of the push routes (push.ts), apart so that the web app takes its types from
// them without the routes' server code.

export const MAX_DEVICES = 256;

const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: '24-hour HH:MM' });
export const QuietHoursSchema = Type.Object(
  { start: Clock, end: Clock },
  {
    additionalProperties: false,
    title: 'QuietHours',
    description:
      "No pushes from start up to end, in the gateway's local time; an end before the start runs across midnight",
  },
);
export const Devices = Type.Union([Type.Array(Id, { maxItems: MAX_DEVICES, uniqueItems: true }), Type.Null()], {
  description: 'Only these cameras; null: every camera',
});
export const Types = Type.Array(Type.Enum([...ALERT_TYPES]), {
  minItems: 1,
  maxItems: ALERT_TYPES.length,
  uniqueItems: true,
  description: 'The alert types pushed',
});
export const NullableQuietHours = Type.Union([QuietHoursSchema, Type.Null()]);

export const PushSubscriptionSchema = Type.Object(
  {
    id: Id,
    endpoint: Type.String({ description: "The push service's URL for this browser" }),
    devices: Devices,
    types: Types,
    quiet_hours: NullableQuietHours,
    created_at: Timestamp,
  },
  { title: 'PushSubscription' },
);

export const PushInfoSchema = Type.Object(
  {
    vapid_public_key: Type.String({
      description:
        "The gateway's VAPID public key, base64url of the uncompressed P-256 point: the browser's applicationServerKey",
    }),
    enabled: Type.Boolean({ description: 'notifications.enabled: false, nothing is pushed' }),
  },
  { title: 'PushInfo' },
);

export const PushTestSchema = Type.Object(
  {
    delivered: Type.Boolean({ description: 'The push service accepted the notification' }),
    status: Type.Union([Type.Integer(), Type.Null()], {
      description: "The push service's HTTP status; null when it could not be reached",
    }),
    outcome: Type.String({ description: 'What became of it, in words' }),
  },
  { title: 'PushTestResult' },
);
