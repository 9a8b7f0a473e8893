import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type {
  Alert,
  DetectedObject,
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
import { MIGRATIONS } from './migrations.js';

export const DATABASE_FILE = 'gateway.db';
const MAX_CACHED_PAGES = 64;

export class StoreError extends Error {
  override readonly name = 'StoreError';
}

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
  detections: string;
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
  detections: string;
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
interface ControlRow {
  id: string;
  device_id: string;
  action: string;
  status: string;
  requested_at: number;
  completed_at: number | null;
  error: string | null;
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
  detections: parseDetections(r.detections),
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
  detections: parseDetections(r.detections),
});

/** The detections column (JSON written by this store); anything unreadable reads as none. */
function parseDetections(text: string): DetectedObject[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? (value as DetectedObject[]) : [];
  } catch {
    return [];
  }
}
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
const toControl = (r: ControlRow): ControlRequest => ({
  id: r.id,
  deviceId: r.device_id,
  action: r.action as ControlAction,
  status: r.status as ControlRequest['status'],
  requestedAt: r.requested_at,
  completedAt: r.completed_at,
  error: r.error,
});

export interface ListOptions {
  limit: number;
  after: PageKey | null;
}

/**
 * Builds a newest-first keyset query: WHERE filters AND (key < after) ORDER BY key DESC, id DESC.
 * Keyset rather than OFFSET so pages stay stable while new rows arrive and cost the same deep in the list.
 */
