import type { Static } from 'typebox';
import type {
  AlertSchema,
  ControlResultSchema,
  DeviceSchema,
  RecordingSchema,
} from '../../src/domain/record-schemas.js';
import type { CONTROL_ACTIONS, EVENT_TYPES } from '../../src/domain/types.js';
import type { SpanSchema } from '../../src/api/routes/footage/spans.js';
import type { FootageStatusSchema } from '../../src/api/routes/footage/status.js';
import type { PushInfoSchema, PushSubscriptionSchema, PushTestSchema } from '../../src/api/routes/push-schemas.js';
import type { SystemStatusSchema } from '../../src/api/routes/system-status.js';

// The API's shapes, from the same TypeBox schemas that validate and serialise them on the server.
// Type-only imports: nothing of the server lands in the bundle.

export type Device = Static<typeof DeviceSchema>;
export type Alert = Static<typeof AlertSchema>;
export type Recording = Static<typeof RecordingSchema>;
export type ControlResult = Static<typeof ControlResultSchema>;
export type EventType = (typeof EVENT_TYPES)[number];
export type ControlAction = (typeof CONTROL_ACTIONS)[number];
export type FootageSpan = Static<typeof SpanSchema>;
export type FootageStatus = Static<typeof FootageStatusSchema>;
export type CameraFootage = FootageStatus['cameras'][number];
export type CameraSettings = Device['settings'];
export type PushInfo = Static<typeof PushInfoSchema>;
export type PushSubscriptionRecord = Static<typeof PushSubscriptionSchema>;
export type PushTestResult = Static<typeof PushTestSchema>;
/** PATCH /v1/push/subscriptions/{id}. */
export type PushPreferences = Pick<PushSubscriptionRecord, 'devices' | 'types' | 'quiet_hours'>;
/** GET /v1/system (admins): the gateway, its machine, disks and cameras' streams. */
export type SystemStatus = Static<typeof SystemStatusSchema>;
export type SystemDisk = SystemStatus['storage'][number];
export type SystemCamera = SystemStatus['cameras'][number];
// The bodies of PATCH and POST /v1/devices (src/api/routes/device-setup.ts), from the Device's
// settings: that file's own types cannot be imported here (they need the server's Fastify types).
/** PATCH /v1/devices/{id}: any of the settings; username and password only together. */
export type DevicePatch = Partial<
  Pick<CameraSettings, 'enabled' | 'recording' | 'detection' | 'motion_mask'> & {
    name: string;
    username: string;
    password: string;
    zones: Array<Omit<CameraSettings['zones'][number], 'required'> & { required?: boolean }>;
  }
>;
/** A PTZ camera's offer: its presets and whether it centres on a point (null on a fixed camera). */
export type DevicePtz = NonNullable<Device['ptz']>;
/** POST /v1/devices/{id}/control with a ptz_* action (src/api/routes/devices.ts, ControlBody). */
export type PtzRequest =
  | { action: 'ptz_move'; pan: number; tilt: number; zoom: number; timeout_ms: number }
  | { action: 'ptz_stop' | 'ptz_home' }
  | { action: 'ptz_goto_preset' | 'ptz_remove_preset'; preset: string }
  | { action: 'ptz_set_preset'; name: string }
  | { action: 'ptz_center'; x: number; y: number };
/** POST /v1/devices: an ONVIF camera by its address (host[:port]), or a plain RTSP camera by its URL. */
export type NewDevice =
  | { address: string; username: string; password: string; name?: string }
  | { rtsp_url: string; sub_rtsp_url?: string; username?: string; password?: string; name: string };

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** A ticketed address a media element or a download link can use without the bearer token. */
export interface TicketedUrl {
  url: string;
  expires_at: string;
}

export interface StreamAddress {
  stream_url: string;
  expires_at: string;
  protocol: string;
}

// src/domain/event-labels.ts's labels, copied: the build refuses server files in the bundle, and
// test/domain/event-labels.test.ts keeps the two alike.
export const EVENT_TYPE_NAMES: Record<EventType, string> = { motion: 'Motion', human: 'Person', vehicle: 'Vehicle' };
export const ALERT_TYPE_NAMES: Record<Alert['type'], string> = {
  ...EVENT_TYPE_NAMES,
  device_offline: 'Camera offline',
};
