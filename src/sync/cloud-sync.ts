import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { BaseLogger } from 'pino';
import { presentAlert, presentControl, presentDevice, presentRecording } from '../domain/present.js';
import { backoffMs } from '../domain/backoff.js';
import { DeviceUnavailableError, NotFoundError, NotSupportedError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Alert, ControlAction, ControlRequest, Device, EventType, Recording } from '../domain/types.js';
import type { OutboxMessage } from '../store/store.js';
import { parseControlCommand } from './commands.js';
import {
  homeAssistantDetectionImage,
  homeAssistantDetectionImageDiscovery,
  homeAssistantDeviceDiscovery,
  homeAssistantDeviceRemoval,
  homeAssistantDeviceStates,
  homeAssistantEventState,
  homeAssistantGatewayDiscovery,
  type HaMessage,
  type HomeAssistantContext,
} from './home-assistant.js';
import {
  alertsTopic,
  controlResultTopic,
  controlSubscription,
  deviceTopic,
  parseControlTopic,
  recordingsTopic,
  statusTopic,
} from './topics.js';

// The cloud link: one MQTT session (persistent, QoS 1) that drains the outbox in order and takes
// control commands. The outbox rows are written with each change by the store, so this part may be
// slow, offline or restarted without losing anything: a row goes only when the broker has
// acknowledged it (PUBACK), and each message carries its row's stable message_id for the cloud to
// drop a re-sent one.

export interface SyncStore {
  outboxBatch(afterSeq: number, limit: number): OutboxMessage[];
  deleteOutboxMessages(seqs: readonly number[]): void;
  getControlRequest(id: string): ControlRequest | null;
  getDevice(id: string): Device | null;
  requeueControlResult(id: string): void;
  listCameraDevices(): Device[];
  /** Messages given up because the outbox was full, by kind (logged as they grow). */
  readonly outboxEvicted: Readonly<Record<string, number>>;
}

/**
 * How a cloud command reaches the camera: carries out the action and returns the finished, stored
 * request, named by the command's id (DeviceUnavailableError when the camera cannot take it).
 */
export interface SyncControl {
  run(deviceId: string, action: ControlAction, requestId: string): Promise<ControlRequest>;
}

export interface CloudSyncOptions {
  url: string;
  prefix: string;
  gatewayId: string;
  store: SyncStore;
  control: SyncControl;
  logger: BaseLogger;
  /** TLS files' contents and credentials, as mqtt.js takes them. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  username?: string | null;
  password?: string | null;
  homeAssistant?: { discoveryPrefix: string } | null;
  /** The gateway's version, for Home Assistant's device block. */
  version: string;
  /** Messages handed to the client and not yet acknowledged (bounds memory during an outage). */
  window?: number;
  maxCommandBytes?: number;
  maxBackoffMs?: number;
  /** How long stop() waits for the messages in flight to be acknowledged (3 s). */
  endGraceMs?: number;
  random?: () => number;
}

/** MQTT 5 session expiry: the broker keeps our subscriptions (and commands for us) this long. */
const SESSION_EXPIRY_S = 7 * 24 * 3600;

