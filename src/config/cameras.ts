import type { CameraSettings, FileCameraSettings, SettingDefaults, Zone } from '../domain/camera-settings.js';
import type { Polygon } from '../domain/polygon.js';
import type { Config } from './schema.js';

export type CameraConfig = Config['cameras'][number];

/**
 * The cameras[] entry of an adopted device, matched by its device service URL (the one key both
 * the file and the adopted camera have); null for a camera found by discovery and not configured.
 */
export function cameraConfigLookup(
  cameras: readonly CameraConfig[],
  onvifUrlOf: (deviceId: string) => string | null,
): (deviceId: string) => CameraConfig | null {
  return (deviceId) => {
    const url = onvifUrlOf(deviceId);
    return url === null ? null : (cameras.find((c) => c.onvif_url === url) ?? null);
  };
}

/**
 * The base of every camera's settings (the store's CameraSettingsBase): what each cameras[] entry
 * sets of the settings the app can set too, by its onvif_url, and the defaults of the fields nobody
 * sets (src/domain/camera-settings.ts: the file wins where it sets a field, the app sets the rest).
 */
export function fileCameraSettings(config: Config): {
  fileFor(onvifUrl: string): FileCameraSettings | null;
  defaults: SettingDefaults;
} {
  const continuousOn = config.recording.continuous.enabled;
  const byUrl = new Map<string, FileCameraSettings>();
  for (const cam of config.cameras) {
    if (byUrl.has(cam.onvif_url)) continue; // the first entry for a URL is the one used, as in cameraConfigLookup
    const settings: FileCameraSettings = {
      account: cam.username ? { username: cam.username, hasPassword: !!cam.password } : null,
    };
    if (cam.continuous !== undefined)
      settings.recording = cam.continuous === 'on' && continuousOn ? 'continuous' : 'events';
    if (cam.detection !== undefined) settings.detection = cam.detection;
    if (cam.motion_mask !== undefined) settings.motionMask = cam.motion_mask;
    const zoneKeys = [cam.zones, cam.required_zones, cam.alert_on_stationary_zones, cam.loitering_zones];
    if (zoneKeys.some((key) => key !== undefined)) {
      const required = new Set(cam.required_zones ?? []);
      const alertOnStationary = new Set(cam.alert_on_stationary_zones ?? []);
      const loitering = cam.loitering_zones ?? {};
      settings.zones = Object.entries(cam.zones ?? {}).map(([name, polygon]): Zone => ({
        name,
        polygon,
        required: required.has(name),
        alertOnStationary: alertOnStationary.has(name),
        loiteringS: loitering[name] ?? null,
      }));
    }
    byUrl.set(cam.onvif_url, settings);
  }
  return {
    fileFor: (onvifUrl) => byUrl.get(onvifUrl) ?? null,
    defaults: { recording: continuousOn ? 'continuous' : 'events' },
  };
}

/**
 * What the recorder, the detector and continuous recording read of a camera, from its settings in
 * effect (the file's with the app's changes: `settingsOf`) at each look, so a change applies at
 * the next one: the next motion check, the next clip, the next footage start.
 */
export function cameraSettingsLookup(
  settingsOf: (deviceId: string) => CameraSettings | null,
  fileCamera: (deviceId: string) => CameraConfig | null,
) {
  return {
    /** Detection mode, zones and the zones' rules, as the file spells them (src/detect's CameraDetectionSettings). */
    detection: (deviceId: string) => {
      const s = settingsOf(deviceId);
      if (!s) return null;
      return {
        detection: s.detection,
        zones: Object.fromEntries(s.zones.map((z) => [z.name, z.polygon])),
        required_zones: s.zones.filter((z) => z.required).map((z) => z.name),
        alert_on_stationary_zones: s.zones.filter((z) => z.alertOnStationary === true).map((z) => z.name),
        loitering_zones: Object.fromEntries(
          s.zones.flatMap((z) => (z.loiteringS ? [[z.name, z.loiteringS] as const] : [])),
        ),
      };
    },
    motionMask: (deviceId: string): readonly Polygon[] => settingsOf(deviceId)?.motionMask ?? [],
    /** Whether event clips are recorded (recording not off). */
    recordsEvents: (deviceId: string): boolean => settingsOf(deviceId)?.recording !== 'off',
    /** cameras[].continuous as continuous recording reads it, and the file's profile. */
    continuous: (deviceId: string): Pick<CameraConfig, 'continuous' | 'continuous_profile'> => ({
      continuous: settingsOf(deviceId)?.recording === 'continuous' ? 'on' : 'off',
      continuous_profile: fileCamera(deviceId)?.continuous_profile ?? null,
    }),
  };
}
