import type Database from 'better-sqlite3';
import type { DeviceAlias } from '../domain/device-alias.js';
import type {
  AppCameraSettings,
  DetectionMode,
  FileCameraSettings,
  RecordingMode,
  SettingDefaults,
  Zone,
} from '../domain/camera-settings.js';
import type { Polygon } from '../domain/polygon.js';
import type { CameraRecord, Device } from '../domain/types.js';
import { type Connection, mustExist } from './connection.js';
import type { Devices } from './devices.js';
import type { EventLog } from './event-log.js';
import type { Outbox } from './outbox.js';
import type { RememberedObjects } from './remembered-objects.js';

// What the owner set for each camera through the API (table camera_settings), cameras added
// through it, and devices removed through it. The settings in effect are made where devices are
// read (devices.ts), from these and what the config file sets (the base, given at start).

/** What the config file sets for each camera, by its device service URL, and what nobody sets. */
export interface CameraSettingsBase {
  fileFor(onvifUrl: string): FileCameraSettings | null;
  defaults: SettingDefaults;
}

export const NO_SETTINGS_BASE: CameraSettingsBase = { fileFor: () => null, defaults: { recording: 'events' } };

/** The columns of a device_rows row that come from camera_settings (all null without a row). CHECKs keep the enums. */
export interface AppSettingsColumns {
  app_name_set: 0 | 1 | null;
  app_username: string | null;
  app_has_password: 0 | 1 | null;
  app_enabled: 0 | 1 | null;
  app_recording: RecordingMode | null;
  app_detection: DetectionMode | null;
  app_motion_mask: string | null;
  app_zones: string | null;
}

/** The app's settings of a device row; null when the owner set nothing through the API. */
export function appSettingsOf(r: AppSettingsColumns): AppCameraSettings | null {
  if (r.app_name_set === null) return null;
  return {
    nameSet: r.app_name_set === 1,
    username: r.app_username,
    hasPassword: r.app_has_password === 1,
    enabled: r.app_enabled === null ? null : r.app_enabled === 1,
    recording: r.app_recording,
    detection: r.app_detection,
    motionMask: r.app_motion_mask === null ? null : readPolygons(r.app_motion_mask),
    zones: r.app_zones === null ? null : readZones(r.app_zones),
  };
}

/** JSON this store wrote; what does not read as polygons reads as none (a damaged row masks nothing). */
function readPolygons(text: string): Polygon[] {
  const value = parseJson(text);
  return Array.isArray(value) ? value.filter(isPolygon) : [];
}

/** Zones written before alertOnStationary and loiteringS existed read without them (false, none). */
function readZones(text: string): Zone[] {
  const value = parseJson(text);
  if (!Array.isArray(value)) return [];
  return value.filter(isZone);
}