export class CloudSync {
  private client: MqttClient | null = null;
  private protocolVersion: 4 | 5 = 5;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Outbox rows handed to the client on this connection, by seq; they stay until acknowledged. */
  private readonly inFlight = new Set<number>();
  private highestHanded = 0;
  /** Counts connections: an answer to a message handed on an earlier one is not this one's. */
  private connection = 0;
  private draining = false;
  /** Acknowledged rows, deleted together (one transaction, one fsync, for many PUBACKs). */
  private acked: number[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly activeEvents = new Map<string, Set<EventType>>();
  readonly stats = { published: 0, acknowledged: 0, commands: 0, refusedCommands: 0, connects: 0 };

  constructor(private readonly opts: CloudSyncOptions) {}

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  start(): void {
    this.open();
  }

  private clientOptions(): IClientOptions {
    const status = statusTopic(this.opts.prefix, this.opts.gatewayId);
    return {
      protocolVersion: this.protocolVersion,
      clientId: `edge-gateway-${this.opts.gatewayId}`,
      clean: false,
      ...(this.protocolVersion === 5 ? { properties: { sessionExpiryInterval: SESSION_EXPIRY_S } } : {}),
      keepalive: 30,
      connectTimeout: 10_000,
      // Reconnection is ours: backoff with jitter instead of a fixed period.
      reconnectPeriod: 0,
      // Without it, mqtt-packet builds a table of all 65,536 two-byte numbers as buffers at the first
      // write (7 MB of heap, a seventh of the daemon's, marked at every full collection) to save a
      // 2-byte allocation a packet: a few packets a second here.
      writeCache: false,
      will: { topic: status, payload: Buffer.from('offline'), qos: 1, retain: true },
      ...(this.opts.username ? { username: this.opts.username } : {}),
      ...(this.opts.password ? { password: this.opts.password } : {}),
      ...(this.opts.tls?.ca ? { ca: this.opts.tls.ca } : {}),
      ...(this.opts.tls?.cert ? { cert: this.opts.tls.cert } : {}),
      ...(this.opts.tls?.key ? { key: this.opts.tls.key } : {}),
    };
  }

  private open(): void {
    const client = connect(this.opts.url, this.clientOptions());
    this.client = client;
    client.on('connect', () => {
      this.attempt = 0;
      this.stats.connects++;
      this.opts.logger.info({ url: this.opts.url, protocolVersion: this.protocolVersion }, 'cloud sync connected');
      this.onConnected(client);
    });
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
    client.on('error', (err: Error & { code?: number | string }) => {
      // A broker that only speaks MQTT 3.1.1 refuses a version 5 CONNECT ("unacceptable protocol
      // version": code 1 in 3.1.1, 0x84 in 5).
      if (
        this.protocolVersion === 5 &&
        (err.code === 1 ||
          err.code === 0x84 ||
          /unacceptable protocol version|unsupported protocol version/i.test(err.message))
      ) {
        this.opts.logger.warn('cloud broker does not speak MQTT 5; using 3.1.1');
        this.protocolVersion = 4;
      } else {
        this.opts.logger.warn({ err: err.message }, 'cloud sync error');
      }
    });
    client.on('close', () => {
      this.forgetInFlight();
      if (this.stopped) return;
      if (this.reconnectTimer) return;
      const wait =
        this.attempt === 0 && this.protocolVersion === 4 && this.stats.connects === 0
          ? 0
          : backoffMs(this.attempt, this.opts.maxBackoffMs ?? 30_000, this.opts.random ?? Math.random);
      this.attempt++;
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        if (this.stopped) return;
        if (client.options.protocolVersion !== this.protocolVersion) {
          // A new protocol version needs a new client.
          client.end(true);
          this.open();
        } else {
          client.reconnect();
        }
      }, wait);
      this.reconnectTimer.unref();
    });
  }

  private onConnected(client: MqttClient): void {
    const { prefix, gatewayId } = this.opts;
    client.publish(statusTopic(prefix, gatewayId), 'online', { qos: 1, retain: true });
    client.subscribe(controlSubscription(prefix, gatewayId), { qos: 1 }, (err) => {
      if (err) this.opts.logger.error({ err: err.message }, 'cloud sync: cannot subscribe to commands');
    });
    if (this.opts.homeAssistant) this.publishHomeAssistant(client);
    void this.drain();
  }

  private haContext(): HomeAssistantContext {
    return {
      discoveryPrefix: this.opts.homeAssistant?.discoveryPrefix ?? 'homeassistant',
      prefix: this.opts.prefix,
      gatewayId: this.opts.gatewayId,
      gatewayVersion: this.opts.version,
    };
  }

  private publishHa(client: MqttClient, messages: readonly HaMessage[]): void {
    for (const m of messages) client.publish(m.topic, m.payload, { qos: m.qos, retain: m.retain });
  }

  private publishHomeAssistant(client: MqttClient): void {
    const ctx = this.haContext();
    this.publishHa(client, [homeAssistantGatewayDiscovery(ctx)]);
    for (const device of this.opts.store.listCameraDevices()) {
      this.publishHa(client, [
        ...homeAssistantDeviceDiscovery(ctx, device),
        homeAssistantDetectionImageDiscovery(ctx, device),
      ]);
      this.publishHa(client, homeAssistantDeviceStates(ctx, device, this.activeEvents.get(device.id) ?? new Set()));
    }
  }

  /** A camera event's state for Home Assistant (not through the outbox: a state, not a record). */
  cameraEvent(deviceId: string, kind: EventType, active: boolean): void {
    let kinds = this.activeEvents.get(deviceId);
    if (!kinds) this.activeEvents.set(deviceId, (kinds = new Set()));
    if (active) kinds.add(kind);
    else kinds.delete(kind);
    const client = this.client;
    if (this.opts.homeAssistant && client?.connected)
      this.publishHa(client, [homeAssistantEventState(this.haContext(), deviceId, kind, active)]);
  }

  /** A device was added or changed: Home Assistant learns of it (its record goes via the outbox). */
  deviceChanged(device: Device): void {
    const client = this.client;
    if (!this.opts.homeAssistant || !client?.connected) return;
    const ctx = this.haContext();
    this.publishHa(client, [
      ...homeAssistantDeviceDiscovery(ctx, device),
      homeAssistantDetectionImageDiscovery(ctx, device),
    ]);
    this.publishHa(client, homeAssistantDeviceStates(ctx, device, this.activeEvents.get(device.id) ?? new Set()));
  }

  /**
   * A device was removed: Home Assistant forgets its entities (empty retained configs and states;
   * its record's retained message is cleared via the outbox). Not kept for later: a broker away at
   * that moment keeps them until they are deleted there.
   */
  deviceRemoved(deviceId: string): void {
    this.activeEvents.delete(deviceId);
    const client = this.client;
    if (this.opts.homeAssistant && client?.connected)
      this.publishHa(client, homeAssistantDeviceRemoval(this.haContext(), deviceId));
  }

  /**
   * The detector confirmed a person or vehicle: its boxed picture for Home Assistant's image entity
   * (retained; not through the outbox: while the broker is away only the newest picture matters,
   * and the alert with its thumbnail is synced as a record anyway).
   */
  detectionImage(deviceId: string, jpeg: Buffer): void {
    const client = this.client;
    if (this.opts.homeAssistant && client?.connected)
      this.publishHa(client, [homeAssistantDetectionImage(this.haContext(), deviceId, jpeg)]);
  }

  private kickPending = false;

  /**
   * New rows may be in the outbox. The drain runs a turn later: the store calls this inside the
   * change's transaction, which must be committed (or rolled back) before its rows are read.
   */
  kick(): void {
    if (this.kickPending) return;
    this.kickPending = true;
    setImmediate(() => {
      this.kickPending = false;
      void this.drain();
    });
  }

  private evictedSeen = 0;

  /** The outbox overflowed since the last look: say so once per drain (also in /metrics). */
  private reportEvictions(): void {
    const evicted = this.opts.store.outboxEvicted;
    const total = Object.values(evicted).reduce((a, b) => a + b, 0);
    if (total > this.evictedSeen)
      this.opts.logger.warn(
        { evicted, since: total - this.evictedSeen },
        'cloud outbox full: oldest messages of the least important kinds given up',
      );
    this.evictedSeen = total;
  }

  private async drain(): Promise<void> {
    this.reportEvictions();
    if (this.draining) return;
    this.draining = true;
    try {
      const window = this.opts.window ?? 256;
      for (;;) {
        const client = this.client;
        if (!client?.connected || this.stopped) return;
        const room = window - this.inFlight.size;
        if (room <= 0) return; // acknowledgements call drain again
        const batch = this.opts.store.outboxBatch(this.highestHanded, Math.min(room, 256));
        if (batch.length === 0) return;
        for (const m of batch) this.hand(client, m);
        // Let acknowledgements and other work in between large backlogs.
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * The connection closed: nothing handed on it will be acknowledged or sent again by the client
   * (its reconnect() starts with an empty store of outgoing messages, and a broker that lost the
   * session would not take them anyway). They are all still in the outbox: the next connection
   * hands every row from its first again, in order, once the acknowledged ones are deleted.
   */
  private forgetInFlight(): void {
    this.connection++;
    this.flushAcked();
    this.inFlight.clear();
    this.highestHanded = 0;
  }

  private hand(client: MqttClient, m: OutboxMessage): void {
    this.inFlight.add(m.seq);
    this.highestHanded = Math.max(this.highestHanded, m.seq);
    const { topic, body } = this.render(m);
    this.stats.published++;
    const connection = this.connection;
    client.publish(topic, body, { qos: 1, retain: m.kind === 'device' }, (err) => {
      if (connection !== this.connection) return; // forgotten with its connection; handed again
      this.inFlight.delete(m.seq);
      if (err) {
        // Not sent (the client gave it up): it is still in the outbox; start again from there.
        this.highestHanded = Math.min(this.highestHanded, m.seq - 1);
        return;
      }
      this.stats.acknowledged++;
      this.acked.push(m.seq);
      this.scheduleFlush();
      void this.drain();
    });
  }

  /** The published form of a row: the API's shape of its record plus the stable message_id. */
  private render(m: OutboxMessage): { topic: string; body: string } {
    const { prefix, gatewayId } = this.opts;
    const record = JSON.parse(m.body) as unknown;
    switch (m.kind) {
      case 'device':
        return {
          topic: deviceTopic(prefix, gatewayId, m.subjectId),
          // A removed device: its retained message is cleared (MQTT's empty retained payload).
          body: record === null ? '' : JSON.stringify({ message_id: m.messageId, ...presentDevice(record as Device) }),
        };
      case 'alert':
        return {
          topic: alertsTopic(prefix, gatewayId),
          body: JSON.stringify({ message_id: m.messageId, ...presentAlert(record as Alert) }),
        };
      case 'recording':
        return {
          topic: recordingsTopic(prefix, gatewayId),
          body: JSON.stringify({ message_id: m.messageId, ...presentRecording(record as Recording) }),
        };
      case 'control_result': {
        const request = record as ControlRequest;
        return {
          topic: controlResultTopic(prefix, gatewayId, request.deviceId),
          body: JSON.stringify({ message_id: m.messageId, ...presentControl(request) }),
        };
      }
    }
  }

  private scheduleFlush(): void {
    if (this.acked.length >= 500) return this.flushAcked();
    this.flushTimer ??= setTimeout(() => this.flushAcked(), 20);
  }

  private flushAcked(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.acked.length === 0) return;
    const seqs = this.acked;
    this.acked = [];
    try {
      this.opts.store.deleteOutboxMessages(seqs);
    } catch (err) {
      // Sent but still listed: sent again later, with the same message_id.
      this.opts.logger.error({ err: (err as Error).message }, 'cloud sync: cannot delete sent messages');
    }
  }

  private onMessage(topic: string, payload: Buffer): void {
    const deviceId = parseControlTopic(this.opts.prefix, this.opts.gatewayId, topic);
    if (!deviceId) return;
    this.stats.commands++;
    const parsed = parseControlCommand(payload, this.opts.maxCommandBytes ?? 4096);
    if (!parsed.ok) {
      this.refuse(deviceId, parsed.error.commandId, parsed.error.code, parsed.error.message);
      return;
    }
    const { id, action } = parsed.command;
    if (!this.opts.store.getDevice(deviceId))
      return this.refuse(deviceId, id, 'unknown_device', `device ${deviceId} is not known here`);
    // A repeated id (the cloud re-sent, or our result was lost) is answered from the store.
    const known = this.opts.store.getControlRequest(id);
    if (known) {
      if (known.deviceId !== deviceId)
        return this.refuse(deviceId, id, 'invalid_command', `command id ${id} was used for another device`);
      if (known.status !== 'pending') this.opts.store.requeueControlResult(id);
      this.kick();
      return;
    }
    this.opts.control.run(deviceId, action, id).then(
      () => this.kick(),
      (err: unknown) => {
        // Refused by the camera: the stored, failed request is already in the outbox.
        if (this.opts.store.getControlRequest(id)) return this.kick();
        if (err instanceof NotFoundError)
          return this.refuse(deviceId, id, 'unknown_device', `device ${deviceId} is not known here`);
        if (err instanceof DeviceUnavailableError) return this.refuse(deviceId, id, 'device_unavailable', err.message);
        if (err instanceof NotSupportedError) return this.refuse(deviceId, id, 'not_supported', err.message);
        this.opts.logger.error({ err, deviceId }, 'cloud command failed');
        this.refuse(deviceId, id, 'internal_error', 'the gateway could not carry out the command');
      },
    );
  }

  /** A command that was not carried out: its result goes straight back (there is no stored request). */
  private refuse(deviceId: string, commandId: string | null, code: string, message: string): void {
    this.stats.refusedCommands++;
    this.opts.logger.warn({ deviceId, commandId, code, message }, 'cloud command refused');
    const body = {
      message_id: newId('msg'),
      id: commandId,
      device_id: deviceId,
      status: 'failed',
      error: code,
      error_description: message,
    };
    this.client?.publish(controlResultTopic(this.opts.prefix, this.opts.gatewayId, deviceId), JSON.stringify(body), {
      qos: 1,
    });
  }

  /** Says offline (retained), sends what is acknowledged-pending, and disconnects. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.flushAcked();
    const client = this.client;
    if (!client) return;
    if (client.connected) {
      await new Promise<void>((resolve) => {
        client.publish(statusTopic(this.opts.prefix, this.opts.gatewayId), 'offline', { qos: 1, retain: true }, () =>
          resolve(),
        );
        setTimeout(resolve, 2000).unref();
      });
    }
    // A graceful end waits until every message in flight is acknowledged, and mqtt.js never
    // forgets one sent before a broker outage whose acknowledgement is lost: end(false) would then
    // wait for ever, and the daemon would never stop (systemd kills it at TimeoutStopSec). What is
    // not acknowledged by then is still in the outbox and is sent again at the next start.
    const ended = new Promise<boolean>((resolve) => client.end(false, {}, () => resolve(true)));
    const within = (ms: number) =>
      Promise.race([ended, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
    if (!(await within(this.opts.endGraceMs ?? 3000))) {
      this.opts.logger.warn(
        'cloud sync: messages in flight were not acknowledged in time; the link is closed without them (they stay in the outbox)',
      );
      // end() is waiting for this event (a second end() call would be ignored): the client then
      // says DISCONNECT and closes the connection; a connection that does not close is cut.
      client.emit('outgoingEmpty');
      if (!(await within(1000))) client.stream.destroy();
    }
    this.flushAcked();
  }
}
