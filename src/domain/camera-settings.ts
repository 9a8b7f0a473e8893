import { polygonProblem, type Polygon } from './polygon.js';

// A camera's settings as the owner sets them: the config file's cameras[] entry is the base, and
// what the app sets through the API (PATCH /v1/devices/{id}) fills the fields the file leaves out.
// The file wins for every field it sets (the API refuses to change those, 409): an install kept
// in a file by a tool is never silently overridden, and each field has one owner, shown per field
// as its `source`. Pure: the store keeps the app's values, config gives the file's, and both use
// these rules.

export const RECORDING_MODES = ['events', 'continuous', 'off'] as const;
export const DETECTION_MODES = ['auto', 'on', 'off'] as const;
export type RecordingMode = (typeof RECORDING_MODES)[number];
export type DetectionMode = (typeof DETECTION_MODES)[number];

/** The settings the API shows and changes, by the name the API gives them. */
export const SETTING_FIELDS = ['name', 'account', 'enabled', 'recording', 'detection', 'motion_mask', 'zones'] as const;
export type SettingField = (typeof SETTING_FIELDS)[number];
/**
 * What a change through the API may change, as the bus tells it (camera.settings): the settings,
 * and a plain RTSP camera's stream URLs (`rtsp_urls`, main or sub), which are not settings (no
 * source: only the app sets them).
 */
export type ChangedField = SettingField | 'rtsp_urls';
/** Who set a field: the config file, the owner through the API, or neither (the gateway's default). */
export const SETTING_SOURCES = ['file', 'app', 'default'] as const;
export type SettingSource = (typeof SETTING_SOURCES)[number];

/** Bounds of what one camera may hold, the same as the config file's (src/config/schema.ts). */
export const SETTING_LIMITS = {
  nameLength: 100,
  usernameLength: 128,
  passwordLength: 256,
  polygons: 32,
  corners: 64,
  zones: 32,
  /** A zone's loitering_s: at most an hour (the count starts again after a gateway restart). */
  loiteringS: 3600,
} as const;
/** A zone's name: what the config file's zones keys may be. */
export const ZONE_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

/**
 * A named area of the picture; a person or vehicle counts only inside a required zone, if there is
 * one. Inside it (the bottom centre of its box), an object that has not moved alerts all the same
 * with `alertOnStationary`, and with `loiteringS` a person alerts only once they have stayed that
 * long (docs/detection.md, "Stationary objects and loitering").
 */
export interface Zone {
  name: string;
  polygon: Polygon;
  required: boolean;
  /** Absent: false. */
  alertOnStationary?: boolean;
  /** Seconds a person stays inside before the one alert; absent or null: no loitering rule. */
  loiteringS?: number | null;
}

/** What a config file's cameras[] entry sets: only the keys it has (absent: the file leaves it to the app). */
export interface FileCameraSettings {
  /** The entry names a username (its password goes with it). */
  account: { username: string; hasPassword: boolean } | null;
  recording?: RecordingMode;
  detection?: DetectionMode;
  motionMask?: Polygon[];
  zones?: Zone[];
}

/** What the owner set through the API; null where it set nothing. The password stays sealed. */
export interface AppCameraSettings {
  nameSet: boolean;
  username: string | null;
  hasPassword: boolean;
  enabled: boolean | null;
  recording: RecordingMode | null;
  detection: DetectionMode | null;
  motionMask: Polygon[] | null;
  zones: Zone[] | null;
}

/** A camera's settings in effect, with who set each. Never a password: only whether there is one. */
export interface CameraSettings {
  enabled: boolean;
  recording: RecordingMode;
  detection: DetectionMode;
  motionMask: Polygon[];
  zones: Zone[];
  /** The account the gateway logs in with (the file's, the app's, else the one adoption found). */
  username: string | null;
  hasPassword: boolean;
  source: Record<SettingField, SettingSource>;
}

/** What the gateway does for a camera no one set anything for. */
export interface SettingDefaults {
  /** `continuous` where the gateway keeps continuous footage (recording.continuous.enabled), else `events`. */
  recording: RecordingMode;
}

/**
 * The settings in effect: each field from the file when it sets it, else from the app, else the
 * default. `adopted` is the account adoption found (onvif.credentials) when neither set one.
 */