function isZone(value: unknown): value is Zone {
  if (typeof value !== 'object' || value === null) return false;
  const z = value as Zone;
  return (
    typeof z.name === 'string' &&
    typeof z.required === 'boolean' &&
    isPolygon(z.polygon) &&
    (z.alertOnStationary === undefined || typeof z.alertOnStationary === 'boolean') &&
    (z.loiteringS === undefined || z.loiteringS === null || Number.isInteger(z.loiteringS))
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function isPolygon(v: unknown): v is Polygon {
  return (
    Array.isArray(v) &&
    v.every((p) => Array.isArray(p) && p.length === 2 && p.every((n) => typeof n === 'number' && Number.isFinite(n)))
  );
}

/** What the camera manager reads of a camera's own settings: how to reach it and whether to. */
export interface StoredCameraSettings {
  deviceId: string;
  /** The device service URL of a camera added through the API; null for the others. */
  addedUrl: string | null;
  username: string | null;
  /** Sealed as CameraRecord.passwordSealed is (SecretBox label `camera-password:<deviceId>`). */
  passwordSealed: string | null;
  enabled: boolean | null;
}

/** A plain RTSP camera's stream URLs as the gateway keeps them (parseRtspUrl's), and the alias of the main one. */
export interface RtspStreams {
  main: string;
  sub: string | null;
  alias: DeviceAlias;
}

/** A change of a camera's settings; absent fields stay as they are. */
export interface SettingsChange {
  name?: string;
  account?: { username: string; passwordSealed: string | null };
  /** A plain RTSP camera's new URLs: its camera row, its added_url and its address alias follow. */
  streams?: RtspStreams;
  enabled?: boolean;
  recording?: RecordingMode;
  detection?: DetectionMode;
  motionMask?: Polygon[];
  zones?: Zone[];
}

/** A camera added through the API: a new device, or a removed one at the same address brought back. */
export interface NewAppCamera {
  id: string;
  name: string;
  /** The owner gave the name (rather than the gateway making one up). */
  nameSet: boolean;
  onvifUrl: string;
  aliases: readonly DeviceAlias[];
  /** Null: none (a plain RTSP camera that asks for no login). */
  username: string | null;
  passwordSealed: string | null;
  /** A plain RTSP camera: its camera row is written now, from these (onvifUrl is the main stream's). */
  streams?: { main: string; sub: string | null };
}

interface SettingsRow {
  device_id: string;
  added_url: string | null;
  username: string | null;
  password_sealed: string | null;
  enabled: 0 | 1 | null;
}

type Bit = 0 | 1 | null;
const bit = (b: boolean | undefined): Bit => (b === undefined ? null : b ? 1 : 0);

function prepare(db: Database.Database) {
  return {
    settings: db.prepare<[deviceId: string], SettingsRow>(
      'SELECT device_id, added_url, username, password_sealed, enabled FROM camera_settings WHERE device_id = ?',
    ),
    added: db.prepare<[], { device_id: string; added_url: string }>(
      `SELECT s.device_id, s.added_url FROM camera_settings s JOIN devices d ON d.id = s.device_id
         WHERE s.added_url IS NOT NULL AND d.removed_at IS NULL ORDER BY s.device_id`,
    ),
    removed: db.prepare<[id: string], number>('SELECT removed_at IS NOT NULL FROM devices WHERE id = ?').pluck(),
    change: db.prepare<{
      deviceId: string;
      nameSet: 0 | 1;
      setAccount: 0 | 1;
      username: string | null;
      passwordSealed: string | null;
      enabled: Bit;
      recording: RecordingMode | null;
      detection: DetectionMode | null;
      motionMask: string | null;
      zones: string | null;
      now: number;
      by: string;
    }>(
      `INSERT INTO camera_settings (device_id, name_set, username, password_sealed, enabled, recording, detection,
         motion_mask, zones, updated_at, updated_by)
       VALUES (@deviceId, @nameSet, @username, @passwordSealed, @enabled, @recording, @detection, @motionMask, @zones,
         @now, @by)
       ON CONFLICT (device_id) DO UPDATE SET name_set = MAX(name_set, excluded.name_set),
         username = CASE WHEN @setAccount THEN excluded.username ELSE username END,
         password_sealed = CASE WHEN @setAccount THEN excluded.password_sealed ELSE password_sealed END,
         enabled = COALESCE(excluded.enabled, enabled), recording = COALESCE(excluded.recording, recording),
         detection = COALESCE(excluded.detection, detection), motion_mask = COALESCE(excluded.motion_mask, motion_mask),
         zones = COALESCE(excluded.zones, zones), updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
    ),
    rename: db.prepare<{ id: string; name: string; now: number }>(
      'UPDATE devices SET name = @name, updated_at = @now WHERE id = @id',
    ),
    restore: db.prepare<{ id: string; now: number }>(
      'UPDATE devices SET removed_at = NULL, updated_at = @now WHERE id = @id',
    ),
    dropSettings: db.prepare<[deviceId: string]>('DELETE FROM camera_settings WHERE device_id = ?'),
    insertAdded: db.prepare<{
      deviceId: string;
      url: string;
      nameSet: 0 | 1;
      username: string | null;
      passwordSealed: string | null;
      now: number;
      by: string;
    }>(
      `INSERT INTO camera_settings (device_id, added_url, name_set, username, password_sealed, updated_at, updated_by)
         VALUES (@deviceId, @url, @nameSet, @username, @passwordSealed, @now, @by)`,
    ),
    remove: db.prepare<{ id: string; now: number }>(
      "UPDATE devices SET removed_at = @now, status = 'offline', updated_at = @now WHERE id = @id",
    ),
    moveAdded: db.prepare<{ deviceId: string; url: string; now: number; by: string }>(
      'UPDATE camera_settings SET added_url = @url, updated_at = @now, updated_by = @by WHERE device_id = @deviceId',
    ),
    // Its address stays (adding the camera again finds the device by it); how to log in and stream goes.
    forgetCamera: db.prepare<{ id: string; now: number }>(
      `UPDATE cameras SET username = NULL, password_sealed = NULL, main_stream_uri = NULL, sub_stream_uri = NULL,
         snapshot_uri = NULL, updated_at = @now WHERE device_id = @id`,
    ),
  };
}

/** The camera row of a plain RTSP camera: its URLs and account, nothing found by ONVIF. */
const rtspCamera = (
  deviceId: string,
  streams: { main: string; sub: string | null },
  username: string | null,
  passwordSealed: string | null,
): CameraRecord => ({
  deviceId,
  onvifUrl: streams.main,
  source: 'app',
  username,
  passwordSealed,
  serial: null,
  mainProfile: null,
  mainStreamUri: streams.main,
  subProfile: null,
  subStreamUri: streams.sub,
  snapshotUri: null,
  clockOffsetMs: null,
  ptz: null,
});

/**
 * The owner's settings per camera, cameras added and devices removed through the API. Each change
 * writes the device's new record to the outbox in its transaction (a removal: an empty one), so the
 * cloud hears of it, and to the event stream (device.updated, device.removed), so every open app
 * does; passwords only ever sealed, and never in a record.
 */
export class CameraSettingsRecords {
  private readonly sql: ReturnType<typeof prepare>;

  constructor(
    private readonly conn: Connection,
    private readonly devices: Devices,
    private readonly outbox: Outbox,
    private readonly events: EventLog,
    private readonly remembered: RememberedObjects,
  ) {
    this.sql = prepare(conn.db);
  }

  cameraSettings(deviceId: string): StoredCameraSettings | null {
    const r = this.sql.settings.get(deviceId);
    if (!r) return null;
    return {
      deviceId: r.device_id,
      addedUrl: r.added_url,
      username: r.username,
      passwordSealed: r.password_sealed,
      enabled: r.enabled === null ? null : r.enabled === 1,
    };
  }

  /** The cameras added through the API and not removed since, to be watched again after a restart. */
  addedCameras(): Array<{ deviceId: string; onvifUrl: string }> {
    return this.sql.added.all().map((r) => ({ deviceId: r.device_id, onvifUrl: r.added_url }));
  }

  isDeviceRemoved(deviceId: string): boolean {
    return this.sql.removed.get(deviceId) === 1;
  }

  /** Writes the change; the device as it is now, or null when there is no such device. */
  changeCameraSettings(deviceId: string, c: SettingsChange, by: string, now = Date.now()): Device | null {
    return this.conn.transaction(() => {
      if (!this.devices.getDevice(deviceId)) return null;
      if (c.name !== undefined) this.conn.run(this.sql.rename, { id: deviceId, name: c.name, now });
      this.conn.run(this.sql.change, {
        deviceId,
        nameSet: c.name === undefined ? 0 : 1,
        setAccount: c.account === undefined ? 0 : 1,
        username: c.account?.username ?? null,
        passwordSealed: c.account?.passwordSealed ?? null,
        enabled: bit(c.enabled),
        recording: c.recording ?? null,
        detection: c.detection ?? null,
        motionMask: c.motionMask === undefined ? null : JSON.stringify(c.motionMask),
        zones: c.zones === undefined ? null : JSON.stringify(c.zones),
        now,
        by,
      });
      if (c.streams) this.moveStreams(deviceId, c.streams, now, by);
      const device = this.published(deviceId, now);
      this.events.append('device.updated', deviceId, device, now);
      return device;
    });
  }

  /** A camera added through the API, offline until the camera manager reaches it. */
  addCamera(c: NewAppCamera, by: string, now = Date.now()): Device {
    return this.conn.transaction(() => {
      this.conn.run(this.sql.restore, { id: c.id, now });
      this.devices.upsertDevice(
        {
          id: c.id,
          name: c.name,
          type: 'camera',
          status: 'offline',
          model: null,
          manufacturer: null,
          firmwareVersion: null,
          lastSeenAt: null,
        },
        now,
      );
      this.devices.addAliases(c.id, c.aliases);
      // A camera brought back starts afresh: what was set for it before its removal is gone.
      this.conn.run(this.sql.dropSettings, c.id);
      this.conn.run(this.sql.insertAdded, {
        deviceId: c.id,
        url: c.onvifUrl,
        nameSet: c.nameSet ? 1 : 0,
        username: c.username,
        passwordSealed: c.passwordSealed,
        now,
        by,
      });
      if (c.streams) this.devices.upsertCamera(rtspCamera(c.id, c.streams, c.username, c.passwordSealed), now);
      const device = this.published(c.id, now);
      // Also when it comes back with the status it had when removed (no device.status then).
      this.events.append('device.updated', c.id, device, now);
      return device;
    });
  }

  /**
   * A plain RTSP camera at new URLs: its camera row, the URL it is watched at after a restart, and
   * the alias that finds it (its old URL's is given up, so another camera may be added there).
   */
  private moveStreams(deviceId: string, streams: RtspStreams, now: number, by: string): void {
    const camera = this.devices.getCamera(deviceId);
    if (!camera) return;
    this.devices.upsertCamera(
      {
        ...camera,
        onvifUrl: streams.main,
        mainStreamUri: streams.main,
        subStreamUri: streams.sub,
      },
      now,
    );
    this.conn.run(this.sql.moveAdded, { deviceId, url: streams.main, now, by });
    this.devices.replaceUrlAlias(deviceId, streams.alias);
  }

  /** A removed device listed again (the config file names it after all); its settings start afresh. */
  restoreDevice(deviceId: string, now = Date.now()): void {
    this.conn.run(this.sql.restore, { id: deviceId, now });
  }

  /**
   * The gateway forgets the device: no longer listed, its settings, the camera's account and stream
   * addresses gone;
   * its recordings and alerts stay until their retention. False when there is no such device.
   */
  removeDevice(deviceId: string, now = Date.now()): boolean {
    return this.conn.transaction(() => {
      const device = this.devices.getDevice(deviceId);
      if (!device) return false;
      this.conn.run(this.sql.remove, { id: deviceId, now });
      this.conn.run(this.sql.dropSettings, deviceId);
      this.conn.run(this.sql.forgetCamera, { id: deviceId, now });
      this.remembered.forgetRememberedObjects(deviceId);
      this.outbox.enqueue('device', deviceId, null, now);
      this.events.append('device.removed', deviceId, device, now);
      return true;
    });
  }

  private published(deviceId: string, now: number): Device {
    const device = mustExist(this.devices.getDevice(deviceId), 'the device just written');
    this.outbox.enqueue('device', deviceId, device, now);
    return device;
  }
}
