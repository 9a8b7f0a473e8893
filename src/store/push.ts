import type Database from 'better-sqlite3';
import { newId } from '../domain/ids.js';
import { ALERT_TYPES, type Alert, type AlertType } from '../domain/types.js';
import { type Connection, mustExist } from './connection.js';
import { StoreError } from './errors.js';

/** Quiet hours as minutes of the day (local time of the gateway); end before start: across midnight. */
export interface QuietHours {
  start: number;
  end: number;
}

/** A browser's Web Push subscription, owned by the token subject that made it. */
export interface PushSubscriptionRecord {
  id: string;
  /** The token's `sub`. */
  owner: string;
  /** The local authorization server's grant of the token that made it (its revocation removes it); null: none. */
  grantId: string | null;
  endpoint: string;
  /** base64url, as the browser gave them (checked by src/notify/endpoint.ts). */
  p256dh: string;
  auth: string;
  /** null: every camera. */
  devices: string[] | null;
  types: AlertType[];
  quietHours: QuietHours | null;
  createdAt: number;
  updatedAt: number;
}

export type NewPushSubscription = Omit<PushSubscriptionRecord, 'id' | 'createdAt' | 'updatedAt'>;
export type PushSubscriptionChange = Partial<Pick<PushSubscriptionRecord, 'devices' | 'types' | 'quietHours'>>;

/** What saving a subscription did; `full`: none was made, the owner's or the gateway's bound is reached. */
export type SavedPushSubscription =
  { kind: 'created' | 'updated'; subscription: PushSubscriptionRecord } | { kind: 'full'; bound: 'owner' | 'gateway' };

/** A push waiting to be sent: the newest alert of one camera for one subscription. */
export interface QueuedPush {
  subscriptionId: string;
  deviceId: string;
  alertId: string;
  /** Which write of the row this is (one counter for every row): a send settles only what it sent. */
  version: number;
  /** When the alert asked for it: its time to live runs from here. */
  queuedAt: number;
}

export type QueuedPushKey = Pick<QueuedPush, 'subscriptionId' | 'deviceId' | 'version'>;

/** What the push queue is told of each alert's pushes, inside the alert's transaction. */
export interface PushQueueChange {
  queued: readonly QueuedPush[];
  /** Waiting pushes a newer alert replaced (the versions they had). */
  replaced: readonly QueuedPushKey[];
  /** Pushes not queued: the queue was full. */
  refused: number;
}

export interface PushQueueRules {
  /** Whether this subscription wants a push of this alert (its types, cameras, quiet hours). */
  wants(subscription: PushSubscriptionRecord, alert: Alert): boolean;
  /** Most rows in the queue; beyond them new pushes are refused (each row is a camera of a subscription). */
  maxRows: number;
  /** Told inside the alert's transaction: look at the queue later, not from the call. */
  onChange(change: PushQueueChange): void;
}

// Row types: the tables are STRICT, so SQLite keeps each column to its declared type.
interface SubscriptionRow {
  id: string;
  owner: string;
  grant_id: string | null;
  endpoint: string;
  p256dh: string;
  auth: string;
  devices: string | null;
  types: string;
  quiet_start: number | null;
  quiet_end: number | null;
  created_at: number;
  updated_at: number;
}
interface QueueRow {
  subscription_id: string;
  device_id: string;
  alert_id: string;
  version: number;
  queued_at: number;
}

/** A JSON column this module writes; anything else there is damage, said so. */
function stringArray(json: string, column: string): string[] {
  const value: unknown = JSON.parse(json);
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string'))
    throw new StoreError(`${column} is not a JSON array of strings`);
  return value;
}

const isAlertType = (v: string): v is AlertType => (ALERT_TYPES as readonly string[]).includes(v);

