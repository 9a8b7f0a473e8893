import type Database from 'better-sqlite3';
import { type DeviceAlias, isDeviceAlias } from '../domain/device-alias.js';
import { isRtspUrl, rtspUrlForDisplay } from '../domain/rtsp-url.js';
import { effectiveSettings } from '../domain/camera-settings.js';
import { PTZ_LIMITS, type DevicePtz } from '../domain/ptz.js';
import type { CameraRecord, Device, DeviceFields, DeviceStatus, DeviceType, Page } from '../domain/types.js';
import {
  type AppSettingsColumns,
  appSettingsOf,
  type CameraSettingsBase,
  NO_SETTINGS_BASE,
} from './camera-settings.js';
import { type Connection, mustExist } from './connection.js';
import type { MediaRecords, NewAlert } from './media.js';
import type { EventLog } from './event-log.js';
import type { Outbox } from './outbox.js';
import { type ListFilter, type ListOptions, PagedList } from './paging.js';

// Row types. CHECK constraints in the schema keep type, status and source to their enums.
interface DeviceRow extends AppSettingsColumns {
  id: string;
  name: string;
  type: DeviceType;
  status: DeviceStatus;
  model: string | null;
  manufacturer: string | null;
  firmware_version: string | null;
  last_seen_at: number | null;
  created_at: number;
  removed_at: number | null;
  /** From the device_rows view: the camera's ONVIF device service URL. */
  onvif_url: string | null;
  /** From the device_rows view: the account adoption found (the camera row's). */
  camera_username: string | null;
  camera_has_password: 0 | 1 | null;
  /** From the device_rows view: the camera row's ptz (JSON, see readPtz). */
  camera_ptz: string | null;
}
interface CameraRow {
  device_id: string;
  onvif_url: string;
  source: CameraRecord['source'];
  username: string | null;
  password_sealed: string | null;
  serial: string | null;
  main_profile: string | null;
  main_stream_uri: string | null;
  sub_profile: string | null;
  sub_stream_uri: string | null;
  snapshot_uri: string | null;
  clock_offset_ms: number | null;
  ptz: string | null;
}

/**
 * A device row as the domain record: its settings the file's (the base) with the app's over them. A
 * plain RTSP camera's row holds its main stream URL where an ONVIF camera's holds its service URL;
 * its sub stream URL is its camera row's (`subStreamOf`, read for those cameras only).
 */
const toDevice = (r: DeviceRow, base: CameraSettingsBase, subStreamOf: (id: string) => string | null): Device => {
  const rtsp = r.onvif_url !== null && isRtspUrl(r.onvif_url);
  const sub = rtsp ? subStreamOf(r.id) : null;
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    status: r.status,
    model: r.model,
    manufacturer: r.manufacturer,
    firmwareVersion: r.firmware_version,
    lastSeenAt: r.last_seen_at,
    createdAt: r.created_at,
    address: cameraAddress(r.onvif_url),
    source: rtsp ? 'rtsp' : 'onvif',
    rtspUrl: rtsp && r.onvif_url !== null ? rtspUrlForDisplay(r.onvif_url) : null,
    subRtspUrl: sub === null ? null : rtspUrlForDisplay(sub),
    settings: effectiveSettings(
      r.onvif_url === null ? null : base.fileFor(r.onvif_url),
      appSettingsOf(r),
      { username: r.camera_username, hasPassword: r.camera_has_password === 1 },
      base.defaults,
    ),
    ptz: readPtz(r.camera_ptz),
  };
};

/** JSON this store wrote (writePtz); what does not read as one is a camera without PTZ. */
export function readPtz(text: string | null): DevicePtz | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { presets, canCenter } = value as { presets?: unknown; canCenter?: unknown };
  if (!Array.isArray(presets) || typeof canCenter !== 'boolean') return null;
  return {
    presets: presets
      .filter(
        (p): p is { token: string; name: string } =>
          typeof p === 'object' &&
          p !== null &&
          typeof (p as { token?: unknown }).token === 'string' &&
          typeof (p as { name?: unknown }).name === 'string',
      )
      .slice(0, PTZ_LIMITS.presets)
      .map((p) => ({ token: p.token, name: p.name })),
    canCenter,
  };
}