export function effectiveSettings(
  file: FileCameraSettings | null,
  app: AppCameraSettings | null,
  adopted: { username: string | null; hasPassword: boolean },
  defaults: SettingDefaults,
): CameraSettings {
  const pick = <T>(fromFile: T | undefined, fromApp: T | null | undefined, fallback: T): [T, SettingSource] =>
    fromFile !== undefined
      ? [fromFile, 'file']
      : fromApp !== null && fromApp !== undefined
        ? [fromApp, 'app']
        : [fallback, 'default'];
  const [enabled, enabledFrom] = pick(undefined, app?.enabled, true);
  const [recording, recordingFrom] = pick(file?.recording, app?.recording, defaults.recording);
  const [detection, detectionFrom] = pick<DetectionMode>(file?.detection, app?.detection, 'auto');
  const [motionMask, maskFrom] = pick(file?.motionMask, app?.motionMask, [] as Polygon[]);
  const [zones, zonesFrom] = pick(file?.zones, app?.zones, [] as Zone[]);
  const appAccount = app && app.username !== null ? { username: app.username, hasPassword: app.hasPassword } : null;
  const [account, accountFrom] = pick(file?.account ?? undefined, appAccount, adopted);
  return {
    enabled,
    recording,
    detection,
    motionMask,
    zones,
    username: account.username,
    hasPassword: account.hasPassword,
    source: {
      name: file ? 'file' : app?.nameSet ? 'app' : 'default',
      account: accountFrom,
      enabled: enabledFrom,
      recording: recordingFrom,
      detection: detectionFrom,
      motion_mask: maskFrom,
      zones: zonesFrom,
    },
  };
}

/** A change of settings asked through the API, in the gateway's terms; absent fields stay as they are. */
export interface SettingsPatch {
  name?: string;
  account?: { username: string; password: string };
  /**
   * A plain RTSP camera's stream URLs as given (checked by the camera setup): `main` a new main
   * stream URL, `sub` a new sub stream URL or null for none.
   */
  streams?: { main?: string; sub?: string | null };
  enabled?: boolean;
  recording?: RecordingMode;
  detection?: DetectionMode;
  motionMask?: Polygon[];
  zones?: Zone[];
}

/** The fields a patch changes, by their API names. */
export function patchedFields(patch: SettingsPatch): SettingField[] {
  const fields: SettingField[] = [];
  if (patch.name !== undefined) fields.push('name');
  if (patch.account !== undefined) fields.push('account');
  if (patch.enabled !== undefined) fields.push('enabled');
  if (patch.recording !== undefined) fields.push('recording');
  if (patch.detection !== undefined) fields.push('detection');
  if (patch.motionMask !== undefined) fields.push('motion_mask');
  if (patch.zones !== undefined) fields.push('zones');
  return fields;
}

/**
 * Why a mask or zone list cannot be used, naming the element at fault (`motion_mask[2]`,
 * `zones[0].polygon`, `zones[1].name`), or null: the rules the config file's polygons are held to
 * when it is loaded (polygonProblem), zone names unique. Counts and sizes are the schema's.
 */
export function settingsProblem(
  patch: Pick<SettingsPatch, 'motionMask' | 'zones'>,
): { field: string; problem: string } | null {
  for (const [i, polygon] of (patch.motionMask ?? []).entries()) {
    const problem = polygonProblem(polygon);
    if (problem) return { field: `motion_mask[${i}]`, problem: `is not a valid polygon: ${problem}` };
  }
  const names = new Set<string>();
  for (const [i, zone] of (patch.zones ?? []).entries()) {
    if (names.has(zone.name)) return { field: `zones[${i}].name`, problem: `repeats the zone name ${zone.name}` };
    names.add(zone.name);
    const problem = polygonProblem(zone.polygon);
    if (problem) return { field: `zones[${i}].polygon`, problem: `is not a valid polygon: ${problem}` };
  }
  return null;
}

/**
 * A camera's ONVIF address as the owner types it, `host[:port]` (a name, an IPv4 address or a
 * bracketed IPv6 one), as the URL parser writes it (`Cam.LAN:80` → `cam.lan`), or null when it is
 * not one: no scheme, path, credentials or blanks.
 */
export function parseCameraAddress(address: string): string | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::(\d{1,5}))?$/.exec(address);
  if (!m) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && (port < 1 || port > 65_535)) return null;
  try {
    // The URL parser has the last word on the host (an IPv6 literal, an IPv4 address in numbers).
    return new URL(`http://${m[1]!}${port === null ? '' : `:${port}`}/`).host;
  } catch {
    return null;
  }
}