function toSubscription(r: SubscriptionRow): PushSubscriptionRecord {
  return {
    id: r.id,
    owner: r.owner,
    grantId: r.grant_id,
    endpoint: r.endpoint,
    p256dh: r.p256dh,
    auth: r.auth,
    devices: r.devices === null ? null : stringArray(r.devices, 'push_subscriptions.devices'),
    types: stringArray(r.types, 'push_subscriptions.types').filter(isAlertType),
    quietHours: r.quiet_start === null || r.quiet_end === null ? null : { start: r.quiet_start, end: r.quiet_end },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const toQueued = (r: QueueRow): QueuedPush => ({
  subscriptionId: r.subscription_id,
  deviceId: r.device_id,
  alertId: r.alert_id,
  version: r.version,
  queuedAt: r.queued_at,
});

/** A subscription as its row's statements take it: lists as JSON, quiet hours in two columns. */
type SubscriptionParams = Pick<PushSubscriptionRecord, 'id' | 'owner' | 'grantId' | 'endpoint' | 'p256dh' | 'auth'> & {
  devices: string | null;
  types: string;
  quietStart: number | null;
  quietEnd: number | null;
  now: number;
};

const paramsOf = (s: NewPushSubscription & { id: string }, now: number): SubscriptionParams => ({
  id: s.id,
  owner: s.owner,
  grantId: s.grantId,
  endpoint: s.endpoint,
  p256dh: s.p256dh,
  auth: s.auth,
  devices: s.devices === null ? null : JSON.stringify(s.devices),
  types: JSON.stringify(s.types),
  quietStart: s.quietHours?.start ?? null,
  quietEnd: s.quietHours?.end ?? null,
  now,
});

function prepare(db: Database.Database) {
  return {
    insert: db.prepare<SubscriptionParams>(
      `INSERT INTO push_subscriptions (id, owner, grant_id, endpoint, p256dh, auth, devices, types, quiet_start, quiet_end, created_at, updated_at)
         VALUES (@id, @owner, @grantId, @endpoint, @p256dh, @auth, @devices, @types, @quietStart, @quietEnd, @now, @now)`,
    ),
    replace: db.prepare<SubscriptionParams>(
      `UPDATE push_subscriptions SET grant_id = @grantId, p256dh = @p256dh, auth = @auth, devices = @devices, types = @types,
         quiet_start = @quietStart, quiet_end = @quietEnd, updated_at = @now WHERE id = @id`,
    ),
    byOwnerEndpoint: db.prepare<[owner: string, endpoint: string], SubscriptionRow>(
      'SELECT * FROM push_subscriptions WHERE owner = ? AND endpoint = ?',
    ),
    byId: db.prepare<[id: string], SubscriptionRow>('SELECT * FROM push_subscriptions WHERE id = ?'),
    ofOwner: db.prepare<[owner: string], SubscriptionRow>(
      'SELECT * FROM push_subscriptions WHERE owner = ? ORDER BY created_at DESC, id DESC',
    ),
    all: db.prepare<[], SubscriptionRow>('SELECT * FROM push_subscriptions'),
    count: db.prepare<[], number>('SELECT COUNT(*) FROM push_subscriptions').pluck(),
    countOfOwner: db
      .prepare<[owner: string], number>('SELECT COUNT(*) FROM push_subscriptions WHERE owner = ?')
      .pluck(),
    delete: db.prepare<{ id: string }>('DELETE FROM push_subscriptions WHERE id = @id'),
    deleteOfOwner: db.prepare<{ owner: string }>('DELETE FROM push_subscriptions WHERE owner = @owner'),
    deleteOfGrant: db.prepare<{ grantId: string }>('DELETE FROM push_subscriptions WHERE grant_id = @grantId'),
    deleteOfUserGrants: db.prepare<{ username: string }>(
      'DELETE FROM push_subscriptions WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user = @username)',
    ),
    deleteOfClientGrants: db.prepare<{ clientId: string }>(
      'DELETE FROM push_subscriptions WHERE grant_id IN (SELECT id FROM oauth_grants WHERE client_id = @clientId)',
    ),

    queue: db.prepare<[], QueueRow>('SELECT * FROM push_queue ORDER BY queued_at, version'),
    queueCount: db.prepare<[], number>('SELECT COUNT(*) FROM push_queue').pluck(),
    queuedVersion: db
      .prepare<[subscriptionId: string, deviceId: string], number>(
        'SELECT version FROM push_queue WHERE subscription_id = ? AND device_id = ?',
      )
      .pluck(),
    maxVersion: db.prepare<[], number | null>('SELECT MAX(version) FROM push_queue').pluck(),
    enqueue: db.prepare<QueueRow>(
      `INSERT INTO push_queue (subscription_id, device_id, alert_id, version, queued_at)
         VALUES (@subscription_id, @device_id, @alert_id, @version, @queued_at)
         ON CONFLICT (subscription_id, device_id) DO UPDATE SET alert_id = excluded.alert_id,
           version = excluded.version, queued_at = excluded.queued_at`,
    ),
    settle: db.prepare<QueuedPushKey>(
      'DELETE FROM push_queue WHERE subscription_id = @subscriptionId AND device_id = @deviceId AND version = @version',
    ),
    clearQueue: db.prepare<[]>('DELETE FROM push_queue'),
  };
}

/**
 * Web Push subscriptions and the queue of pushes to send. A push is queued in the transaction of the
 * alert that asks for it (as the cloud outbox is): no extra commit, so no extra fsync on the SD
 * card per alert, and no alert is committed without its pushes.
 */
export class PushRecords {
  private readonly sql: ReturnType<typeof prepare>;
  /** Off until notifications are on: a store opened by the CLI or a test queues nothing. */
  private rules: PushQueueRules | null = null;
  private rows = 0;
  private version = 0;

  constructor(private readonly conn: Connection) {
    this.sql = prepare(conn.db);
    // The rolled-back pushes were counted as they were written.
    conn.onRollback(() => {
      if (this.rules) this.rows = this.countQueue();
    });
  }

  // --- subscriptions

  /**
   * A subscription, or the owner's one for the same endpoint with these settings instead (a browser
   * subscribing again), unless the owner's or the gateway's bound is reached.
   */
  savePushSubscription(
    s: NewPushSubscription,
    bounds: { perOwner: number; total: number },
    now = Date.now(),
  ): SavedPushSubscription {
    return this.conn.transaction(() => {
      const existing = this.sql.byOwnerEndpoint.get(s.owner, s.endpoint);
      if (!existing) {
        if (mustExist(this.sql.countOfOwner.get(s.owner), 'COUNT(*)') >= bounds.perOwner)
          return { kind: 'full', bound: 'owner' };
        if (mustExist(this.sql.count.get(), 'COUNT(*)') >= bounds.total) return { kind: 'full', bound: 'gateway' };
      }
      const id = existing?.id ?? newId('psh');
      this.conn.run(existing ? this.sql.replace : this.sql.insert, paramsOf({ ...s, id }, now));
      const subscription = mustExist(this.getPushSubscription(id), 'the subscription just written');
      return { kind: existing ? 'updated' : 'created', subscription };
    });
  }

  getPushSubscription(id: string): PushSubscriptionRecord | null {
    const row = this.sql.byId.get(id);
    return row ? toSubscription(row) : null;
  }

  /** The owner's subscriptions, newest first. */
  pushSubscriptionsOf(owner: string): PushSubscriptionRecord[] {
    return this.sql.ofOwner.all(owner).map(toSubscription);
  }

  get pushSubscriptionCount(): number {
    return mustExist(this.sql.count.get(), 'COUNT(*)');
  }

  /** Changes the owner's subscription; null when the owner has none with this id. */
  changePushSubscription(
    id: string,
    owner: string,
    change: PushSubscriptionChange,
    now = Date.now(),
  ): PushSubscriptionRecord | null {
    return this.conn.transaction(() => {
      const row = this.sql.byId.get(id);
      if (!row || row.owner !== owner) return null;
      this.conn.run(this.sql.replace, paramsOf({ ...toSubscription(row), ...change }, now));
      return this.getPushSubscription(id);
    });
  }

  /** Removes a subscription (with its waiting pushes); `owner`: only if it is theirs. False when there was none. */
  deletePushSubscription(id: string, owner: string | null = null): boolean {
    return this.conn.transaction(() => {
      const row = this.sql.byId.get(id);
      if (!row || (owner !== null && row.owner !== owner)) return false;
      this.forgetQueuedOf(() => this.conn.run(this.sql.delete, { id }));
      return true;
    });
  }

  /** Inside the transaction that removes a local account: its subscriptions go with it. */
  removeOfOwner(owner: string): void {
    this.forgetQueuedOf(() => this.conn.run(this.sql.deleteOfOwner, { owner }));
  }

  /** Inside the transaction that revokes a grant. */
  removeOfGrant(grantId: string): void {
    this.forgetQueuedOf(() => this.conn.run(this.sql.deleteOfGrant, { grantId }));
  }

  /** Inside the transaction that revokes every grant of a local account. */
  removeOfUserGrants(username: string): void {
    this.forgetQueuedOf(() => this.conn.run(this.sql.deleteOfUserGrants, { username }));
  }

  /** Inside the transaction that removes a client (its grants go with it). */
  removeOfClientGrants(clientId: string): void {
    this.forgetQueuedOf(() => this.conn.run(this.sql.deleteOfClientGrants, { clientId }));
  }

  /** Subscriptions removed: their queued pushes went with them (ON DELETE CASCADE), so count again. */
  private forgetQueuedOf(remove: () => Database.RunResult): void {
    if (remove().changes > 0 && this.rules) this.rows = this.countQueue();
  }

  // --- the queue

  /** Starts queueing pushes for the alerts written from here on. */
  enableQueue(rules: PushQueueRules): void {
    this.rules = rules;
    this.rows = this.countQueue();
    this.version = this.sql.maxVersion.get() ?? 0;
  }

  get queueSize(): number {
    return this.rows;
  }

  /**
   * Inside the transaction of an alert created, or made more specific (motion → human): a push for
   * each subscription that wants it, replacing the one waiting for the same camera.
   */
  alertRaised(alert: Alert, now: number): void {
    const rules = this.rules;
    if (!rules) return;
    const queued: QueuedPush[] = [];
    const replaced: QueuedPushKey[] = [];
    let refused = 0;
    for (const row of this.sql.all.all()) {
      const subscription = toSubscription(row);
      if (!rules.wants(subscription, alert)) continue;
      const before = this.sql.queuedVersion.get(subscription.id, alert.deviceId);
      if (before === undefined && this.rows >= rules.maxRows) {
        refused++;
        continue;
      }
      const push: QueuedPush = {
        subscriptionId: subscription.id,
        deviceId: alert.deviceId,
        alertId: alert.id,
        version: ++this.version,
        queuedAt: now,
      };
      queued.push(push);
      if (before === undefined) this.rows++;
      else replaced.push({ subscriptionId: subscription.id, deviceId: alert.deviceId, version: before });
    }
    for (const p of queued)
      this.conn.run(this.sql.enqueue, {
        subscription_id: p.subscriptionId,
        device_id: p.deviceId,
        alert_id: p.alertId,
        version: p.version,
        queued_at: p.queuedAt,
      });
    if (queued.length > 0 || refused > 0) rules.onChange({ queued, replaced, refused });
  }

  /** Every waiting push, oldest first. */
  pushQueue(): QueuedPush[] {
    const rows = this.sql.queue.all().map(toQueued);
    // The count follows what another process removed too (a subscription gone with its account).
    if (this.rules) this.rows = rows.length;
    return rows;
  }

  /** Pushes sent or given up, in one transaction (one commit for a burst); a row replaced since stays. */
  settlePushes(keys: readonly QueuedPushKey[]): void {
    if (keys.length === 0) return;
    this.conn.transaction(() => {
      for (const key of keys) this.rows -= this.conn.run(this.sql.settle, key).changes;
    });
  }

  /** Forgets every waiting push (notifications turned off). */
  clearPushQueue(): void {
    this.conn.run(this.sql.clearQueue);
    this.rows = 0;
  }

  private countQueue(): number {
    return mustExist(this.sql.queueCount.get(), 'SELECT COUNT(*) FROM push_queue');
  }
}
