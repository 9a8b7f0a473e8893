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
interface RecordingRow {
  id: string;
  device_id: string;
  event_type: string;
  started_at: number;
  ended_at: number;
  size_bytes: number;
  file_name: string;
  alert_id: string | null;
  created_at: number;
}
interface AlertRow {
  id: string;
  device_id: string;
  type: string;
  message: string;
  created_at: number;
  read_at: number | null;
  recording_id: string | null;
  recording_status: string;
  recording_status_reason: string | null;
}
interface OpenEpisodeRow {
  alert_id: string;
  device_id: string;
  segment_dir: string;
  boot_at: number;
  from_at: number;
  clip_id: string | null;
  clip_started_at: number | null;
  clip_ended_at: number | null;
  clip_to: number | null;
  clip_event_type: string | null;
  clip_final: number | null;
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
const toRecording = (r: RecordingRow): Recording => ({
  id: r.id,
  deviceId: r.device_id,
  eventType: r.event_type as EventType,
  startedAt: r.started_at,
  endedAt: r.ended_at,
  sizeBytes: r.size_bytes,
  fileName: r.file_name,
  alertId: r.alert_id,
  createdAt: r.created_at,
});
const toAlert = (r: AlertRow): Alert => ({
  id: r.id,
  deviceId: r.device_id,
  type: r.type as AlertType,
  message: r.message,
  createdAt: r.created_at,
  readAt: r.read_at,
  recordingId: r.recording_id,
  recordingStatus: r.recording_status as RecordingStatus,
  recordingStatusReason: r.recording_status_reason,
});
const toOpenEpisode = (r: OpenEpisodeRow): OpenEpisode => ({
  alertId: r.alert_id,
  deviceId: r.device_id,
  segmentDir: r.segment_dir,
  bootAt: r.boot_at,
  fromAt: r.from_at,
  clip:
    r.clip_id === null || r.clip_started_at === null || r.clip_ended_at === null || r.clip_to === null
      ? null
      : { id: r.clip_id, startedAt: r.clip_started_at, endedAt: r.clip_ended_at, to: r.clip_to, eventType: (r.clip_event_type ?? 'motion') as EventType, final: r.clip_final === 1 },
});
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
export interface RecordingFilter extends ListOptions {
  deviceId: string;
  from?: number;
  to?: number;
  eventType?: EventType;
}
export interface AlertFilter extends ListOptions {
  deviceId?: string;
  type?: AlertType;
  unread?: boolean;
}

/** What a device is written with; its address comes from its camera row. */
export type DeviceUpsert = Omit<Device, 'createdAt' | 'address'> & { createdAt?: number };
export type NewRecording = Omit<Recording, 'createdAt'> & { createdAt?: number };
export type NewAlert = Omit<Alert, 'readAt' | 'recordingId' | 'recordingStatus' | 'recordingStatusReason'> & { recordingId?: string | null };

/** An episode being recorded when the daemon last ran (see open_episodes in migrations.ts). */
export interface OpenEpisode {
  alertId: string;
  deviceId: string;
  segmentDir: string;
  bootAt: number;
  /** Start of the footage not yet in a recording. */
  fromAt: number;
  /** The part whose assembly had begun: its recording id, footage and the cut's end. */
  clip: InFlightClip | null;
}
export interface InFlightClip {
  id: string;
  startedAt: number;
  endedAt: number;
  /** The end of the part as cut (the next part starts there). */
  to: number;
  eventType: EventType;
  final: boolean;
}

/**
 * How a part of an episode ended. `final`: the episode's last part (its alert's recording status is
 * settled); `nextFrom`: where the next part's footage starts; `note`: why footage is missing (a
 * recorded part with a note makes the alert partial; a part without a clip needs one).
 */
export interface PartOutcome {
  final: boolean;
  nextFrom: number;
  note?: string | null;
}

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
  private readonly recordingList: PagedList<RecordingRow, Recording>;
  private readonly alertList: PagedList<AlertRow, Alert>;
  private readonly outbox: Outbox;
  private readonly oauth: OAuthRecords;
  private readonly control: ControlRequests;

