import type Database from 'better-sqlite3';
import { newId } from '../domain/ids.js';
import { type Connection, mustExist } from './connection.js';

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

// The kind column has a CHECK constraint in the schema: the row type may say OutboxKind.
interface OutboxRow {
  seq: number;
  message_id: string;
  kind: OutboxKind;
  subject_id: string;
  body: string;
  created_at: number;
}

/**
 * Kinds in the order they are given up when the outbox is full: a device message only repeats a
 * state a later one supersedes; a recording's video stays on the gateway anyway; alerts and control
 * results are what a user is waiting for.
 */
const EVICTION_ORDER: readonly OutboxKind[] = ['device', 'recording', 'alert', 'control_result'];

function prepare(db: Database.Database) {
  return {
    count: db.prepare<[], number>('SELECT COUNT(*) FROM outbox').pluck(),
    deleteDeviceStates: db.prepare<{ subjectId: string }>(
      "DELETE FROM outbox WHERE kind = 'device' AND subject_id = @subjectId",
    ),
    insert: db.prepare<{ messageId: string; kind: OutboxKind; subjectId: string; body: string; now: number }>(
      'INSERT INTO outbox (message_id, kind, subject_id, body, created_at) VALUES (@messageId, @kind, @subjectId, @body, @now)',
    ),
    evictOldest: db.prepare<{ kind: OutboxKind; excess: number }>(
      'DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE kind = @kind ORDER BY seq LIMIT @excess)',
    ),
    batch: db.prepare<[afterSeq: number, limit: number], OutboxRow>(
      'SELECT seq, message_id, kind, subject_id, body, created_at FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?',
    ),
    delete: db.prepare<{ seq: number }>('DELETE FROM outbox WHERE seq = @seq'),
  };
}

/**
 * Messages for the cloud, each written in the transaction of the change it tells of (see
 * docs/architecture.md), bounded, and given up least important first when full.
 */
export class Outbox {
  /** Off until sync is configured: without a cloud there is nobody to keep messages for. */
  private maxRows = 0;
  private rows = 0;
  private listener: (() => void) | null = null;
  /** Messages given up because the outbox was full (for /metrics), by kind. */
  readonly evicted: Record<OutboxKind, number> = { device: 0, alert: 0, recording: 0, control_result: 0 };
  private readonly sql: ReturnType<typeof prepare>;

  constructor(private readonly conn: Connection) {
    this.sql = prepare(conn.db);
    // The rolled-back messages were counted as they were written.
    conn.onRollback(() => {
      if (this.maxRows > 0) this.rows = this.count();
    });
  }

  /**
   * Starts keeping messages for the cloud, at most maxRows of them; `onMessage` is told of each new
   * one (synchronously, maybe inside its transaction: look at the outbox later, not from the call).
   */
  enable(maxRows: number, onMessage: (() => void) | null = null): void {
    this.listener = onMessage;
    this.maxRows = maxRows;
    this.rows = this.count();
  }

  get size(): number {
    return this.rows;
  }

  /** Called inside the transaction of the change the message tells of; a null record: the subject is gone. */
  enqueue(kind: OutboxKind, subjectId: string, record: object | null, now: number): void {
    if (this.maxRows === 0) return;
    if (kind === 'device') {
      // Only the latest state of a device matters (it is published retained): unsent older ones go.
      this.rows -= this.conn.run(this.sql.deleteDeviceStates, { subjectId }).changes;
    }
    this.conn.run(this.sql.insert, { messageId: newId('msg'), kind, subjectId, body: JSON.stringify(record), now });
    this.rows++;
    if (this.rows > this.maxRows) this.evict();
    this.listener?.();
  }

  /** The oldest messages after `afterSeq`, in order. */
  batch(afterSeq: number, limit: number): OutboxMessage[] {
    return this.sql.batch.all(afterSeq, limit).map((r) => ({
      seq: r.seq,
      messageId: r.message_id,
      kind: r.kind,
      subjectId: r.subject_id,
      body: r.body,
      createdAt: r.created_at,
    }));
  }

  /** A message the broker acknowledged. */
  deleteMessage(seq: number): void {
    this.rows -= this.conn.run(this.sql.delete, { seq }).changes;
  }

  /** Messages the broker acknowledged, in one transaction (one fsync for many acknowledgements). */
  deleteMessages(seqs: readonly number[]): void {
    this.conn.transaction(() => {
      for (const seq of seqs) this.deleteMessage(seq);
    });
  }

  /** The outbox is full: the oldest messages of the least important kind present go first. */
  private evict(): void {
    // A little below the limit, so a full outbox is not trimmed on every single change.
    let excess = this.rows - Math.floor(this.maxRows * 0.99);
    for (const kind of EVICTION_ORDER) {
      if (excess <= 0) break;
      const removed = this.conn.run(this.sql.evictOldest, { kind, excess }).changes;
      this.evicted[kind] += removed;
      this.rows -= removed;
      excess -= removed;
    }
  }

  private count(): number {
    return mustExist(this.sql.count.get(), 'SELECT COUNT(*) FROM outbox');
  }
}
