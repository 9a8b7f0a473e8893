import type Database from 'better-sqlite3';
import type {
  Alert,
  CameraRecord,
  AlertType,
  ControlAction,
  ControlRequest,
  Device,
  DeviceStatus,
  DeviceType,
  EventType,
  Page,
  PageKey,
  Recording,
  RecordingStatus,
} from '../domain/types.js';
import { newId } from '../domain/ids.js';
import { Connection } from './connection.js';
import { type ControlOutcome, ControlRequests, type NewControlRequest } from './control.js';
import { type ListFilter, type ListOptions, PagedList } from './paging.js';

import {
  type AlertFilter,
  type InFlightClip,
  MediaRecords,
  type NewAlert,
  type NewRecording,
  type OpenEpisode,
  type PartOutcome,
  type RecordingFile,
  type RecordingFilter,
} from './media.js';
import {
  type LocalUserRecord,
  type OAuthClientRecord,
  type OAuthCodeRecord,
  type OAuthGrantRecord,
  type OAuthIssue,
  OAuthRecords,
  type OAuthRefreshTokenRecord,
} from './oauth.js';
import { Outbox, type OutboxKind, type OutboxMessage } from './outbox.js';

export { DATABASE_FILE, StoreError } from './connection.js';
export type { AlertFilter, InFlightClip, NewAlert, NewRecording, OpenEpisode, PartOutcome, RecordingFile, RecordingFilter } from './media.js';
export type { LocalUserRecord, OAuthClientRecord, OAuthCodeRecord, OAuthGrantRecord, OAuthIssue, OAuthRefreshTokenRecord } from './oauth.js';
export type { OutboxKind, OutboxMessage } from './outbox.js';

interface DeviceRow {
  id: string;
  name: string;
  type: string;
  status: string;
  model: string | null;
  manufacturer: string | null;
  firmware_version: string | null;
  last_seen_at: number | null;
  created_at: number;
  /** From the device_rows view: the camera's ONVIF device service URL. */
  onvif_url: string | null;
}
interface CameraRow {
  device_id: string;
  onvif_url: string;
  source: string;
  username: string | null;
  password_sealed: string | null;
  serial: string | null;
  main_profile: string | null;
  main_stream_uri: string | null;
  sub_profile: string | null;
  sub_stream_uri: string | null;
  snapshot_uri: string | null;
  clock_offset_ms: number | null;
}

// CHECK constraints in the schema guarantee the enum columns; these casts only restore the types.
const toDevice = (r: DeviceRow): Device => ({
  id: r.id,
  name: r.name,
  type: r.type as DeviceType,
  status: r.status as DeviceStatus,
  model: r.model,
  manufacturer: r.manufacturer,
  firmwareVersion: r.firmware_version,
  lastSeenAt: r.last_seen_at,
  createdAt: r.created_at,
  address: cameraAddress(r.onvif_url),
});

/** host[:port] of a camera's service URL: never its credentials or path. */
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
  source: r.source as CameraRecord['source'],
  username: r.username,
  passwordSealed: r.password_sealed,
  serial: r.serial,
  mainProfile: r.main_profile,
  mainStreamUri: r.main_stream_uri,
  subProfile: r.sub_profile,
  subStreamUri: r.sub_stream_uri,
  snapshotUri: r.snapshot_uri,
  clockOffsetMs: r.clock_offset_ms,
});

export interface DeviceFilter extends ListOptions {
  status?: DeviceStatus;
  type?: DeviceType;
}
/** What a device is written with; its address comes from its camera row. */
export type DeviceUpsert = Omit<Device, 'createdAt' | 'address'> & { createdAt?: number };

/** How stale a device's last_seen_at may get while it stays online (a write per camera at most this often). */
export const LAST_SEEN_WRITE_MS = 10 * 60_000;

/**
 * The gateway's one SQLite database. This folder is the only place with SQL; everything else calls
 * these typed functions. Values reach SQL only as bound parameters.
 */
export class Store {
  // Prepared once per distinct SQL text; the set is finite (fixed statements plus filter combinations).
  private readonly statements = new Map<string, Database.Statement>();
  private readonly deviceList: PagedList<DeviceRow, Device>;
  private readonly outbox: Outbox;
  private readonly media: MediaRecords;
  private readonly oauth: OAuthRecords;
  private readonly control: ControlRequests;