const writePtz = (ptz: DevicePtz | null): string | null =>
  ptz === null
    ? null
    : JSON.stringify({ presets: ptz.presets.map((p) => ({ token: p.token, name: p.name })), canCenter: ptz.canCenter });

/** host[:port] of a camera's service URL (or RTSP URL): never its credentials or path. */
function cameraAddress(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}
const toCamera = (r: CameraRow): CameraRecord => ({
  deviceId: r.device_id,
  onvifUrl: r.onvif_url,
  source: r.source,
  username: r.username,
  passwordSealed: r.password_sealed,
  serial: r.serial,
  mainProfile: r.main_profile,
  mainStreamUri: r.main_stream_uri,
  subProfile: r.sub_profile,
  subStreamUri: r.sub_stream_uri,
  snapshotUri: r.snapshot_uri,
  clockOffsetMs: r.clock_offset_ms,
  ptz: readPtz(r.ptz),
});

function sameDeviceApartFromLastSeen(a: Device, b: Device): boolean {
  return (
    a.name === b.name &&
    a.type === b.type &&
    a.status === b.status &&
    a.model === b.model &&
    a.manufacturer === b.manufacturer &&
    a.firmwareVersion === b.firmwareVersion &&
    a.createdAt === b.createdAt
  );
}

export interface DeviceFilter extends ListOptions {
  status?: DeviceStatus;
  type?: DeviceType;
}
/** What a device is written with; its address comes from its camera row. */
export type DeviceUpsert = DeviceFields & { createdAt?: number };

/** How stale a device's last_seen_at may get while it stays online (a write per camera at most this often). */
export const LAST_SEEN_WRITE_MS = 10 * 60_000;

function prepare(db: Database.Database) {
  return {
    upsertDevice: db.prepare<Omit<DeviceUpsert, 'createdAt'> & { createdAt: number; now: number }>(
      `INSERT INTO devices (id, name, type, status, model, manufacturer, firmware_version, last_seen_at, created_at, updated_at)
         VALUES (@id, @name, @type, @status, @model, @manufacturer, @firmwareVersion, @lastSeenAt, @createdAt, @now)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type, status = excluded.status,
           model = excluded.model, manufacturer = excluded.manufacturer, firmware_version = excluded.firmware_version,
           last_seen_at = excluded.last_seen_at, updated_at = excluded.updated_at`,
    ),
    device: db.prepare<[id: string], DeviceRow>('SELECT * FROM device_rows WHERE id = ?'),
    cameraDevices: db.prepare<[], DeviceRow>(
      'SELECT d.* FROM device_rows d JOIN cameras c ON c.device_id = d.id ORDER BY d.id',
    ),
    setStatus: db.prepare<{ id: string; status: DeviceStatus; now: number }>(
      `UPDATE devices SET status = @status, updated_at = @now,
         last_seen_at = CASE WHEN @status = 'online' THEN @now ELSE last_seen_at END WHERE id = @id`,
    ),

    deviceOfAlias: db
      .prepare<[alias: DeviceAlias], string>('SELECT device_id FROM device_aliases WHERE alias = ?')
      .pluck(),
    aliasesOf: db
      .prepare<[deviceId: string], string>('SELECT alias FROM device_aliases WHERE device_id = ? ORDER BY alias')
      .pluck(),
    addAlias: db.prepare<{ alias: DeviceAlias; deviceId: string }>(
      'INSERT OR IGNORE INTO device_aliases (alias, device_id) VALUES (@alias, @deviceId)',
    ),
    dropUrlAliases: db.prepare<[deviceId: string]>(
      "DELETE FROM device_aliases WHERE device_id = ? AND alias LIKE 'url:%'",
    ),
    dropAlias: db.prepare<[alias: DeviceAlias]>('DELETE FROM device_aliases WHERE alias = ?'),

    upsertCamera: db.prepare<Omit<CameraRecord, 'ptz'> & { ptz: string | null; now: number }>(
      `INSERT INTO cameras (device_id, onvif_url, source, username, password_sealed, serial, main_profile, main_stream_uri,
         sub_profile, sub_stream_uri, snapshot_uri, clock_offset_ms, ptz, updated_at)
       VALUES (@deviceId, @onvifUrl, @source, @username, @passwordSealed, @serial, @mainProfile, @mainStreamUri,
         @subProfile, @subStreamUri, @snapshotUri, @clockOffsetMs, @ptz, @now)
       ON CONFLICT (device_id) DO UPDATE SET onvif_url = excluded.onvif_url, source = excluded.source,
         username = excluded.username, password_sealed = excluded.password_sealed, serial = excluded.serial,
         main_profile = excluded.main_profile, main_stream_uri = excluded.main_stream_uri, sub_profile = excluded.sub_profile,
         sub_stream_uri = excluded.sub_stream_uri, snapshot_uri = excluded.snapshot_uri,
         clock_offset_ms = excluded.clock_offset_ms, ptz = excluded.ptz, updated_at = excluded.updated_at`,
    ),
    setPtz: db.prepare<{ deviceId: string; ptz: string | null; now: number }>(
      'UPDATE cameras SET ptz = @ptz, updated_at = @now WHERE device_id = @deviceId',
    ),
    camera: db.prepare<[deviceId: string], CameraRow>('SELECT * FROM cameras WHERE device_id = ?'),
    subStream: db
      .prepare<[deviceId: string], string | null>('SELECT sub_stream_uri FROM cameras WHERE device_id = ?')
      .pluck(),
    cameras: db.prepare<[], CameraRow>('SELECT * FROM cameras ORDER BY device_id'),
  };
}

