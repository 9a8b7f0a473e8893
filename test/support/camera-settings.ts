import type { SettingField, SettingSource } from '../../src/domain/camera-settings.js';
import { SETTING_FIELDS } from '../../src/domain/camera-settings.js';

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
