import type Database from 'better-sqlite3';
import type { Alert, AlertType, DetectedObject, EventType, Page, Recording, RecordingStatus } from '../domain/types.js';
import { type Connection, mustExist } from './connection.js';
import type { EventLog } from './event-log.js';
import type { Outbox } from './outbox.js';
import type { PushRecords } from './push.js';
import { type ListFilter, type ListOptions, PagedList } from './paging.js';

// Row types. CHECK constraints in the schema keep the enum columns (event_type, type,
// recording_status, clip_event_type) to their enums, so the rows may say so.
interface RecordingRow {
  id: string;
  device_id: string;
  event_type: EventType;
  started_at: number;
  ended_at: number;
  size_bytes: number;
  file_name: string;
  alert_id: string | null;
  created_at: number;
  /** JSON written by this store (migration 8). */
  detections: string;
}
interface AlertRow {
  id: string;
  device_id: string;
  type: AlertType;
  message: string;
  created_at: number;
  read_at: number | null;
  recording_id: string | null;
  recording_status: RecordingStatus;
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
  clip_event_type: EventType | null;
  clip_final: number | null;
}

const toRecording = (r: RecordingRow): Recording => ({
  id: r.id,
  deviceId: r.device_id,
  eventType: r.event_type,
  startedAt: r.started_at,
  endedAt: r.ended_at,
  sizeBytes: r.size_bytes,
  fileName: r.file_name,
  alertId: r.alert_id,
  createdAt: r.created_at,
  detections: readDetections(r.detections),
});
const toAlert = (r: AlertRow): Alert => ({
  id: r.id,
  deviceId: r.device_id,
  type: r.type,
  message: r.message,
  createdAt: r.created_at,
  readAt: r.read_at,
  recordingId: r.recording_id,
  recordingStatus: r.recording_status,
  recordingStatusReason: r.recording_status_reason,
  detections: readDetections(r.detections),
});

/** The detections column: JSON this store wrote; what does not read as detections reads as none. */
function readDetections(text: string): DetectedObject[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  return Array.isArray(value) ? value.filter(isDetectedObject) : [];
}

function isDetectedObject(v: unknown): v is DetectedObject {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  const box = o.box as Record<string, unknown> | null | undefined;
  return (
    typeof o.label === 'string' &&
    typeof o.score === 'number' &&
    typeof box === 'object' &&
    box !== null &&
    ['x', 'y', 'w', 'h'].every((k) => typeof box[k] === 'number')
  );
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
      : {
          id: r.clip_id,
          startedAt: r.clip_started_at,
          endedAt: r.clip_ended_at,
          to: r.clip_to,
          eventType: r.clip_event_type ?? 'motion',
          final: r.clip_final === 1,
        },
});

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

export type NewRecording = Omit<Recording, 'createdAt' | 'detections'> & {
  createdAt?: number;
  detections?: DetectedObject[];
};
export type NewAlert = Omit<
  Alert,
  'readAt' | 'recordingId' | 'recordingStatus' | 'recordingStatusReason' | 'detections'
> & { recordingId?: string | null; detections?: DetectedObject[] };

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

export interface RecordingFile {
  id: string;
  startedAt: number;
  sizeBytes: number;
  fileName: string;
}

/** SQLite has no booleans. */
type Flag = 0 | 1;
const flag = (b: boolean): Flag => (b ? 1 : 0);

