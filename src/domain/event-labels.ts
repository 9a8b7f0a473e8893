// What people call each kind of event, the one wording of alert messages ("Person detected by …")
// and of Home Assistant's entity names. The web app keeps a copy (web/src/types.ts): its build
// refuses any file of src/ in the bundle; test/domain/event-labels.test.ts holds the two alike.

import type { AlertType, EventType } from './types.js';

export const EVENT_TYPE_LABELS: Readonly<Record<EventType, string>> = {
  motion: 'Motion',
  human: 'Person',
  vehicle: 'Vehicle',
};

export const ALERT_TYPE_LABELS: Readonly<Record<AlertType, string>> = {
  ...EVENT_TYPE_LABELS,
  device_offline: 'Camera offline',
};