/**
 * Devices, the cameras behind them (how to reach them) and the aliases they are known by. A real
 * change of a device reaches the outbox in its transaction; an offline alert is written by media.
 */
export class Devices {
  private readonly sql: ReturnType<typeof prepare>;
  private readonly deviceList: PagedList<DeviceRow, Device>;
  private base: CameraSettingsBase = NO_SETTINGS_BASE;

  constructor(
    private readonly conn: Connection,
    private readonly outbox: Outbox,
    private readonly media: MediaRecords,
    private readonly events: EventLog,
  ) {
    this.sql = prepare(conn.db);
    this.deviceList = new PagedList(conn.db, conn.pages, {
      table: 'device_rows',
      keyColumn: 'created_at',
      toItem: (r) => toDevice(r, this.base, this.subStreamOf),
      keyOf: (d) => ({ at: d.createdAt, id: d.id }),
    });
  }

  /**
   * What the config file sets for each camera, read into every Device's settings; set once at
   * start, before any device is read (the pages memoised so far are forgotten).
   */
  setSettingsBase(base: CameraSettingsBase): void {
    this.base = base;
    this.conn.pages.clear();
  }

  // --- devices

  upsertDevice(d: DeviceUpsert, now = Date.now()): Device {
    return this.conn.transaction(() => {
      const before = this.getDevice(d.id);
      this.conn.run(this.sql.upsertDevice, { ...d, createdAt: d.createdAt ?? now, now });
      const device = mustExist(this.getDevice(d.id), 'the device just written');
      // last_seen_at alone changes on every contact; the cloud hears of real changes only.
      if (!before || !sameDeviceApartFromLastSeen(before, device))
        this.outbox.enqueue('device', device.id, device, now);
      // A new device is told of too: it appears with its status.
      if (before?.status !== device.status) this.events.append('device.status', device.id, device, now);
      else if (!sameDeviceApartFromLastSeen(before, device))
        this.events.append('device.updated', device.id, device, now);
      return device;
    });
  }

  getDevice(id: string): Device | null {
    const row = this.sql.device.get(id);
    return row ? toDevice(row, this.base, this.subStreamOf) : null;
  }

  private readonly subStreamOf = (id: string): string | null => this.sql.subStream.get(id) ?? null;

  listDevices(f: DeviceFilter): Page<Device> {
    const filters: ListFilter[] = [];
    if (f.status) filters.push(['status = ?', f.status]);
    if (f.type) filters.push(['type = ?', f.type]);
    return this.deviceList.page(filters, f);
  }

  /** Every camera's device record (Home Assistant discovery). */
  listCameraDevices(): Device[] {
    return this.sql.cameraDevices.all().map((r) => toDevice(r, this.base, this.subStreamOf));
  }

