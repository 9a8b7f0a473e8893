import type Database from 'better-sqlite3';
import type { ControlAction, ControlRequest, ControlStatus } from '../domain/types.js';
import { type Connection, mustExist } from './connection.js';
import type { Outbox } from './outbox.js';

// CHECK constraints in the schema keep action and status to their enums.
interface ControlRow {
  id: string;
  device_id: string;
  action: ControlAction;
  status: ControlStatus;
  requested_at: number;
  completed_at: number | null;
  error: string | null;
}

const toControl = (r: ControlRow): ControlRequest => ({
  id: r.id,
  deviceId: r.device_id,
  action: r.action,
  status: r.status,
  requestedAt: r.requested_at,
  completedAt: r.completed_at,
  error: r.error,
});

/** Only CONTROL_ACTIONS are kept (a CHECK in the schema); a PTZ action's result is never written. */
export type NewControlRequest = Omit<ControlRequest, 'completedAt' | 'error' | 'status' | 'action'> & {
  action: ControlAction;
};
export interface ControlOutcome {
  status: 'succeeded' | 'failed';
  error: string | null;
}

function prepare(db: Database.Database) {
  return {
    insert: db.prepare<NewControlRequest>(
      `INSERT INTO control_requests (id, device_id, action, status, requested_at)
         VALUES (@id, @deviceId, @action, 'pending', @requestedAt)`,
    ),
    complete: db.prepare<ControlOutcome & { id: string; now: number }>(
      'UPDATE control_requests SET status = @status, error = @error, completed_at = @now WHERE id = @id',
    ),
    byId: db.prepare<[id: string], ControlRow>('SELECT * FROM control_requests WHERE id = ?'),
  };
}

/** Requests to act on a device (reboot, time sync) and their outcome, which the cloud is told of. */
export class ControlRequests {
  private readonly sql: ReturnType<typeof prepare>;

  constructor(
    private readonly conn: Connection,
    private readonly outbox: Outbox,
  ) {
    this.sql = prepare(conn.db);
  }

  insertControlRequest(c: NewControlRequest): ControlRequest {
    this.conn.run(this.sql.insert, c);
    return mustExist(this.getControlRequest(c.id), 'the control request just written');
  }

  completeControlRequest(id: string, outcome: ControlOutcome, now = Date.now()): ControlRequest {
    return this.conn.transaction(() => {
      this.conn.run(this.sql.complete, { ...outcome, now, id });
      const request = mustExist(this.getControlRequest(id), 'the control request just completed');
      this.outbox.enqueue('control_result', id, request, now);
      return request;
    });
  }

  getControlRequest(id: string): ControlRequest | null {
    const row = this.sql.byId.get(id);
    return row ? toControl(row) : null;
  }

  /** A control result asked for again (a command id the cloud repeated): queued once more. */
  requeueControlResult(id: string, now = Date.now()): void {
    this.conn.transaction(() => {
      const request = this.getControlRequest(id);
      if (request) this.outbox.enqueue('control_result', id, request, now);
    });
  }
}