function prepare(db: Database.Database) {
  return {
    insertRecording: db.prepare<Omit<Recording, 'detections'> & { detections: string }>(
      `INSERT INTO recordings (id, device_id, event_type, started_at, ended_at, size_bytes, file_name, alert_id, created_at, detections)
         VALUES (@id, @deviceId, @eventType, @startedAt, @endedAt, @sizeBytes, @fileName, @alertId, @createdAt, @detections)`,
    ),
    linkFirstRecording: db.prepare<{ id: string; alertId: string }>(
      'UPDATE alerts SET recording_id = @id WHERE id = @alertId AND recording_id IS NULL',
    ),
    recording: db.prepare<[id: string], RecordingRow>('SELECT * FROM recordings WHERE id = ?'),
    recordingFiles: db.prepare<[], { id: string; started_at: number; size_bytes: number; file_name: string }>(
      'SELECT id, started_at, size_bytes, file_name FROM recordings ORDER BY started_at, id',
    ),
    deleteRecording: db.prepare<{ id: string }>('DELETE FROM recordings WHERE id = @id'),
    recordingBytes: db.prepare<[], number>('SELECT coalesce(sum(size_bytes), 0) FROM recordings').pluck(),

    insertEpisode: db.prepare<{
      alertId: string;
      deviceId: string;
      segmentDir: string;
      bootAt: number;
      fromAt: number;
      now: number;
    }>(
      `INSERT INTO open_episodes (alert_id, device_id, segment_dir, boot_at, from_at, updated_at)
         VALUES (@alertId, @deviceId, @segmentDir, @bootAt, @fromAt, @now)`,
    ),
    beginClip: db.prepare<Omit<InFlightClip, 'final'> & { alertId: string; final: Flag; now: number }>(
      `UPDATE open_episodes SET clip_id = @id, clip_started_at = @startedAt, clip_ended_at = @endedAt, clip_to = @to,
         clip_event_type = @eventType, clip_final = @final, updated_at = @now WHERE alert_id = @alertId`,
    ),
    closeEpisode: db.prepare<{ alertId: string }>('DELETE FROM open_episodes WHERE alert_id = @alertId'),
    advanceEpisode: db.prepare<{ alertId: string; nextFrom: number }>(
      `UPDATE open_episodes SET from_at = @nextFrom, clip_id = NULL, clip_started_at = NULL, clip_ended_at = NULL, clip_to = NULL,
         clip_event_type = NULL, clip_final = NULL WHERE alert_id = @alertId`,
    ),
    // Only alerts still pending change: the first reason given is the one kept.
    settleRecordingStatus: db.prepare<{ alertId: string; note: string | null; final: Flag }>(
      `UPDATE alerts SET
         recording_status_reason = COALESCE(recording_status_reason, @note),
         recording_status = CASE
           WHEN @final = 0 THEN recording_status
           WHEN recording_id IS NULL THEN 'lost'
           WHEN COALESCE(recording_status_reason, @note) IS NULL THEN 'recorded'
           ELSE 'partial' END
       WHERE id = @alertId AND recording_status = 'pending'`,
    ),
    openEpisodes: db.prepare<[], OpenEpisodeRow>('SELECT * FROM open_episodes ORDER BY from_at, alert_id'),

    insertAlert: db.prepare<
      Omit<NewAlert, 'recordingId' | 'detections'> & {
        recordingId: string | null;
        recordingStatus: RecordingStatus;
        detections: string;
      }
    >(
      `INSERT INTO alerts (id, device_id, type, message, created_at, read_at, recording_id, recording_status, detections)
         VALUES (@id, @deviceId, @type, @message, @createdAt, NULL, @recordingId, @recordingStatus, @detections)`,
    ),
    setAlertType: db.prepare<{ id: string; type: AlertType; message: string }>(
      'UPDATE alerts SET type = @type, message = @message WHERE id = @id',
    ),
    setAlertTypeAndDetections: db.prepare<{ id: string; type: AlertType; message: string; detections: string }>(
      'UPDATE alerts SET type = @type, message = @message, detections = @detections WHERE id = @id',
    ),
    linkAlertRecording: db.prepare<{ alertId: string; recordingId: string }>(
      'UPDATE alerts SET recording_id = @recordingId WHERE id = @alertId',
    ),
    alert: db.prepare<[id: string], AlertRow>('SELECT * FROM alerts WHERE id = ?'),
    markAlertRead: db.prepare<{ id: string; now: number }>(
      'UPDATE alerts SET read_at = @now WHERE id = @id AND read_at IS NULL',
    ),
  };
}

