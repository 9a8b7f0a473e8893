import type { BaseLogger } from 'pino';
import type { Alert } from '../domain/types.js';
import type { AllowedEndpoint, EndpointCheck } from './endpoint.js';
import { alertPayloadText, pictureBudget, testPayloadText, topicOf, urgencyOf, type AlertFacts } from './payload.js';
import {
  describeResult,
  DROP_REASONS,
  FAILURE_REASONS,
  failureOf,
  nextStep,
  type DropReason,
  type FailureReason,
  type SendResult,
} from './schedule.js';
import type { PushRequest } from './vapid.js';

// The delivery of queued pushes: the queue is a table (src/store/push.ts), written with each alert;
// this reads it, sends what is due, and settles what was sent or given up. One push per
// subscription and camera is waiting at a time (a newer alert replaces it), and one is sent per
// cooldown: the first of a burst at once, the newest after the cooldown. At most maxInFlight
// requests at once, so nothing here holds up recording or the API. docs/notifications.md.

/** Where a push goes: a subscription's endpoint and keys. */
export interface PushTarget {
  id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
}

export interface QueuedPushRow {
  subscriptionId: string;
  deviceId: string;
  alertId: string;
  version: number;
  queuedAt: number;
}
export type QueuedPushRef = Pick<QueuedPushRow, 'subscriptionId' | 'deviceId' | 'version'>;

/** What the notifier needs of the store. */
export interface NotifierStore {
  pushQueue(): QueuedPushRow[];
  /** Deletes the rows of these versions (one transaction); a row replaced since stays. */
  settlePushes(keys: readonly QueuedPushRef[]): void;
  getPushSubscription(id: string): PushTarget | null;
  deletePushSubscription(id: string): boolean;
  getAlert(id: string): Alert | null;
  getDevice(id: string): { name: string } | null;
}

export interface NotifierOptions {
  store: NotifierStore;
  /** Encrypts a payload for a subscription and signs its VAPID header (src/notify/vapid.ts). */
  encode(
    target: PushTarget,
    payload: string,
    headers: { ttlS: number; topic: string; urgency: 'high' | 'normal' },
  ): PushRequest;
  send(endpoint: AllowedEndpoint, request: PushRequest): Promise<SendResult>;
  /** The endpoint policy of now (notifications.push_hosts): checked again before every send. */
  checkEndpoint(endpoint: string): EndpointCheck;
  /** A JPEG of the camera now, at most maxBytes; null when none can be had. Never rejects. */
  picture(deviceId: string, maxBytes: number): Promise<Buffer | null>;
  cooldownMs: number;
  ttlMs: number;
  maxInFlight: number;
  logger: BaseLogger;
  /** Longest wait between two attempts (60 s). */
  maxBackoffMs?: number;
  /** Settled pushes are deleted together within this many ms (one commit, one fsync, for a burst). */
  settleDelayMs?: number;
  now?: () => number;
  random?: () => number;
}

/** Counts for /metrics (src/notify/metrics.ts). */
export interface NotifierStats {
  sent: number;
  failed: Record<FailureReason, number>;
  collapsed: number;
  dropped: Record<DropReason, number>;
  /** Subscriptions removed because their push service said they are gone (404, 410). */
  removed: number;
}

/** What "send a test notification" answers. */
export interface TestOutcome {
  delivered: boolean;
  /** The push service's HTTP status; null when there was no answer. */
  status: number | null;
  /** In words: delivered, or what the push service said, or why it could not be reached. */
  outcome: string;
}

interface Attempts {
  version: number;
  /** Attempts made. */
  attempt: number;
  retryAt: number;
  /** The push service refused the payload with its picture (413). */
  withoutImage: boolean;
}

/** Pictures kept, by alert (one per alert, made when its push is queued). */
const MAX_PICTURES = 64;

