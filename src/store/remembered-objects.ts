import type Database from 'better-sqlite3';
import type { EventType } from '../domain/types.js';
import type { Connection } from './connection.js';

// What the detector remembers having found on each camera, so that an object found again where it
// was (a parked car) makes no alert, also after a restart. The rules are the detector's
// (src/detect/object-memory.ts); this file only keeps its list per camera, replaced as a whole.

export interface RememberedObject {
  category: Exclude<EventType, 'motion'>;
  /** Where it was first found, 0–1 of the picture. */
  box: { x: number; y: number; w: number; h: number };
  firstSeenAt: number;
  lastSeenAt: number;
  /** Checks in a row that looked there and did not find it. */
  misses: number;
}

interface ObjectRow {
  category: Exclude<EventType, 'motion'>;
  x: number;
  y: number;
  w: number;
  h: number;
  first_seen_at: number;
  last_seen_at: number;
  misses: number;
}

function prepare(db: Database.Database) {
  return {
    list: db.prepare<[deviceId: string], ObjectRow>(
      'SELECT category, x, y, w, h, first_seen_at, last_seen_at, misses FROM remembered_objects WHERE device_id = ? ORDER BY rowid',
    ),
    forget: db.prepare<[deviceId: string]>('DELETE FROM remembered_objects WHERE device_id = ?'),
    insert: db.prepare<ObjectRow & { deviceId: string }>(
      `INSERT INTO remembered_objects (device_id, category, x, y, w, h, first_seen_at, last_seen_at, misses)
         VALUES (@deviceId, @category, @x, @y, @w, @h, @first_seen_at, @last_seen_at, @misses)`,
    ),
    device: db.prepare<[id: string], number>('SELECT 1 FROM devices WHERE id = ?').pluck(),
  };
}

export class RememberedObjects {
  private readonly sql: ReturnType<typeof prepare>;

  constructor(private readonly conn: Connection) {
    this.sql = prepare(conn.db);
  }

  rememberedObjects(deviceId: string): RememberedObject[] {
    return this.sql.list.all(deviceId).map((r) => ({
      category: r.category,
      box: { x: r.x, y: r.y, w: r.w, h: r.h },
      firstSeenAt: r.first_seen_at,
      lastSeenAt: r.last_seen_at,
      misses: r.misses,
    }));
  }

  /** Replaces a camera's list; nothing for a device the store does not know (it may have been removed meanwhile). */
  replaceRememberedObjects(deviceId: string, objects: readonly RememberedObject[]): void {
    this.conn.transaction(() => {
      if (this.sql.device.get(deviceId) === undefined) return;
      this.conn.run(this.sql.forget, deviceId);
      for (const o of objects)
        this.conn.run(this.sql.insert, {
          deviceId,
          category: o.category,
          ...o.box,
          first_seen_at: o.firstSeenAt,
          last_seen_at: o.lastSeenAt,
          misses: o.misses,
        });
    });
  }

  /** A removed device's (inside the removal's transaction). */
  forgetRememberedObjects(deviceId: string): void {
    this.conn.run(this.sql.forget, deviceId);
  }
}
