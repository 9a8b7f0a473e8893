import type { Static } from 'typebox';
import type {
  AlertSchema,
  ControlResultSchema,
  DeviceSchema,
  RecordingSchema,
} from '../../src/domain/record-schemas.js';
import type { CONTROL_ACTIONS, EVENT_TYPES } from '../../src/domain/types.js';

// The API's shapes, from the same TypeBox schemas that validate and serialise them on the server.
// Type-only imports: nothing of the server lands in the bundle.

export type Device = Static<typeof DeviceSchema>;
export type Alert = Static<typeof AlertSchema>;
export type Recording = Static<typeof RecordingSchema>;
export type ControlResult = Static<typeof ControlResultSchema>;
export type EventType = (typeof EVENT_TYPES)[number];
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
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