const keyOf = (p: Pick<QueuedPushRow, 'subscriptionId' | 'deviceId'>) => `${p.subscriptionId}\0${p.deviceId}`;
const zeroes = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export class Notifier {
  readonly stats: NotifierStats = {
    sent: 0,
    failed: zeroes(FAILURE_REASONS),
    collapsed: 0,
    dropped: zeroes(DROP_REASONS),
    removed: 0,
  };
  /** The version being sent, by subscription and camera. */
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Map<string, Attempts>();
  /** When the last push was delivered, by subscription and camera (the cooldown runs from there). */
  private readonly lastSent = new Map<string, number>();
  private readonly pictures = new Map<string, Promise<Buffer | null>>();
  /** Alerts queued this turn, whose pictures are made once their transaction has committed. */
  private readonly newAlerts = new Set<string>();
  private settling: QueuedPushRef[] = [];
  /** `key\0version` of the settled rows not yet deleted: the queue still lists them. */
  private readonly settled = new Set<string>();
  private settleTimer: NodeJS.Timeout | null = null;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Number.POSITIVE_INFINITY;
  private pumpPending = false;
  private stopped = false;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly opts: NotifierOptions) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  /** Starts sending what the queue holds (pushes left from before a restart included). */
  start(): void {
    this.kick();
  }

  /**
   * The store queued pushes (called inside the alert's transaction: the queue is read a turn later,
   * once it has committed). A waiting push replaced by a newer one is counted as collapsed; one
   * being sent or just sent is not (the newer one follows after the cooldown).
   */
  queueChanged(change: {
    queued: readonly QueuedPushRow[];
    replaced: readonly QueuedPushRef[];
    refused: number;
  }): void {
    for (const r of change.replaced) {
      const key = keyOf(r);
      const sent = this.inFlight.get(key) === r.version || this.settled.has(`${key}\0${r.version}`);
      if (!sent) this.stats.collapsed++;
    }
    this.stats.dropped.queue_full += change.refused;
    for (const q of change.queued) this.newAlerts.add(q.alertId);
    this.kick();
  }

  /** Looks at the queue a turn later (several changes in one turn: one look). */
  kick(): void {
    if (this.pumpPending || this.stopped) return;
    this.pumpPending = true;
    setImmediate(() => {
      this.pumpPending = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stopped) return;
    for (const alertId of this.newAlerts) this.prefetch(alertId);
    this.newAlerts.clear();
    const now = this.now();
    let rows: QueuedPushRow[];
    try {
      rows = this.opts.store.pushQueue();
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message }, 'push queue cannot be read');
      return this.wake(now + 5000);
    }
    const waiting = new Set<string>();
    let next = Number.POSITIVE_INFINITY;
    for (const row of rows) {
      const key = keyOf(row);
      waiting.add(key);
      if (this.inFlight.has(key) || this.settled.has(`${key}\0${row.version}`)) continue;
      let tried = this.attempts.get(key);
      if (tried && tried.version !== row.version) {
        this.attempts.delete(key);
        tried = undefined;
      }
      const deadline = row.queuedAt + this.opts.ttlMs;
      if (now >= deadline) {
        this.drop(row, 'expired');
        continue;
      }
      const due = Math.max((this.lastSent.get(key) ?? -Infinity) + this.opts.cooldownMs, tried?.retryAt ?? -Infinity);
      if (due > now) {
        next = Math.min(next, due, deadline);
        continue;
      }
      // Full: a send that ends looks at the queue again.
      if (this.inFlight.size >= this.opts.maxInFlight) continue;
      this.begin(row, tried ?? { version: row.version, attempt: 0, retryAt: 0, withoutImage: false });
    }
    // What no row needs any more: attempts of settled rows, cooldowns that have run out.
    for (const key of this.attempts.keys()) if (!waiting.has(key)) this.attempts.delete(key);
    for (const [key, at] of this.lastSent) if (now - at >= this.opts.cooldownMs) this.lastSent.delete(key);
    this.wake(next);
  }

  private wake(at: number): void {
    if (at === this.wakeAt || this.stopped) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
    this.wakeAt = at;
    if (!Number.isFinite(at)) return;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.wakeAt = Number.POSITIVE_INFINITY;
        this.pump();
      },
      Math.max(0, at - this.now()),
    );
  }

  private begin(row: QueuedPushRow, tried: Attempts): void {
    const key = keyOf(row);
    this.inFlight.set(key, row.version);
    this.deliver(row, tried)
      .catch((err: unknown) => {
        // The store failed (a full disk): tried again later, as an unreachable push service would be.
        this.opts.logger.error({ err: (err as Error).message }, 'a push could not be sent');
        tried.attempt++;
        tried.retryAt = this.now() + 5000;
        this.attempts.set(key, tried);
      })
      .finally(() => {
        this.inFlight.delete(key);
        this.kick();
      });
  }

  private async deliver(row: QueuedPushRow, tried: Attempts): Promise<void> {
    const { store, logger } = this.opts;
    const target = store.getPushSubscription(row.subscriptionId);
    // Removed meanwhile: its queued pushes went with it.
    if (!target) return;
    const alert = store.getAlert(row.alertId);
    if (!alert) return this.drop(row, 'alert_gone');
    const check = this.opts.checkEndpoint(target.endpoint);
    if (!check.ok) {
      logger.warn(
        { subscription: target.id, problem: check.problem },
        'push not sent: its endpoint is no longer allowed',
      );
      return this.drop(row, 'endpoint_not_allowed');
    }
    const facts = this.factsOf(alert);
    const deadline = row.queuedAt + this.opts.ttlMs;
    let image = tried.withoutImage ? null : await this.pictureOf(alert, facts);
    for (;;) {
      const { text, withImage } = alertPayloadText(facts, image);
      const request = this.opts.encode(target, text, {
        ttlS: (deadline - this.now()) / 1000,
        topic: topicOf(alert.deviceId),
        urgency: urgencyOf(alert.type),
      });
      const result = await this.opts.send(check.endpoint, request);
      this.count(result);
      const step = nextStep(result, {
        attempt: tried.attempt,
        now: this.now(),
        deadline,
        hadImage: withImage,
        random: this.random,
        maxBackoffMs: this.opts.maxBackoffMs ?? 60_000,
      });
      const where = { subscription: target.id, alert: alert.id, outcome: describeResult(result) };
      switch (step.step) {
        case 'done':
          this.lastSent.set(keyOf(row), this.now());
          this.settle(row);
          logger.debug(where, 'push sent');
          return;
        case 'remove_subscription':
          this.removeGone(target.id, where);
          return;
        case 'resend_without_image':
          image = null;
          tried.withoutImage = true;
          continue;
        case 'retry':
          tried.attempt++;
          tried.retryAt = step.at;
          this.attempts.set(keyOf(row), tried);
          logger.debug({ ...where, retryInMs: step.at - this.now() }, 'push to be tried again');
          return;
        case 'drop':
          logger.warn({ ...where, reason: step.reason }, 'push given up');
          this.drop(row, step.reason);
          return;
      }
    }
  }

  /** Sends a test notification to one subscription now and says what became of it. */
  async sendTest(target: PushTarget): Promise<TestOutcome> {
    const check = this.opts.checkEndpoint(target.endpoint);
    if (!check.ok) return { delivered: false, status: null, outcome: check.problem };
    const request = this.opts.encode(target, testPayloadText(this.now()), {
      ttlS: 60,
      topic: 'test',
      urgency: 'normal',
    });
    const result = await this.opts.send(check.endpoint, request);
    this.count(result);
    const failure = failureOf(result);
    if (failure === 'gone') this.removeGone(target.id, { subscription: target.id, outcome: describeResult(result) });
    return {
      delivered: failure === null,
      status: result.kind === 'answered' ? result.status : null,
      outcome: describeResult(result),
    };
  }

  private count(result: SendResult): void {
    const failure = failureOf(result);
    if (failure === null) this.stats.sent++;
    else this.stats.failed[failure]++;
  }

  private removeGone(subscriptionId: string, where: object): void {
    if (this.opts.store.deletePushSubscription(subscriptionId)) this.stats.removed++;
    this.opts.logger.info(where, 'push subscription removed: its push service says it is gone');
  }

  private factsOf(alert: Alert): AlertFacts {
    return {
      alertId: alert.id,
      deviceId: alert.deviceId,
      deviceName: this.opts.store.getDevice(alert.deviceId)?.name ?? alert.deviceId,
      type: alert.type,
      message: alert.message,
      createdAt: alert.createdAt,
    };
  }

  /** The picture of a queued alert, asked for at once: the camera's picture of that moment. */
  private prefetch(alertId: string): void {
    if (this.pictures.has(alertId)) return;
    const alert = this.opts.store.getAlert(alertId);
    if (alert) void this.pictureOf(alert, this.factsOf(alert));
  }

  private pictureOf(alert: Alert, facts: AlertFacts): Promise<Buffer | null> {
    if (alert.type === 'device_offline') return Promise.resolve(null);
    let picture = this.pictures.get(alert.id);
    if (!picture) {
      picture = this.opts.picture(alert.deviceId, pictureBudget(facts));
      if (this.pictures.size >= MAX_PICTURES) this.pictures.delete(this.pictures.keys().next().value as string);
      this.pictures.set(alert.id, picture);
    }
    return picture;
  }

  private drop(row: QueuedPushRow, reason: DropReason): void {
    this.stats.dropped[reason]++;
    this.settle(row);
  }

  /** The row is done with; deleted with the others settled within settleDelayMs. */
  private settle(row: QueuedPushRow): void {
    this.settling.push({ subscriptionId: row.subscriptionId, deviceId: row.deviceId, version: row.version });
    this.settled.add(`${keyOf(row)}\0${row.version}`);
    this.settleTimer ??= setTimeout(() => this.flushSettled(), this.opts.settleDelayMs ?? 20);
  }

  private flushSettled(): void {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    const keys = this.settling;
    this.settling = [];
    try {
      this.opts.store.settlePushes(keys);
    } catch (err) {
      // Still queued: sent again later (the Topic header lets the push service replace the copy).
      this.opts.logger.error({ err: (err as Error).message }, 'sent pushes could not be removed from the queue');
    }
    this.settled.clear();
  }

  /** Stops sending; what is queued stays for the next start. */
  stop(): void {
    this.stopped = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.flushSettled();
  }
}