/**
 * Recordings, alerts, and the episodes being recorded that tie the two together (what a restart
 * after a crash recovers). Every change of a recording or an alert reaches the outbox in its transaction.
 */
export class MediaRecords {
  private readonly sql: ReturnType<typeof prepare>;
  private readonly recordingList: PagedList<RecordingRow, Recording>;
  private readonly alertList: PagedList<AlertRow, Alert>;

  constructor(
    private readonly conn: Connection,
    private readonly outbox: Outbox,
    private readonly events: EventLog,
    private readonly push: PushRecords,
  ) {
    this.sql = prepare(conn.db);
    this.recordingList = new PagedList(conn.db, conn.pages, {
      table: 'recordings',
      keyColumn: 'started_at',
      toItem: toRecording,
      keyOf: (r) => ({ at: r.startedAt, id: r.id }),
    });
    this.alertList = new PagedList(conn.db, conn.pages, {
      table: 'alerts',
      keyColumn: 'created_at',
      toItem: toAlert,
      keyOf: (a) => ({ at: a.createdAt, id: a.id }),
    });
  }

  // --- recordings

  insertRecording(r: NewRecording, now = Date.now()): Recording {
    return this.conn.transaction(() => {
      this.conn.run(this.sql.insertRecording, {
        ...r,
        createdAt: r.createdAt ?? now,
        detections: JSON.stringify(r.detections ?? []),
      });
      const recording = mustExist(this.getRecording(r.id), 'the recording just written');
      this.outbox.enqueue('recording', recording.id, recording, now);
      this.events.append('recording.created', recording.id, recording, now);
      return recording;
    });
  }

  /**
   * A finished clip: its row, and its alert's link to it (the first clip of an episode), in one
   * transaction, so a crash leaves both or neither.
   */
  saveRecording(
    r: NewRecording,
    now = Date.now(),
    part: PartOutcome = { final: true, nextFrom: r.endedAt },
  ): Recording {
    return this.conn.transaction(() => {
      const recording = this.insertRecording(r, now);
      if (r.alertId) {
        const linked = this.conn.run(this.sql.linkFirstRecording, { id: r.id, alertId: r.alertId }).changes > 0;
        const settled = this.settlePart(r.alertId, part);
        if (linked || settled) this.alertChanged(r.alertId, now);
      }
      return recording;
    });
  }

  /** A part of an episode that gave no clip (no footage, a failed write, a sliver not kept). */
  settleEpisodePart(alertId: string, part: PartOutcome, now = Date.now()): void {
    this.conn.transaction(() => {
      if (this.settlePart(alertId, part)) this.alertChanged(alertId, now);
    });
  }

  /** Every clip's file and size, oldest first (retention and the start-up check). */
  listRecordingFiles(): RecordingFile[] {
    return this.sql.recordingFiles
      .all()
      .map((r) => ({ id: r.id, startedAt: r.started_at, sizeBytes: r.size_bytes, fileName: r.file_name }));
  }

  /** The clips' bytes together (their thumbnails not counted). */
  recordingBytes(): number {
    return this.sql.recordingBytes.get() ?? 0;
  }

  deleteRecording(id: string): void {
    this.conn.run(this.sql.deleteRecording, { id });
  }

  getRecording(id: string): Recording | null {
    const row = this.sql.recording.get(id);
    return row ? toRecording(row) : null;
  }

  listRecordings(f: RecordingFilter): Page<Recording> {
    const filters: ListFilter[] = [['device_id = ?', f.deviceId]];
    if (f.from !== undefined) filters.push(['started_at >= ?', f.from]);
    if (f.to !== undefined) filters.push(['started_at <= ?', f.to]);
    if (f.eventType) filters.push(['event_type = ?', f.eventType]);
    return this.recordingList.page(filters, f);
  }

  // --- episodes being recorded (what a restart after a crash recovers)