  private constructor(private readonly conn: Connection) {
    const { db, pages } = conn;
    this.deviceList = new PagedList(db, pages, { table: 'device_rows', keyColumn: 'created_at', toItem: toDevice, keyOf: (d) => ({ at: d.createdAt, id: d.id }) });
    this.outbox = new Outbox(conn);
    this.media = new MediaRecords(conn, this.outbox);
    this.oauth = new OAuthRecords(conn);
    this.control = new ControlRequests(conn, this.outbox);
  }

  private sql(text: string): Database.Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      stmt = this.conn.db.prepare(text);
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  private write(sqlText: string, params: unknown): Database.RunResult {
    return this.conn.run(this.sql(sqlText), params);
  }

  static open(dataDir: string): Store {
    return new Store(Connection.open(dataDir));
  }

  get file(): string {
    return this.conn.file;
  }

  close(): void {
    this.conn.close();
  }

  get schemaVersion(): number {
    return this.conn.schemaVersion;
  }

  /** Runs fn in one transaction: all its writes land together or none do. */
  transaction<T>(fn: () => T): T {
    return this.conn.transaction(fn);
  }

  // --- outbox (messages for the cloud)

  /**
   * Starts keeping messages for the cloud, at most maxRows of them; `onMessage` is told of each new
   * one (synchronously, maybe inside its transaction: look at the outbox later, not from the call).
   */
  enableOutbox(maxRows: number, onMessage: (() => void) | null = null): void {
    this.outbox.enable(maxRows, onMessage);
  }

  get outboxSize(): number {
    return this.outbox.size;
  }

  /** Messages given up because the outbox was full (for /metrics), by kind. */
  get outboxEvicted(): Readonly<Record<OutboxKind, number>> {
    return this.outbox.evicted;
  }

  /** The oldest messages after `afterSeq`, in order. */
  outboxBatch(afterSeq: number, limit: number): OutboxMessage[] {
    return this.outbox.batch(afterSeq, limit);
  }

  /** A message the broker acknowledged. */
  deleteOutboxMessage(seq: number): void {
    this.outbox.deleteMessage(seq);
  }

  /** Messages the broker acknowledged, in one transaction (one fsync for many acknowledgements). */
  deleteOutboxMessages(seqs: readonly number[]): void {
    this.outbox.deleteMessages(seqs);
  }

  /** Every camera's device record (Home Assistant discovery). */
  listCameraDevices(): Device[] {
    return (this.sql('SELECT d.* FROM device_rows d JOIN cameras c ON c.device_id = d.id ORDER BY d.id').all() as DeviceRow[]).map(toDevice);
  }

  // --- devices

  upsertDevice(d: DeviceUpsert, now = Date.now()): Device {
    return this.transaction(() => {
      const before = this.getDevice(d.id);
      const device = this.writeDevice(d, now);
      // last_seen_at alone changes on every contact; the cloud hears of real changes only.
      if (!before || !sameDeviceApartFromLastSeen(before, device)) this.outbox.enqueue('device', device.id, device, now);
      return device;
    });
  }

  private writeDevice(d: DeviceUpsert, now: number): Device {
    this.write(
      `INSERT INTO devices (id, name, type, status, model, manufacturer, firmware_version, last_seen_at, created_at, updated_at)
         VALUES (@id, @name, @type, @status, @model, @manufacturer, @firmwareVersion, @lastSeenAt, @createdAt, @now)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type, status = excluded.status,
           model = excluded.model, manufacturer = excluded.manufacturer, firmware_version = excluded.firmware_version,
           last_seen_at = excluded.last_seen_at, updated_at = excluded.updated_at`,
      { ...d, createdAt: d.createdAt ?? now, now },
    );
    return this.getDevice(d.id) as Device;
  }

  getDevice(id: string): Device | null {
    const row = this.sql('SELECT * FROM device_rows WHERE id = ?').get(id) as DeviceRow | undefined;
    return row ? toDevice(row) : null;
  }

  listDevices(f: DeviceFilter): Page<Device> {
    const filters: ListFilter[] = [];
    if (f.status) filters.push(['status = ?', f.status]);
    if (f.type) filters.push(['type = ?', f.type]);
    return this.deviceList.page(filters, f);
  }

