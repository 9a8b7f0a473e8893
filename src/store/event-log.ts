import type Database from 'better-sqlite3';
import type { Alert, Device, Recording } from '../domain/types.js';
import type { Connection } from './connection.js';

/** What the API's event stream tells of (the type column's CHECK constraint says the same). */
export const STREAM_EVENT_TYPES = [
  'alert.created',
  'alert.read',
  'alert.updated',
  'device.status',
  'device.updated',
  'device.removed',
  'recording.created',
] as const;
export type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

/** An event as written with its change: the record as it was then (the API presents it when it sends it). */
export type StoredEvent = { seq: number; createdAt: number } & (
  | { type: 'alert.created' | 'alert.read' | 'alert.updated'; record: Alert }
  | { type: 'device.status' | 'device.updated' | 'device.removed'; record: Device }
  | { type: 'recording.created'; record: Recording }
);

/**
 * The ids a resumption can be served from: a client that saw event `n` misses nothing when
 * `after <= n <= latest` (older events were pruned; a larger id was never issued here).
 */
export interface EventWindow {
  after: number;
  latest: number;
}

export interface EventLogLimits {
  maxEvents: number;
  maxAgeMs: number;
}

// The type column has a CHECK constraint in the schema: the row type may say StreamEventType.
interface EventRow {
  seq: number;
  type: StreamEventType;
  body: string;
  created_at: number;
}

function prepare(db: Database.Database) {
  return {
    insert: db.prepare<{ type: StreamEventType; subjectId: string; body: string; now: number }>(
      'INSERT INTO event_log (type, subject_id, body, created_at) VALUES (@type, @subjectId, @body, @now)',
    ),
    // seq has no gaps (a rolled-back insert gives its seq back): the last maxEvents ids are kept.
    pruneByCount: db.prepare<{ latest: number; maxEvents: number }>(
      'DELETE FROM event_log WHERE seq <= @latest - @maxEvents',
    ),
    pruneByAge: db.prepare<{ before: number }>('DELETE FROM event_log WHERE created_at < @before'),
    after: db.prepare<[afterSeq: number, limit: number], EventRow>(
      'SELECT seq, type, body, created_at FROM event_log WHERE seq > ? ORDER BY seq LIMIT ?',
    ),
    oldest: db.prepare<[], number | null>('SELECT MIN(seq) FROM event_log').pluck(),
    // AUTOINCREMENT's counter: the last id ever issued, also when every row has been pruned.
    latest: db.prepare<[], number>("SELECT seq FROM sqlite_sequence WHERE name = 'event_log'").pluck(),
  };
}

/**
 * The recent events of the API's event stream (GET /v1/events), each written in the transaction of
 * the change it tells of (beside that change's outbox message), kept within a window bounded by
 * count and age so that a client resumes with Last-Event-ID, also across a restart.
 */
export class EventLog {
  /** Off until the gateway enables it: a store opened by the CLI or a test keeps no events. */
  private limits: EventLogLimits | null = null;
  private listener: (() => void) | null = null;
  private readonly sql: ReturnType<typeof prepare>;

  constructor(private readonly conn: Connection) {
    this.sql = prepare(conn.db);
  }

  /**
   * Starts keeping events within `limits`; `onEvent` is told of each new one (synchronously, maybe
   * inside its transaction: read the log later, not from the call).
   */
  enable(limits: EventLogLimits, onEvent: (() => void) | null = null, now = Date.now()): void {
    this.limits = limits;
    this.listener = onEvent;
    this.prune(this.window().latest, now);
  }

  /** Called inside the transaction of the change the event tells of. */
  append(type: StreamEventType, subjectId: string, record: Alert | Device | Recording, now: number): void {
    if (this.limits === null) return;
    const seq = Number(
      this.conn.run(this.sql.insert, { type, subjectId, body: JSON.stringify(record), now }).lastInsertRowid,
    );
    this.prune(seq, now);
    this.listener?.();
  }

  /** The events after `afterSeq`, oldest first, at most `limit`. */
  after(afterSeq: number, limit: number): StoredEvent[] {
    return this.sql.after.all(afterSeq, limit).map(toEvent);
  }

  window(): EventWindow {
    const latest = this.sql.latest.get() ?? 0;
    const oldest = this.sql.oldest.get() ?? null;
    return { after: (oldest ?? latest + 1) - 1, latest };
  }

  private prune(latest: number, now: number): void {
    if (this.limits === null) return;
    this.conn.run(this.sql.pruneByCount, { latest, maxEvents: this.limits.maxEvents });
    this.conn.run(this.sql.pruneByAge, { before: now - this.limits.maxAgeMs });
  }
}

/** The body is this store's own JSON of the record the type names (written by append above). */
function toEvent(r: EventRow): StoredEvent {
  const base = { seq: r.seq, createdAt: r.created_at };
  switch (r.type) {
    case 'alert.created':
    case 'alert.read':
    case 'alert.updated':
      return { ...base, type: r.type, record: JSON.parse(r.body) as Alert };
    case 'device.status':
    case 'device.updated':
    case 'device.removed':
      return { ...base, type: r.type, record: JSON.parse(r.body) as Device };
    case 'recording.created':
      return { ...base, type: r.type, record: JSON.parse(r.body) as Recording };
  }
}