  private constructor(private readonly conn: Connection) {
    const { db, pages } = conn;
    this.deviceList = new PagedList(db, pages, { table: 'device_rows', keyColumn: 'created_at', toItem: toDevice, keyOf: (d) => ({ at: d.createdAt, id: d.id }) });
    this.recordingList = new PagedList(db, pages, { table: 'recordings', keyColumn: 'started_at', toItem: toRecording, keyOf: (r) => ({ at: r.startedAt, id: r.id }) });
    this.alertList = new PagedList(db, pages, { table: 'alerts', keyColumn: 'created_at', toItem: toAlert, keyOf: (a) => ({ at: a.createdAt, id: a.id }) });
    this.outbox = new Outbox(conn);
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
      if (changed && alertOnChange) this.insertAlert(alertOnChange);
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

  // --- recordings

  insertRecording(r: NewRecording, now = Date.now()): Recording {
    return this.transaction(() => {
      this.write(
        `INSERT INTO recordings (id, device_id, event_type, started_at, ended_at, size_bytes, file_name, alert_id, created_at)
           VALUES (@id, @deviceId, @eventType, @startedAt, @endedAt, @sizeBytes, @fileName, @alertId, @createdAt)`,
        { ...r, createdAt: r.createdAt ?? now },
      );
      const recording = this.getRecording(r.id) as Recording;
      this.outbox.enqueue('recording', recording.id, recording, now);
      return recording;
    });
  }

  /**
   * A finished clip: its row, and its alert's link to it (the first clip of an episode), in one
   * transaction, so a crash leaves both or neither.
   */
  saveRecording(r: NewRecording, now = Date.now(), part: PartOutcome = { final: true, nextFrom: r.endedAt }): Recording {
    return this.transaction(() => {
      const recording = this.insertRecording(r, now);
      if (r.alertId) {
        const linked = this.write('UPDATE alerts SET recording_id = @id WHERE id = @alertId AND recording_id IS NULL', { id: r.id, alertId: r.alertId }).changes > 0;
        const settled = this.settlePart(r.alertId, part);
        if (linked || settled) this.alertChanged(r.alertId, now);
      }
      return recording;
    });
  }

  /** A part of an episode that gave no clip (no footage, a failed write, a sliver not kept). */
  settleEpisodePart(alertId: string, part: PartOutcome, now = Date.now()): void {
    this.transaction(() => {
      if (this.settlePart(alertId, part)) this.alertChanged(alertId, now);
    });
  }

  /**
   * Moves the episode on past a part: the last part removes it and settles its alert's recording
   * status (inside the caller's transaction). True when the alert changed.
   */
  private settlePart(alertId: string, part: PartOutcome): boolean {
    if (part.final) this.write('DELETE FROM open_episodes WHERE alert_id = @alertId', { alertId });
    else
      this.write(
        `UPDATE open_episodes SET from_at = @nextFrom, clip_id = NULL, clip_started_at = NULL, clip_ended_at = NULL, clip_to = NULL,
           clip_event_type = NULL, clip_final = NULL WHERE alert_id = @alertId`,
        { alertId, nextFrom: part.nextFrom },
      );
    const note = part.note ?? null;
    if (!part.final && note === null) return false;
    // Only alerts still pending change: the first reason given is the one kept.
    return (
      this.write(
        `UPDATE alerts SET
           recording_status_reason = COALESCE(recording_status_reason, @note),
           recording_status = CASE
             WHEN @final = 0 THEN recording_status
             WHEN recording_id IS NULL THEN 'lost'
             WHEN COALESCE(recording_status_reason, @note) IS NULL THEN 'recorded'
             ELSE 'partial' END
         WHERE id = @alertId AND recording_status = 'pending'`,
        { alertId, note, final: part.final ? 1 : 0 },
      ).changes > 0
    );
  }

  // --- episodes being recorded (what a restart after a crash recovers)

  /** The episode's alert (recording pending) and its open_episodes row, in one transaction. */
  openEpisode(a: NewAlert, e: { segmentDir: string; bootAt: number; fromAt: number }, now = Date.now()): Alert {
    return this.transaction(() => {
      const alert = this.insertAlert({ ...a, recordingStatus: 'pending' });
      this.write(
        `INSERT INTO open_episodes (alert_id, device_id, segment_dir, boot_at, from_at, updated_at)
           VALUES (@alertId, @deviceId, @segmentDir, @bootAt, @fromAt, @now)`,
        { alertId: a.id, deviceId: a.deviceId, ...e, now },
      );
      return alert;
    });
  }

  /** A part's footage is chosen and its assembly begins (one small write per part). */
  beginClip(alertId: string, clip: InFlightClip, now = Date.now()): void {
    this.write(
      `UPDATE open_episodes SET clip_id = @id, clip_started_at = @startedAt, clip_ended_at = @endedAt, clip_to = @to,
         clip_event_type = @eventType, clip_final = @final, updated_at = @now WHERE alert_id = @alertId`,
      { alertId, ...clip, final: clip.final ? 1 : 0, now },
    );
  }

  listOpenEpisodes(): OpenEpisode[] {
    return (this.sql('SELECT * FROM open_episodes ORDER BY from_at, alert_id').all() as OpenEpisodeRow[]).map(toOpenEpisode);
  }

  /** Every clip's file and size, oldest first (retention and the start-up check). */
  listRecordingFiles(): Array<{ id: string; startedAt: number; sizeBytes: number; fileName: string }> {
    return (this.sql('SELECT id, started_at, size_bytes, file_name FROM recordings ORDER BY started_at, id').all() as Array<{ id: string; started_at: number; size_bytes: number; file_name: string }>).map(
      (r) => ({ id: r.id, startedAt: r.started_at, sizeBytes: r.size_bytes, fileName: r.file_name }),
    );
  }

  deleteRecording(id: string): void {
    this.write('DELETE FROM recordings WHERE id = @id', { id });
  }

  getRecording(id: string): Recording | null {
    const row = this.sql('SELECT * FROM recordings WHERE id = ?').get(id) as RecordingRow | undefined;
    return row ? toRecording(row) : null;
  }

  listRecordings(f: RecordingFilter): Page<Recording> {
    const filters: ListFilter[] = [['device_id = ?', f.deviceId]];
    if (f.from !== undefined) filters.push(['started_at >= ?', f.from]);
    if (f.to !== undefined) filters.push(['started_at <= ?', f.to]);
    if (f.eventType) filters.push(['event_type = ?', f.eventType]);
    return this.recordingList.page(filters, f);
  }

  // --- alerts

  /**
   * An alert; its recording status is `none` for device_offline, else `pending` unless given (the
   * recorder opens its episodes with openEpisode).
   */
  insertAlert(a: NewAlert & { recordingStatus?: RecordingStatus }): Alert {
    return this.transaction(() => {
      this.write(
        `INSERT INTO alerts (id, device_id, type, message, created_at, read_at, recording_id, recording_status)
           VALUES (@id, @deviceId, @type, @message, @createdAt, NULL, @recordingId, @recordingStatus)`,
        { ...a, recordingId: a.recordingId ?? null, recordingStatus: a.recordingStatus ?? (a.type === 'device_offline' ? 'none' : 'pending') },
      );
      return this.alertChanged(a.id, a.createdAt);
    });
  }

  /** The alert as it is now, with its message for the cloud (inside the change's transaction). */
  private alertChanged(id: string, now: number): Alert {
    const alert = this.getAlert(id) as Alert;
    this.outbox.enqueue('alert', id, alert, now);
    return alert;
  }

  /** An episode turned out more specific (motion → human or vehicle): its alert says so. */
  setAlertType(id: string, type: AlertType, message: string, now = Date.now()): void {
    this.transaction(() => {
      if (this.write('UPDATE alerts SET type = @type, message = @message WHERE id = @id', { type, message, id }).changes > 0) this.alertChanged(id, now);
    });
  }

  linkAlertRecording(alertId: string, recordingId: string, now = Date.now()): void {
    this.transaction(() => {
      if (this.write('UPDATE alerts SET recording_id = @recordingId WHERE id = @alertId', { recordingId, alertId }).changes > 0) this.alertChanged(alertId, now);
    });
  }

  getAlert(id: string): Alert | null {
    const row = this.sql('SELECT * FROM alerts WHERE id = ?').get(id) as AlertRow | undefined;
    return row ? toAlert(row) : null;
  }

  listAlerts(f: AlertFilter): Page<Alert> {
    const filters: ListFilter[] = [];
    if (f.deviceId) filters.push(['device_id = ?', f.deviceId]);
    if (f.type) filters.push(['type = ?', f.type]);
    if (f.unread === true) filters.push(['read_at IS NULL', undefined]);
    if (f.unread === false) filters.push(['read_at IS NOT NULL', undefined]);
    return this.alertList.page(filters, f);
  }

  /** Marks an alert read once; later calls keep the first read_at. Null when there is no such alert. */
  markAlertRead(id: string, now = Date.now()): Alert | null {
    return this.transaction(() => {
      if (this.write('UPDATE alerts SET read_at = @now WHERE id = @id AND read_at IS NULL', { now, id }).changes > 0) return this.alertChanged(id, now);
      return this.getAlert(id);
    });
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
