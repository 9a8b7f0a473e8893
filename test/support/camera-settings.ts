import type { SettingField, SettingSource } from '../../src/domain/camera-settings.js';
import { SETTING_FIELDS } from '../../src/domain/camera-settings.js';
import type { Device } from '../../web/src/types.js';

// A camera's settings as the API shows them when nobody set anything (src/domain/camera-settings.ts).

/** Every field from one source. */
export const sourcesAll = (source: SettingSource): Record<SettingField, SettingSource> =>
  Object.fromEntries(SETTING_FIELDS.map((f) => [f, source])) as Record<SettingField, SettingSource>;

/**
 * The settings JSON of a camera without a config entry, app settings or account, on a gateway
 * without continuous recording.
 */
export const DEFAULT_SETTINGS_JSON = {
  enabled: true,
  recording: 'events' as const,
  detection: 'auto' as const,
  motion_mask: [],
  zones: [],
  username: null,
  has_password: false,
  source: sourcesAll('default'),
};

/** A Device as the API answers it: an online ONVIF camera "Porch", fixed, its settings the defaults; `over` replaces fields. */
export function deviceJson(over: Partial<Device> = {}): Device {
  return {
    id: 'dev_1',
    name: 'Porch',
    type: 'camera',
    source: 'onvif',
    rtsp_url: null,
    sub_rtsp_url: null,
    status: 'online',
    model: null,
    manufacturer: null,
    firmware_version: null,
    last_seen_at: null,
    address: null,
    settings: DEFAULT_SETTINGS_JSON,
    ptz: null,
    ...over,
  };
}