  /**
   * Sets a device's status (and last_seen_at when online). When the status changes and an alert is
   * given, the alert is written in the same transaction. Null when there is no such device.
   */
  setDeviceStatus(
    id: string,
    status: DeviceStatus,
    now: number,
    alertOnChange: NewAlert | null = null,
  ): { device: Device; changed: boolean } | null {
    return this.conn.transaction(() => {
      const before = this.getDevice(id);
      if (!before) return null;
      const changed = before.status !== status;
      // Health checks confirm "online" every few seconds per camera; writing each one would cost the
      // SD card tens of MB a day in WAL for a timestamp. last_seen_at is kept to LAST_SEEN_WRITE_MS.
      const fresh = before.lastSeenAt !== null && now - before.lastSeenAt < LAST_SEEN_WRITE_MS;
      if (!changed && (status !== 'online' || fresh)) return { device: before, changed };
      this.conn.run(this.sql.setStatus, { id, status, now });
      if (changed && alertOnChange) this.media.insertAlert(alertOnChange);
      const device = mustExist(this.getDevice(id), 'the device just updated');
      if (changed) {
        this.outbox.enqueue('device', id, device, now);
        this.events.append('device.status', id, device, now);
      }
      return { device, changed };
    });
  }

  // --- cameras (how to reach them) and their aliases

  /** The device already known under any of these aliases (endpoint reference, serial, address). */
  findDeviceByAlias(aliases: readonly DeviceAlias[]): string | null {
    for (const alias of aliases) {
      const deviceId = this.sql.deviceOfAlias.get(alias);
      if (deviceId !== undefined) return deviceId;
    }
    return null;
  }

  /** The column has no CHECK on the kinds, so each alias read back is checked. */
  aliasesOf(deviceId: string): DeviceAlias[] {
    return this.sql.aliasesOf.all(deviceId).filter(isDeviceAlias);
  }

  addAliases(deviceId: string, aliases: readonly DeviceAlias[]): void {
    for (const alias of aliases) this.conn.run(this.sql.addAlias, { alias, deviceId });
  }

  /**
   * The device's address alias becomes `alias` (a plain RTSP camera given a new URL): its old one
   * is dropped, and one a removed device still held is taken over (the caller refuses one a device
   * in use holds).
   */
  replaceUrlAlias(deviceId: string, alias: DeviceAlias): void {
    this.conn.transaction(() => {
      this.conn.run(this.sql.dropUrlAliases, deviceId);
      this.conn.run(this.sql.dropAlias, alias);
      this.conn.run(this.sql.addAlias, { alias, deviceId });
    });
  }

  /** A change of what the camera offers of PTZ is a change of its Device: the cloud hears of it. */
  upsertCamera(c: CameraRecord, now = Date.now()): void {
    this.conn.transaction(() => {
      const before = this.sql.camera.get(c.deviceId)?.ptz ?? null;
      const ptz = writePtz(c.ptz);
      this.conn.run(this.sql.upsertCamera, { ...c, ptz, now });
      if (ptz !== before) this.deviceChanged(c.deviceId, now);
    });
  }

  /** What the camera offers of PTZ after a change of its presets; false when there is no such camera. */
  setCameraPtz(deviceId: string, ptz: DevicePtz | null, now = Date.now()): boolean {
    return this.conn.transaction(() => {
      const row = this.sql.camera.get(deviceId);
      if (!row) return false;
      const text = writePtz(ptz);
      if (text === row.ptz) return true;
      this.conn.run(this.sql.setPtz, { deviceId, ptz: text, now });
      this.deviceChanged(deviceId, now);
      return true;
    });
  }

  private deviceChanged(deviceId: string, now: number): void {
    const device = this.getDevice(deviceId);
    if (device) this.outbox.enqueue('device', deviceId, device, now);
  }

  getCamera(deviceId: string): CameraRecord | null {
    const row = this.sql.camera.get(deviceId);
    return row ? toCamera(row) : null;
  }

  listCameras(): CameraRecord[] {
    return this.sql.cameras.all().map(toCamera);
  }
}