  /** The episode's alert (recording pending) and its open_episodes row, in one transaction. */
  openEpisode(a: NewAlert, e: { segmentDir: string; bootAt: number; fromAt: number }, now = Date.now()): Alert {
    return this.conn.transaction(() => {
      const alert = this.insertAlert({ ...a, recordingStatus: 'pending' });
      this.conn.run(this.sql.insertEpisode, { alertId: a.id, deviceId: a.deviceId, ...e, now });
      return alert;
    });
  }

  /** A part's footage is chosen and its assembly begins (one small write per part). */
  beginClip(alertId: string, clip: InFlightClip, now = Date.now()): void {
    this.conn.run(this.sql.beginClip, { alertId, ...clip, final: flag(clip.final), now });
  }

  listOpenEpisodes(): OpenEpisode[] {
    return this.sql.openEpisodes.all().map(toOpenEpisode);
  }

  /**
   * Moves the episode on past a part: the last part removes it and settles its alert's recording
   * status (inside the caller's transaction). True when the alert changed.
   */
  private settlePart(alertId: string, part: PartOutcome): boolean {
    if (part.final) this.conn.run(this.sql.closeEpisode, { alertId });
    else this.conn.run(this.sql.advanceEpisode, { alertId, nextFrom: part.nextFrom });
    const note = part.note ?? null;
    if (!part.final && note === null) return false;
    return this.conn.run(this.sql.settleRecordingStatus, { alertId, note, final: flag(part.final) }).changes > 0;
  }

  // --- alerts

  /**
   * An alert; its recording status is `none` for device_offline, else `pending` unless given (the
   * recorder opens its episodes with openEpisode).
   */
  insertAlert(a: NewAlert & { recordingStatus?: RecordingStatus }): Alert {
    return this.conn.transaction(() => {
      this.conn.run(this.sql.insertAlert, {
        ...a,
        recordingId: a.recordingId ?? null,
        recordingStatus: a.recordingStatus ?? (a.type === 'device_offline' ? 'none' : 'pending'),
        detections: JSON.stringify(a.detections ?? []),
      });
      const alert = this.alertChanged(a.id, a.createdAt, 'alert.created');
      this.push.alertRaised(alert, a.createdAt);
      return alert;
    });
  }

  /** An episode turned out more specific (motion → human or vehicle): its alert says so. */
  setAlertType(id: string, type: AlertType, message: string, now = Date.now(), detections?: DetectedObject[]): void {
    this.conn.transaction(() => {
      const before = this.sql.alert.get(id)?.type;
      const changed =
        detections === undefined
          ? this.conn.run(this.sql.setAlertType, { type, message, id })
          : this.conn.run(this.sql.setAlertTypeAndDetections, {
              type,
              message,
              id,
              detections: JSON.stringify(detections),
            });
      if (changed.changes === 0) return;
      const alert = this.alertChanged(id, now);
      // Pushed again only when it says something new (motion → human), not when its detections are refined.
      if (before !== type) this.push.alertRaised(alert, now);
    });
  }

  linkAlertRecording(alertId: string, recordingId: string, now = Date.now()): void {
    this.conn.transaction(() => {
      if (this.conn.run(this.sql.linkAlertRecording, { recordingId, alertId }).changes > 0)
        this.alertChanged(alertId, now);
    });
  }

  getAlert(id: string): Alert | null {
    const row = this.sql.alert.get(id);
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
    return this.conn.transaction(() => {
      if (this.conn.run(this.sql.markAlertRead, { now, id }).changes > 0)
        return this.alertChanged(id, now, 'alert.read');
      return this.getAlert(id);
    });
  }

  /**
   * The alert as it is now, with its message for the cloud and its event for the API's event
   * stream (inside the change's transaction): created, read, or any other change (its type refined
   * by detection, its clip linked, its recording settled) as alert.updated.
   */
  private alertChanged(
    id: string,
    now: number,
    event: 'alert.created' | 'alert.read' | 'alert.updated' = 'alert.updated',
  ): Alert {
    const alert = mustExist(this.getAlert(id), 'the alert just changed');
    this.outbox.enqueue('alert', id, alert, now);
    this.events.append(event, id, alert, now);
    return alert;
  }
}