  /**
   * Sets a device's status (and last_seen_at when online). When the status changes and an alert is
   * given, the alert is written in the same transaction. Null when there is no such device.
   */
  setDeviceStatus(id: string, status: DeviceStatus, now: number, alertOnChange: NewAlert | null = null): { device: Device; changed: boolean } | null {
    return this.transaction(() => {
      const before = this.getDevice(id);
      if (!before) return null;
      const changed = before.status !== status;
      // Health checks confirm "online" every few seconds per camera; writing each one would cost the
      // SD card tens of MB a day in WAL for a timestamp. last_seen_at is kept to LAST_SEEN_WRITE_MS.
      const fresh = before.lastSeenAt !== null && now - before.lastSeenAt < LAST_SEEN_WRITE_MS;
      if (!changed && (status !== 'online' || fresh)) return { device: before, changed };
      this.write(
        `UPDATE devices SET status = @status, updated_at = @now,
           last_seen_at = CASE WHEN @status = 'online' THEN @now ELSE last_seen_at END WHERE id = @id`,
        { id, status, now },
      );
      if (changed && alertOnChange) this.media.insertAlert(alertOnChange);
      const device = this.getDevice(id) as Device;
      if (changed) this.outbox.enqueue('device', id, device, now);
      return { device, changed };
    });
  }

  // --- cameras (how to reach them) and their aliases

  /** The device already known under any of these aliases (endpoint reference, serial, address). */
  findDeviceByAlias(aliases: readonly string[]): string | null {
    for (const alias of aliases) {
      const row = this.sql('SELECT device_id FROM device_aliases WHERE alias = ?').get(alias) as { device_id: string } | undefined;
      if (row) return row.device_id;
    }
    return null;
  }

  aliasesOf(deviceId: string): string[] {
    return this.sql('SELECT alias FROM device_aliases WHERE device_id = ? ORDER BY alias').pluck().all(deviceId) as string[];
  }

  addAliases(deviceId: string, aliases: readonly string[]): void {
    for (const alias of aliases) this.write('INSERT OR IGNORE INTO device_aliases (alias, device_id) VALUES (@alias, @deviceId)', { alias, deviceId });
  }

  upsertCamera(c: CameraRecord, now = Date.now()): void {
    this.write(
      `INSERT INTO cameras (device_id, onvif_url, source, username, password_sealed, serial, main_profile, main_stream_uri,
         sub_profile, sub_stream_uri, snapshot_uri, clock_offset_ms, updated_at)
       VALUES (@deviceId, @onvifUrl, @source, @username, @passwordSealed, @serial, @mainProfile, @mainStreamUri,
         @subProfile, @subStreamUri, @snapshotUri, @clockOffsetMs, @now)
       ON CONFLICT (device_id) DO UPDATE SET onvif_url = excluded.onvif_url, source = excluded.source,
         username = excluded.username, password_sealed = excluded.password_sealed, serial = excluded.serial,
         main_profile = excluded.main_profile, main_stream_uri = excluded.main_stream_uri, sub_profile = excluded.sub_profile,
         sub_stream_uri = excluded.sub_stream_uri, snapshot_uri = excluded.snapshot_uri,
         clock_offset_ms = excluded.clock_offset_ms, updated_at = excluded.updated_at`,
      { ...c, now },
    );
  }

  getCamera(deviceId: string): CameraRecord | null {
    const row = this.sql('SELECT * FROM cameras WHERE device_id = ?').get(deviceId) as CameraRow | undefined;
    return row ? toCamera(row) : null;
  }

  listCameras(): CameraRecord[] {
    return (this.sql('SELECT * FROM cameras ORDER BY device_id').all() as CameraRow[]).map(toCamera);
  }

  // --- recordings, alerts and the episodes being recorded (media.ts)

  insertRecording(r: NewRecording, now?: number): Recording {
    return this.media.insertRecording(r, now);
  }

  saveRecording(r: NewRecording, now?: number, part?: PartOutcome): Recording {
    return this.media.saveRecording(r, now, part);
  }

  settleEpisodePart(alertId: string, part: PartOutcome, now?: number): void {
    this.media.settleEpisodePart(alertId, part, now);
  }

  listRecordingFiles(): RecordingFile[] {
    return this.media.listRecordingFiles();
  }

  deleteRecording(id: string): void {
    this.media.deleteRecording(id);
  }

  getRecording(id: string): Recording | null {
    return this.media.getRecording(id);
  }

  listRecordings(f: RecordingFilter): Page<Recording> {
    return this.media.listRecordings(f);
  }

