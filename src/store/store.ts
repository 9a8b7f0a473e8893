import type {
  Alert,
  AlertType,
  DetectedObject,
  CameraRecord,
  ControlRequest,
  Device,
  DeviceStatus,
  Page,
  Recording,
  RecordingStatus,
} from '../domain/types.js';
import type { DeviceAlias } from '../domain/device-alias.js';
import type { DevicePtz } from '../domain/ptz.js';
import {
  type CameraSettingsBase,
  CameraSettingsRecords,
  type NewAppCamera,
  type SettingsChange,
  type StoredCameraSettings,
} from './camera-settings.js';
import { Connection } from './connection.js';
import { type ControlOutcome, ControlRequests, type NewControlRequest } from './control.js';
import { type DeviceFilter, Devices, type DeviceUpsert } from './devices.js';
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
import { FootageRecords, type FootageFile, type FootageTotals, type IndexedFootageFile } from './footage.js';
import { EventLog, type EventLogLimits, type EventWindow, type StoredEvent } from './event-log.js';
import { Outbox, type OutboxKind, type OutboxMessage } from './outbox.js';
import { RememberedObjects, type RememberedObject } from './remembered-objects.js';
import {
  type NewPushSubscription,
  type PushQueueRules,
  PushRecords,
  type PushSubscriptionChange,
  type PushSubscriptionRecord,
  type QueuedPush,
  type QueuedPushKey,
  type SavedPushSubscription,
} from './push.js';

// The store's callers import from here alone, and its errors from errors.ts; the aggregates' files
// are the store's own business.
export { DATABASE_FILE } from './connection.js';
export type { ControlOutcome, NewControlRequest } from './control.js';
export type {
  CameraSettingsBase,
  NewAppCamera,
  RtspStreams,
  SettingsChange,
  StoredCameraSettings,
} from './camera-settings.js';
export { type DeviceFilter, type DeviceUpsert, LAST_SEEN_WRITE_MS } from './devices.js';
export type {
  AlertFilter,
  InFlightClip,
  NewAlert,
  NewRecording,
  OpenEpisode,
  PartOutcome,
  RecordingFile,
  RecordingFilter,
} from './media.js';
export type {
  LocalUserRecord,
  OAuthClientRecord,
  OAuthCodeRecord,
  OAuthGrantRecord,
  OAuthIssue,
  OAuthRefreshTokenRecord,
} from './oauth.js';
export type { OutboxKind, OutboxMessage } from './outbox.js';
export { MAX_FOOTAGE_FILE_MS, type FootageFile, type FootageTotals, type IndexedFootageFile } from './footage.js';
export type { RememberedObject } from './remembered-objects.js';
export type {
  NewPushSubscription,
  PushQueueChange,
  PushQueueRules,
  PushSubscriptionChange,
  PushSubscriptionRecord,
  QueuedPush,
  QueuedPushKey,
  QuietHours,
  SavedPushSubscription,
} from './push.js';
export {
  STREAM_EVENT_TYPES,
  type EventLogLimits,
  type EventWindow,
  type StoredEvent,
  type StreamEventType,
} from './event-log.js';

/**
 * The gateway's one SQLite database, as the rest of the gateway sees it. This folder is the only
 * place with SQL; everything else calls these typed functions, and values reach SQL only as bound
 * parameters. Store is a facade: each method hands over to the aggregate that owns the tables
 * (devices.ts, camera-settings.ts, media.ts, oauth.ts, control.ts, outbox.ts, footage.ts, remembered-objects.ts, push.ts),
 * all over one connection
 * (connection.ts);
 * what a method does is documented there.
 */
export class Store {
  private readonly outbox: Outbox;
  private readonly devices: Devices;
  private readonly settings: CameraSettingsRecords;
  private readonly media: MediaRecords;
  private readonly oauth: OAuthRecords;
  private readonly control: ControlRequests;
  private readonly events: EventLog;
  private readonly footage: FootageRecords;
  private readonly remembered: RememberedObjects;
  private readonly push: PushRecords;

