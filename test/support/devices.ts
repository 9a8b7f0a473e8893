import type { DeviceUpsert } from '../../src/store/store.js';

/** An online camera as a test writes it straight into the store (no ONVIF details). */
export const onlineCamera = (id: string, name = id): DeviceUpsert => ({
  id,
  name,
  type: 'camera',
  status: 'online',
  model: null,
  manufacturer: null,
  firmwareVersion: null,
  lastSeenAt: null,
});