  openEpisode(a: NewAlert, e: { segmentDir: string; bootAt: number; fromAt: number }, now?: number): Alert {
    return this.media.openEpisode(a, e, now);
  }

  beginClip(alertId: string, clip: InFlightClip, now?: number): void {
    this.media.beginClip(alertId, clip, now);
  }

  listOpenEpisodes(): OpenEpisode[] {
    return this.media.listOpenEpisodes();
  }

  insertAlert(a: NewAlert & { recordingStatus?: RecordingStatus }): Alert {
    return this.media.insertAlert(a);
  }

  setAlertType(id: string, type: AlertType, message: string, now?: number): void {
    this.media.setAlertType(id, type, message, now);
  }

  linkAlertRecording(alertId: string, recordingId: string, now?: number): void {
    this.media.linkAlertRecording(alertId, recordingId, now);
  }

  getAlert(id: string): Alert | null {
    return this.media.getAlert(id);
  }

  listAlerts(f: AlertFilter): Page<Alert> {
    return this.media.listAlerts(f);
  }

  markAlertRead(id: string, now?: number): Alert | null {
    return this.media.markAlertRead(id, now);
  }

  // --- the local authorization server (oauth.ts)

  insertOAuthClient(c: OAuthClientRecord): void {
    this.oauth.insertOAuthClient(c);
  }

  getOAuthClient(id: string): OAuthClientRecord | null {
    return this.oauth.getOAuthClient(id);
  }

  listOAuthClients(): OAuthClientRecord[] {
    return this.oauth.listOAuthClients();
  }

  deleteOAuthClient(id: string): boolean {
    return this.oauth.deleteOAuthClient(id);
  }

  insertLocalUser(u: LocalUserRecord): void {
    this.oauth.insertLocalUser(u);
  }

  getLocalUser(username: string): LocalUserRecord | null {
    return this.oauth.getLocalUser(username);
  }

  listLocalUsers(): Array<{ username: string; createdAt: number }> {
    return this.oauth.listLocalUsers();
  }

  deleteLocalUser(username: string, now?: number): boolean {
    return this.oauth.deleteLocalUser(username, now);
  }

  updateLocalUserPassword(username: string, passwordHash: string): void {
    this.oauth.updateLocalUserPassword(username, passwordHash);
  }

  insertOAuthCode(c: OAuthCodeRecord): void {
    this.oauth.insertOAuthCode(c);
  }

  getOAuthCode(codeHash: string): (OAuthCodeRecord & { grantId: string | null }) | null {
    return this.oauth.getOAuthCode(codeHash);
  }

  redeemOAuthCode(codeHash: string, grant: OAuthGrantRecord, issued: OAuthIssue): boolean {
    return this.oauth.redeemOAuthCode(codeHash, grant, issued);
  }

  insertOAuthGrant(grant: OAuthGrantRecord, issued: OAuthIssue): void {
    this.oauth.insertOAuthGrant(grant, issued);
  }

  getOAuthGrant(id: string): OAuthGrantRecord | null {
    return this.oauth.getOAuthGrant(id);
  }

  getOAuthRefreshToken(tokenHash: string): OAuthRefreshTokenRecord | null {
    return this.oauth.getOAuthRefreshToken(tokenHash);
  }

  rotateOAuthRefreshToken(tokenHash: string, grantId: string, issued: OAuthIssue, now: number): boolean {
    return this.oauth.rotateOAuthRefreshToken(tokenHash, grantId, issued, now);
  }

  revokeOAuthGrant(id: string, now?: number): void {
    this.oauth.revokeOAuthGrant(id, now);
  }

  isAccessTokenRevoked(jti: string): boolean {
    return this.oauth.isAccessTokenRevoked(jti);
  }

  pruneOAuth(now?: number): void {
    this.oauth.pruneOAuth(now);
  }

  // --- control requests (control.ts)

  insertControlRequest(c: NewControlRequest): ControlRequest {
    return this.control.insertControlRequest(c);
  }

  completeControlRequest(id: string, outcome: ControlOutcome, now?: number): ControlRequest {
    return this.control.completeControlRequest(id, outcome, now);
  }

  getControlRequest(id: string): ControlRequest | null {
    return this.control.getControlRequest(id);
  }

  /** A control result asked for again (a command id the cloud repeated): queued once more. */
  requeueControlResult(id: string, now?: number): void {
    this.control.requeueControlResult(id, now);
  }
}

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