  private constructor(private readonly conn: Connection) {
    this.outbox = new Outbox(conn);
    this.events = new EventLog(conn);
    this.push = new PushRecords(conn);
    this.media = new MediaRecords(conn, this.outbox, this.events, this.push);
    this.devices = new Devices(conn, this.outbox, this.media, this.events);
    this.remembered = new RememberedObjects(conn);
    this.settings = new CameraSettingsRecords(conn, this.devices, this.outbox, this.events, this.remembered);
    this.oauth = new OAuthRecords(conn, this.push);
    this.control = new ControlRequests(conn, this.outbox);
    this.footage = new FootageRecords(conn);
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

  /**
   * Closes; resolves once a daemon running on the same database is sure to see this store's changes
   * (Connection.closeWhenVisible).
   */
  closeWhenVisible(): Promise<void> {
    return this.conn.closeWhenVisible();
  }

  get schemaVersion(): number {
    return this.conn.schemaVersion;
  }

  /** The database's size in bytes (Connection.databaseBytes). */
  databaseBytes(): number {
    return this.conn.databaseBytes();
  }

  /** How much of the database SQLite may keep in memory at most (PAGE_CACHE_BYTES). */
  get pageCacheLimitBytes(): number {
    return this.conn.pageCacheLimitBytes;
  }

  /** Runs fn in one transaction: all its writes land together or none do. */
  transaction<T>(fn: () => T): T {
    return this.conn.transaction(fn);
  }

  // --- the outbox of messages for the cloud (outbox.ts)

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

  outboxBatch(afterSeq: number, limit: number): OutboxMessage[] {
    return this.outbox.batch(afterSeq, limit);
  }

  deleteOutboxMessage(seq: number): void {
    this.outbox.deleteMessage(seq);
  }

  deleteOutboxMessages(seqs: readonly number[]): void {
    this.outbox.deleteMessages(seqs);
  }

  // --- devices, cameras and aliases (devices.ts)

  upsertDevice(d: DeviceUpsert, now?: number): Device {
    return this.devices.upsertDevice(d, now);
  }

  getDevice(id: string): Device | null {
    return this.devices.getDevice(id);
  }

  listDevices(f: DeviceFilter): Page<Device> {
    return this.devices.listDevices(f);
  }

  listCameraDevices(): Device[] {
    return this.devices.listCameraDevices();
  }

  setDeviceStatus(
    id: string,
    status: DeviceStatus,
    now: number,
    alertOnChange: NewAlert | null = null,
  ): { device: Device; changed: boolean } | null {
    return this.devices.setDeviceStatus(id, status, now, alertOnChange);
  }

  findDeviceByAlias(aliases: readonly DeviceAlias[]): string | null {
    return this.devices.findDeviceByAlias(aliases);
  }

  aliasesOf(deviceId: string): DeviceAlias[] {
    return this.devices.aliasesOf(deviceId);
  }

  addAliases(deviceId: string, aliases: readonly DeviceAlias[]): void {
    this.devices.addAliases(deviceId, aliases);
  }

  upsertCamera(c: CameraRecord, now?: number): void {
    this.devices.upsertCamera(c, now);
  }

  setCameraPtz(deviceId: string, ptz: DevicePtz | null, now?: number): boolean {
    return this.devices.setCameraPtz(deviceId, ptz, now);
  }

  getCamera(deviceId: string): CameraRecord | null {
    return this.devices.getCamera(deviceId);
  }

  listCameras(): CameraRecord[] {
    return this.devices.listCameras();
  }

  // --- what the owner set for each camera, cameras added and devices removed through the API (camera-settings.ts)

  /** What the config file sets for each camera (the base of every Device's settings); set once at start. */
  setSettingsBase(base: CameraSettingsBase): void {
    this.devices.setSettingsBase(base);
  }

  cameraSettings(deviceId: string): StoredCameraSettings | null {
    return this.settings.cameraSettings(deviceId);
  }

  addedCameras(): Array<{ deviceId: string; onvifUrl: string }> {
    return this.settings.addedCameras();
  }

  isDeviceRemoved(deviceId: string): boolean {
    return this.settings.isDeviceRemoved(deviceId);
  }

  changeCameraSettings(deviceId: string, change: SettingsChange, by: string, now?: number): Device | null {
    return this.settings.changeCameraSettings(deviceId, change, by, now);
  }

  addCamera(c: NewAppCamera, by: string, now?: number): Device {
    return this.settings.addCamera(c, by, now);
  }

  restoreDevice(deviceId: string, now?: number): void {
    this.settings.restoreDevice(deviceId, now);
  }

  removeDevice(deviceId: string, now?: number): boolean {
    return this.settings.removeDevice(deviceId, now);
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

  /** The clips' bytes together (their thumbnails not counted). */
  recordingBytes(): number {
    return this.media.recordingBytes();
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

  setAlertType(id: string, type: AlertType, message: string, now?: number, detections?: DetectedObject[]): void {
    this.media.setAlertType(id, type, message, now, detections);
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

  listLocalUsers(): Array<{ username: string; role: LocalUserRecord['role']; createdAt: number }> {
    return this.oauth.listLocalUsers();
  }

  deleteLocalUser(username: string, now?: number): boolean {
    return this.oauth.deleteLocalUser(username, now);
  }

  setLocalUserRole(
    username: string,
    role: LocalUserRecord['role'],
    narrows: (from: LocalUserRecord['role'], to: LocalUserRecord['role']) => boolean,
    now?: number,
  ): { previous: LocalUserRecord['role']; revokedGrants: number } | null {
    return this.oauth.setLocalUserRole(username, role, narrows, now);
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

  getOAuthAccessTokenGrant(jti: string): string | null {
    return this.oauth.getOAuthAccessTokenGrant(jti);
  }

  isAccessTokenRevoked(jti: string): boolean {
    return this.oauth.isAccessTokenRevoked(jti);
  }

  pruneOAuth(now?: number): void {
    this.oauth.pruneOAuth(now);
  }

  // --- continuous footage (footage.ts)

  insertFootage(files: readonly FootageFile[]): void {
    this.footage.insertFootage(files);
  }

  footageIn(deviceId: string, startMs: number, endMs: number): IndexedFootageFile[] {
    return this.footage.footageIn(deviceId, startMs, endMs);
  }

  footageFile(id: number): IndexedFootageFile | null {
    return this.footage.footageFile(id);
  }

  oldestFootage(limit: number, endedBefore?: number): IndexedFootageFile[] {
    return this.footage.oldestFootage(limit, endedBefore);
  }

  removeFootage(ids: readonly number[]): void {
    this.footage.removeFootage(ids);
  }

  removeFootageNamed(names: readonly string[]): void {
    this.footage.removeFootageNamed(names);
  }

  footageNames(): Set<string> {
    return this.footage.footageNames();
  }

  footageBytes(): number {
    return this.footage.footageBytes();
  }

  footageTotals(): FootageTotals[] {
    return this.footage.footageTotals();
  }

  // --- what the detector remembers having found per camera (remembered-objects.ts)

  rememberedObjects(deviceId: string): RememberedObject[] {
    return this.remembered.rememberedObjects(deviceId);
  }

  replaceRememberedObjects(deviceId: string, objects: readonly RememberedObject[]): void {
    this.remembered.replaceRememberedObjects(deviceId, objects);
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

  // --- Web Push subscriptions and the queue of pushes (push.ts)

  savePushSubscription(
    s: NewPushSubscription,
    bounds: { perOwner: number; total: number },
    now?: number,
  ): SavedPushSubscription {
    return this.push.savePushSubscription(s, bounds, now);
  }

  getPushSubscription(id: string): PushSubscriptionRecord | null {
    return this.push.getPushSubscription(id);
  }

  pushSubscriptionsOf(owner: string): PushSubscriptionRecord[] {
    return this.push.pushSubscriptionsOf(owner);
  }

  get pushSubscriptionCount(): number {
    return this.push.pushSubscriptionCount;
  }

  changePushSubscription(
    id: string,
    owner: string,
    change: PushSubscriptionChange,
    now?: number,
  ): PushSubscriptionRecord | null {
    return this.push.changePushSubscription(id, owner, change, now);
  }

  deletePushSubscription(id: string, owner?: string | null): boolean {
    return this.push.deletePushSubscription(id, owner);
  }

  /** Starts queueing pushes for the alerts written from here on (notifications on). */
  enablePushQueue(rules: PushQueueRules): void {
    this.push.enableQueue(rules);
  }

  get pushQueueSize(): number {
    return this.push.queueSize;
  }

  pushQueue(): QueuedPush[] {
    return this.push.pushQueue();
  }

  settlePushes(keys: readonly QueuedPushKey[]): void {
    this.push.settlePushes(keys);
  }

  clearPushQueue(): void {
    this.push.clearPushQueue();
  }

  // --- the recent events of the API's event stream (event-log.ts)

  /**
   * Starts keeping events for GET /v1/events within `limits`; `onEvent` is told of each new one
   * (synchronously, maybe inside its transaction: read the events later, not from the call).
   */
  enableEventLog(limits: EventLogLimits, onEvent: (() => void) | null = null): void {
    this.events.enable(limits, onEvent);
  }

  eventsAfter(afterSeq: number, limit: number): StoredEvent[] {
    return this.events.after(afterSeq, limit);
  }

  eventWindow(): EventWindow {
    return this.events.window();
  }
}