function keysetQuery(
  table: string,
  keyColumn: string,
  filters: Array<[string, unknown]>,
  opts: ListOptions,
): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [clause, value] of filters) {
    where.push(clause);
    if (value !== undefined) params.push(value);
  }
  if (opts.after) {
    where.push(`(${keyColumn} < ? OR (${keyColumn} = ? AND id < ?))`);
    params.push(opts.after.at, opts.after.at, opts.after.id);
  }
  const sql =
    `SELECT * FROM ${table}` +
    (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY ${keyColumn} DESC, id DESC LIMIT ?`;
  params.push(opts.limit + 1);
  return { sql, params };
}

function page<R, T>(rows: R[], limit: number, map: (r: R) => T, key: (t: T) => PageKey): Page<T> {
  const items = rows.slice(0, limit).map(map);
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last ? key(last) : null };
}

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
export type NewRecording = Omit<Recording, 'createdAt' | 'detections'> & { createdAt?: number; detections?: DetectedObject[] };
export type NewAlert = Omit<Alert, 'readAt' | 'recordingId' | 'recordingStatus' | 'recordingStatusReason' | 'detections'> & { recordingId?: string | null; detections?: DetectedObject[] };

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

/** A client of the local authorization server (`edge-gateway clients add`). */
export interface OAuthClientRecord {
  id: string;
  name: string;
  /** SHA-256 (hex) of the client secret; null for a public client. */
  secretHash: string | null;
  redirectUris: string[];
  grantTypes: string[];
  createdAt: number;
}

export interface OAuthCodeRecord {
  codeHash: string;
  clientId: string;
  redirectUri: string;
  user: string;
  /** Space-separated, as formatScope writes it. */
  scope: string;
  codeChallenge: string | null;
  /** ms */
  expiresAt: number;
}

interface OAuthCodeRow {
  code_hash: string;
  client_id: string;
  redirect_uri: string;
  user: string;
  scope: string;
  code_challenge: string | null;
  expires_at: number;
  grant_id: string | null;
}

export interface OAuthGrantRecord {
  id: string;
  clientId: string;
  /** Null for client_credentials (the client acts for itself). */
  user: string | null;
  scope: string;
  createdAt: number;
  revokedAt: number | null;
}

interface OAuthGrantRow {
  id: string;
  client_id: string;
  user: string | null;
  scope: string;
  created_at: number;
  revoked_at: number | null;
}

export interface OAuthRefreshTokenRecord {
  tokenHash: string;
  grantId: string;
  scope: string;
  expiresAt: number;
  usedAt: number | null;
}

interface OAuthRefreshTokenRow {
  token_hash: string;
  grant_id: string;
  scope: string;
  expires_at: number;
  used_at: number | null;
}

/** What one token response gave: its access token (by jti) and, maybe, a refresh token. */
export interface OAuthIssue {
  accessJti: string;
  accessExpiresAt: number;
  refresh: { tokenHash: string; scope: string; expiresAt: number } | null;
}

/** Thrown inside a transaction to roll it back when a code or refresh token was used meanwhile. */
class AlreadyUsed extends Error {}

interface OAuthClientRow {
  id: string;
  name: string;
  secret_hash: string | null;
  redirect_uris: string;
  grant_types: string;
  created_at: number;
}

const toOAuthClient = (r: OAuthClientRow): OAuthClientRecord => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  grantTypes: JSON.parse(r.grant_types) as string[],
  createdAt: r.created_at,
});

export type OutboxKind = 'device' | 'alert' | 'recording' | 'control_result';

/** A message for the cloud, as written with its change (body: the record's JSON at that moment). */
export interface OutboxMessage {
  seq: number;
  messageId: string;
  kind: OutboxKind;
  subjectId: string;
  body: string;
  createdAt: number;
}

/**
 * Kinds in the order they are given up when the outbox is full: a device message only repeats a
 * state a later one supersedes; a recording's video stays on the gateway anyway; alerts and control
 * results are what a user is waiting for.
 */
const OUTBOX_EVICTION_ORDER: readonly OutboxKind[] = ['device', 'recording', 'alert', 'control_result'];

/**
 * The gateway's one SQLite database. This module is the only place with SQL; everything else calls
 * these typed functions. Values reach SQL only as bound parameters.
 */
export class Store {
  // Prepared once per distinct SQL text; the set is finite (fixed statements plus filter combinations).
  private readonly statements = new Map<string, Database.Statement>();
  // List pages are read far more often than written (apps poll; devices and alerts change rarely),
  // and turning SQLite rows into objects costs ~3 µs a row on a Pi-class CPU. Pages are memoised
  // until the next write: ours clear the memo directly, other connections' show in data_version.
  private readonly pages = new Map<string, Page<unknown>>();
  private pagesDataVersion = -1;
  /** Off until sync is configured: without a cloud there is nobody to keep messages for. */
  private outboxMaxRows = 0;
  private outboxRows = 0;
  /** Messages given up because the outbox was full (for /metrics), by kind. */
  readonly outboxEvicted: Record<OutboxKind, number> = { device: 0, alert: 0, recording: 0, control_result: 0 };

  private constructor(
    private readonly db: Database.Database,
    readonly file: string,
  ) {}

  private sql(text: string): Database.Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  private listPage<R, T>(q: { sql: string; params: unknown[] }, limit: number, map: (r: R) => T, key: (t: T) => PageKey): Page<T> {
    const dataVersion = this.sql('PRAGMA data_version').pluck().get() as number;
    if (dataVersion !== this.pagesDataVersion) {
      this.pages.clear();
      this.pagesDataVersion = dataVersion;
    }
    const cacheKey = `${q.sql}\u0000${JSON.stringify(q.params)}`;
    const hit = this.pages.get(cacheKey);
    if (hit) return hit as Page<T>;
    const result = page(this.sql(q.sql).all(...q.params) as R[], limit, map, key);
    if (this.pages.size >= MAX_CACHED_PAGES) this.pages.delete(this.pages.keys().next().value as string);
    this.pages.set(cacheKey, result);
    return result;
  }

  /** Every write goes through here, so no memoised page outlives a change. */
  private write(sqlText: string, params: unknown): Database.RunResult {
    this.pages.clear();
    return this.sql(sqlText).run(params);
  }

  static open(dataDir: string): Store {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(dataDir, DATABASE_FILE);
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      // FULL in WAL mode fsyncs each commit: commits are rare (events, not frames) and a power cut must
      // not lose an alert whose clip is already on disk.
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
      migrate(db);
    } catch (err) {
      db.close();
      throw new StoreError(`cannot open ${file}: ${(err as Error).message}`);
    }
    return new Store(db, file);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  /** Runs fn in one transaction: all its writes land together or none do. */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn)();
    } catch (err) {
      // The rolled-back messages were counted as they were written.
      if (this.outboxMaxRows > 0 && !this.db.inTransaction) this.outboxRows = this.sql('SELECT COUNT(*) FROM outbox').pluck().get() as number;
      throw err;
    } finally {
      // A page read inside a transaction that rolled back would show rows that never existed.
      this.pages.clear();
    }
  }

  // --- outbox (messages for the cloud)

  private outboxListener: (() => void) | null = null;

  /**
   * Starts keeping messages for the cloud, at most maxRows of them; `onMessage` is told of each new
   * one (synchronously, maybe inside its transaction: look at the outbox later, not from the call).
   */
  enableOutbox(maxRows: number, onMessage: (() => void) | null = null): void {
    this.outboxListener = onMessage;
    this.outboxMaxRows = maxRows;
    this.outboxRows = this.sql('SELECT COUNT(*) FROM outbox').pluck().get() as number;
  }

  get outboxSize(): number {
    return this.outboxRows;
  }

  /** Called inside the transaction of the change the message tells of. */
  private enqueue(kind: OutboxKind, subjectId: string, record: object, now: number): void {
    if (this.outboxMaxRows === 0) return;
    if (kind === 'device') {
      // Only the latest state of a device matters (it is published retained): unsent older ones go.
      this.outboxRows -= this.write("DELETE FROM outbox WHERE kind = 'device' AND subject_id = @subjectId", { subjectId }).changes;
    }
    this.write('INSERT INTO outbox (message_id, kind, subject_id, body, created_at) VALUES (@messageId, @kind, @subjectId, @body, @now)', {
      messageId: newId('msg'),
      kind,
      subjectId,
      body: JSON.stringify(record),
      now,
    });
    this.outboxRows++;
    if (this.outboxRows > this.outboxMaxRows) this.evictOutbox();
    this.outboxListener?.();
  }

  /** The outbox is full: the oldest messages of the least important kind present go first. */
  private evictOutbox(): void {
    // A little below the limit, so a full outbox is not trimmed on every single change.
    let excess = this.outboxRows - Math.floor(this.outboxMaxRows * 0.99);
    for (const kind of OUTBOX_EVICTION_ORDER) {
      if (excess <= 0) break;
      const removed = this.write('DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE kind = @kind ORDER BY seq LIMIT @excess)', { kind, excess }).changes;
      this.outboxEvicted[kind] += removed;
      this.outboxRows -= removed;
      excess -= removed;
    }
  }

  /** The oldest messages after `afterSeq`, in order. */
  outboxBatch(afterSeq: number, limit: number): OutboxMessage[] {
    return (
      this.sql('SELECT seq, message_id, kind, subject_id, body, created_at FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit) as Array<{
        seq: number;
        message_id: string;
        kind: OutboxKind;
        subject_id: string;
        body: string;
        created_at: number;
      }>
    ).map((r) => ({ seq: r.seq, messageId: r.message_id, kind: r.kind, subjectId: r.subject_id, body: r.body, createdAt: r.created_at }));
  }

  /** A message the broker acknowledged. */
  deleteOutboxMessage(seq: number): void {
    this.outboxRows -= this.write('DELETE FROM outbox WHERE seq = @seq', { seq }).changes;
  }

  /** Messages the broker acknowledged, in one transaction (one fsync for many acknowledgements). */
  deleteOutboxMessages(seqs: readonly number[]): void {
    this.transaction(() => {
      for (const seq of seqs) this.deleteOutboxMessage(seq);
    });
  }

  /** A control result asked for again (a command id the cloud repeated): queued once more. */
  requeueControlResult(id: string, now = Date.now()): void {
    this.transaction(() => {
      const request = this.getControlRequest(id);
      if (request) this.enqueue('control_result', id, request, now);
    });
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
      if (!before || !sameDeviceApartFromLastSeen(before, device)) this.enqueue('device', device.id, device, now);
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
    const filters: Array<[string, unknown]> = [];
    if (f.status) filters.push(['status = ?', f.status]);
    if (f.type) filters.push(['type = ?', f.type]);
    const q = keysetQuery('device_rows', 'created_at', filters, f);
    return this.listPage(q, f.limit, toDevice, (d) => ({ at: d.createdAt, id: d.id }));
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
      if (changed) this.enqueue('device', id, device, now);
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
        `INSERT INTO recordings (id, device_id, event_type, started_at, ended_at, size_bytes, file_name, alert_id, created_at, detections)
           VALUES (@id, @deviceId, @eventType, @startedAt, @endedAt, @sizeBytes, @fileName, @alertId, @createdAt, @detections)`,
        { ...r, createdAt: r.createdAt ?? now, detections: JSON.stringify(r.detections ?? []) },
      );
      const recording = this.getRecording(r.id) as Recording;
      this.enqueue('recording', recording.id, recording, now);
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
    const filters: Array<[string, unknown]> = [['device_id = ?', f.deviceId]];
    if (f.from !== undefined) filters.push(['started_at >= ?', f.from]);
    if (f.to !== undefined) filters.push(['started_at <= ?', f.to]);
    if (f.eventType) filters.push(['event_type = ?', f.eventType]);
    const q = keysetQuery('recordings', 'started_at', filters, f);
    return this.listPage(q, f.limit, toRecording, (r) => ({ at: r.startedAt, id: r.id }));
  }

  // --- alerts

  /**
   * An alert; its recording status is `none` for device_offline, else `pending` unless given (the
   * recorder opens its episodes with openEpisode).
   */
  insertAlert(a: NewAlert & { recordingStatus?: RecordingStatus }): Alert {
    return this.transaction(() => {
      this.write(
        `INSERT INTO alerts (id, device_id, type, message, created_at, read_at, recording_id, recording_status, detections)
           VALUES (@id, @deviceId, @type, @message, @createdAt, NULL, @recordingId, @recordingStatus, @detections)`,
        {
          ...a,
          recordingId: a.recordingId ?? null,
          recordingStatus: a.recordingStatus ?? (a.type === 'device_offline' ? 'none' : 'pending'),
          detections: JSON.stringify(a.detections ?? []),
        },
      );
      return this.alertChanged(a.id, a.createdAt);
    });
  }

  /** The alert as it is now, with its message for the cloud (inside the change's transaction). */
  private alertChanged(id: string, now: number): Alert {
    const alert = this.getAlert(id) as Alert;
    this.enqueue('alert', id, alert, now);
    return alert;
  }

  /** An episode turned out more specific (motion → human or vehicle): its alert says so. */
  setAlertType(id: string, type: AlertType, message: string, now = Date.now(), detections?: DetectedObject[]): void {
    this.transaction(() => {
      const changed =
        detections === undefined
          ? this.write('UPDATE alerts SET type = @type, message = @message WHERE id = @id', { type, message, id })
          : this.write('UPDATE alerts SET type = @type, message = @message, detections = @detections WHERE id = @id', { type, message, id, detections: JSON.stringify(detections) });
      if (changed.changes > 0) this.alertChanged(id, now);
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
    const filters: Array<[string, unknown]> = [];
    if (f.deviceId) filters.push(['device_id = ?', f.deviceId]);
    if (f.type) filters.push(['type = ?', f.type]);
    if (f.unread === true) filters.push(['read_at IS NULL', undefined]);
    if (f.unread === false) filters.push(['read_at IS NOT NULL', undefined]);
    const q = keysetQuery('alerts', 'created_at', filters, f);
    return this.listPage(q, f.limit, toAlert, (a) => ({ at: a.createdAt, id: a.id }));
  }

  /** Marks an alert read once; later calls keep the first read_at. Null when there is no such alert. */
  markAlertRead(id: string, now = Date.now()): Alert | null {
    return this.transaction(() => {
      if (this.write('UPDATE alerts SET read_at = @now WHERE id = @id AND read_at IS NULL', { now, id }).changes > 0) return this.alertChanged(id, now);
      return this.getAlert(id);
    });
  }

  // --- the local authorization server's clients and users

  insertOAuthClient(c: OAuthClientRecord): void {
    this.write(
      'INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, grant_types, created_at) VALUES (@id, @name, @secretHash, @redirectUris, @grantTypes, @createdAt)',
      { ...c, redirectUris: JSON.stringify(c.redirectUris), grantTypes: JSON.stringify(c.grantTypes) },
    );
  }

  getOAuthClient(id: string): OAuthClientRecord | null {
    const row = this.sql('SELECT * FROM oauth_clients WHERE id = ?').get(id) as OAuthClientRow | undefined;
    return row ? toOAuthClient(row) : null;
  }

  listOAuthClients(): OAuthClientRecord[] {
    return (this.sql('SELECT * FROM oauth_clients ORDER BY created_at, id').all() as OAuthClientRow[]).map(toOAuthClient);
  }

  /** False when there was no such client. */
  deleteOAuthClient(id: string): boolean {
    return this.write('DELETE FROM oauth_clients WHERE id = @id', { id }).changes > 0;
  }

  insertLocalUser(u: { username: string; passwordHash: string; createdAt: number }): void {
    this.write('INSERT INTO local_users (username, password_hash, created_at) VALUES (@username, @passwordHash, @createdAt)', u);
  }

  getLocalUser(username: string): { username: string; passwordHash: string; createdAt: number } | null {
    const row = this.sql('SELECT * FROM local_users WHERE username = ?').get(username) as { username: string; password_hash: string; created_at: number } | undefined;
    return row ? { username: row.username, passwordHash: row.password_hash, createdAt: row.created_at } : null;
  }

  listLocalUsers(): Array<{ username: string; createdAt: number }> {
    return (this.sql('SELECT username, created_at FROM local_users ORDER BY username').all() as Array<{ username: string; created_at: number }>).map((r) => ({
      username: r.username,
      createdAt: r.created_at,
    }));
  }

  /** Removes the user and revokes every grant they gave, in one transaction. */
  deleteLocalUser(username: string, now = Date.now()): boolean {
    return this.transaction(() => {
      this.write('UPDATE oauth_grants SET revoked_at = @now WHERE user = @username AND revoked_at IS NULL', { username, now });
      return this.write('DELETE FROM local_users WHERE username = @username', { username }).changes > 0;
    });
  }

  /** A stronger hash of the same password (after a login with an outdated one). */
  updateLocalUserPassword(username: string, passwordHash: string): void {
    this.write('UPDATE local_users SET password_hash = @passwordHash WHERE username = @username', { username, passwordHash });
  }

  // --- what the local authorization server issued

  insertOAuthCode(c: OAuthCodeRecord): void {
    this.write(
      `INSERT INTO oauth_codes (code_hash, client_id, redirect_uri, user, scope, code_challenge, expires_at)
         VALUES (@codeHash, @clientId, @redirectUri, @user, @scope, @codeChallenge, @expiresAt)`,
      c,
    );
  }

  getOAuthCode(codeHash: string): (OAuthCodeRecord & { grantId: string | null }) | null {
    const row = this.sql('SELECT * FROM oauth_codes WHERE code_hash = ?').get(codeHash) as OAuthCodeRow | undefined;
    if (!row) return null;
    return {
      codeHash: row.code_hash,
      clientId: row.client_id,
      redirectUri: row.redirect_uri,
      user: row.user,
      scope: row.scope,
      codeChallenge: row.code_challenge,
      expiresAt: row.expires_at,
      grantId: row.grant_id,
    };
  }

  /**
   * Redeems a code: one transaction that marks it used, creates its grant, and records what was
   * issued. False (and nothing written) when the code was used meanwhile.
   */
  redeemOAuthCode(codeHash: string, grant: OAuthGrantRecord, issued: OAuthIssue): boolean {
    return this.unlessAlreadyUsed(() => {
      this.insertGrant(grant);
      if (this.write('UPDATE oauth_codes SET grant_id = @grantId WHERE code_hash = @codeHash AND grant_id IS NULL', { codeHash, grantId: grant.id }).changes !== 1) {
        throw new AlreadyUsed();
      }
      this.recordIssue(grant.id, issued);
    });
  }

  /** A grant without a code (client_credentials) and its access token. */
  insertOAuthGrant(grant: OAuthGrantRecord, issued: OAuthIssue): void {
    this.transaction(() => {
      this.insertGrant(grant);
      this.recordIssue(grant.id, issued);
    });
  }

  getOAuthGrant(id: string): OAuthGrantRecord | null {
    const row = this.sql('SELECT * FROM oauth_grants WHERE id = ?').get(id) as OAuthGrantRow | undefined;
    return row ? { id: row.id, clientId: row.client_id, user: row.user, scope: row.scope, createdAt: row.created_at, revokedAt: row.revoked_at } : null;
  }

  getOAuthRefreshToken(tokenHash: string): OAuthRefreshTokenRecord | null {
    const row = this.sql('SELECT * FROM oauth_refresh_tokens WHERE token_hash = ?').get(tokenHash) as OAuthRefreshTokenRow | undefined;
    return row ? { tokenHash: row.token_hash, grantId: row.grant_id, scope: row.scope, expiresAt: row.expires_at, usedAt: row.used_at } : null;
  }

  /**
   * Rotates a refresh token: marks it used and records what replaces it, in one transaction.
   * False (nothing written) when it was used meanwhile.
   */
  rotateOAuthRefreshToken(tokenHash: string, grantId: string, issued: OAuthIssue, now: number): boolean {
    return this.unlessAlreadyUsed(() => {
      if (this.write('UPDATE oauth_refresh_tokens SET used_at = @now WHERE token_hash = @tokenHash AND used_at IS NULL', { tokenHash, now }).changes !== 1) {
        throw new AlreadyUsed();
      }
      this.recordIssue(grantId, issued);
    });
  }

  /** Revokes a grant: its refresh tokens stop working, and so do its access tokens (see isAccessTokenRevoked). */
  revokeOAuthGrant(id: string, now = Date.now()): void {
    this.write('UPDATE oauth_grants SET revoked_at = @now WHERE id = @id AND revoked_at IS NULL', { id, now });
  }

  /**
   * True for an access token of the local authorization server whose grant was revoked or no
   * longer exists (its client or user was removed). Tokens it does not know (from the token
   * command, or from other issuers) are not its business: false.
   */
  isAccessTokenRevoked(jti: string): boolean {
    const row = this.sql(
      `SELECT g.revoked_at AS revoked_at, g.id AS grant_id FROM oauth_access_tokens a
         LEFT JOIN oauth_grants g ON g.id = a.grant_id WHERE a.jti = ?`,
    ).get(jti) as { revoked_at: number | null; grant_id: string | null } | undefined;
    if (!row) return false;
    return row.grant_id === null || row.revoked_at !== null;
  }

  /** Forgets what has expired: codes, refresh and access tokens, and grants with nothing left. */
  pruneOAuth(now = Date.now()): void {
    this.transaction(() => {
      this.write('DELETE FROM oauth_codes WHERE expires_at < @now', { now });
      this.write('DELETE FROM oauth_refresh_tokens WHERE expires_at < @now', { now });
      this.write('DELETE FROM oauth_access_tokens WHERE expires_at < @now', { now });
      this.write(
        `DELETE FROM oauth_grants WHERE NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = oauth_grants.id)
           AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.grant_id = oauth_grants.id)
           AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.grant_id = oauth_grants.id)`,
        {},
      );
    });
  }

  /** Runs fn in a transaction; false when it threw AlreadyUsed (and so wrote nothing). */
  private unlessAlreadyUsed(fn: () => void): boolean {
    try {
      this.transaction(fn);
      return true;
    } catch (err) {
      if (err instanceof AlreadyUsed) return false;
      throw err;
    }
  }

  private insertGrant(g: OAuthGrantRecord): void {
    this.write('INSERT INTO oauth_grants (id, client_id, user, scope, created_at, revoked_at) VALUES (@id, @clientId, @user, @scope, @createdAt, @revokedAt)', g);
  }

  private recordIssue(grantId: string, issued: OAuthIssue): void {
    this.write('INSERT INTO oauth_access_tokens (jti, grant_id, expires_at) VALUES (@jti, @grantId, @expiresAt)', { jti: issued.accessJti, grantId, expiresAt: issued.accessExpiresAt });
    if (issued.refresh) {
      this.write('INSERT INTO oauth_refresh_tokens (token_hash, grant_id, scope, expires_at) VALUES (@tokenHash, @grantId, @scope, @expiresAt)', { ...issued.refresh, grantId });
    }
  }

  // --- control requests

  insertControlRequest(c: Omit<ControlRequest, 'completedAt' | 'error' | 'status'>): ControlRequest {
    this.write(
      `INSERT INTO control_requests (id, device_id, action, status, requested_at)
         VALUES (@id, @deviceId, @action, 'pending', @requestedAt)`,
      c,
    );
    return this.getControlRequest(c.id) as ControlRequest;
  }

  completeControlRequest(id: string, outcome: { status: 'succeeded' | 'failed'; error: string | null }, now = Date.now()): ControlRequest {
    return this.transaction(() => {
      this.write('UPDATE control_requests SET status = @status, error = @error, completed_at = @now WHERE id = @id', { ...outcome, now, id });
      const request = this.getControlRequest(id) as ControlRequest;
      this.enqueue('control_result', id, request, now);
      return request;
    });
  }

  getControlRequest(id: string): ControlRequest | null {
    const row = this.sql('SELECT * FROM control_requests WHERE id = ?').get(id) as ControlRow | undefined;
    return row ? toControl(row) : null;
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

function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new StoreError(`database schema ${current} is newer than this gateway knows (${MIGRATIONS.length}); upgrade the gateway`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
