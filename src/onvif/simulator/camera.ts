import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimulatedPtz, type SimMotion } from './ptz.js';
import { field, parseSoapRequest, type SoapRequest } from './request.js';
import * as R from './responses.js';
import { checkUsernameToken } from './wsse.js';
import { SimulatedSnapshot } from './snapshot.js';

// A simulated ONVIF camera: the device, media, events and PTZ services over real HTTP, with
// WS-Security UsernameToken digest auth, a settable clock skew, a reboot that drops the camera for a
// while, PullPoint events triggered on demand in one of several vendors' topic styles, and pan,
// tilt and zoom (ptz.ts) unless it is made a fixed camera.

export type EventKind = 'motion' | 'human' | 'vehicle';
export type TopicStyle = 'hikvision' | 'axis' | 'tplink';

export interface SimulatedCameraOptions {
  host?: string;
  port?: number;
  username: string;
  password: string;
  /** Camera clock minus real clock, ms. */
  skewMs?: number;
  identity?: Partial<R.CameraIdentity>;
  endpoint?: string; // urn:uuid:…
  rtspMain?: string;
  rtspSub?: string;
  topicStyle?: TopicStyle;
  /** Refuse unauthenticated GetSystemDateAndTime, as some firmware does. */
  strictTimeAuth?: boolean;
  /** Operations answered to anyone, token or not (real firmware: GetCapabilities, GetServices). */
  openOperations?: readonly string[];
  /** Operations refused with an ActionNotSupported fault, with or without credentials. */
  refuse?: readonly string[];
  rebootMs?: number;
  /**
   * Seconds a PullPoint subscription lives from its creation or renewal, whatever the gateway asks
   * (as real cameras do: many grant 60 s to a request for 2 minutes).
   */
  subscriptionLifetimeS?: number;
  /**
   * Pan, tilt and zoom (default on): false makes a fixed camera (no PTZ service, no PTZ
   * configuration in its profiles); `fov: false` leaves out centring on a point, `homeSupported:
   * false` the home position.
   */
  ptz?: boolean | { fov?: boolean; homeSupported?: boolean };
  /** Told of every change of the PTZ motion (the simulated picture follows it). */
  onPtzMotion?: (m: SimMotion) => void;
  /** Operations whose request the camera takes, carries out, and then drops the connection without an answer. */
  dropConnection?: readonly string[];
}

interface Subscription {
  id: string;
  terminationMs: number; // camera clock
  queue: R.SimNotification[];
  waiter: (() => void) | null;
}

const MAX_QUEUE = 100;
const MAX_BODY = 256 * 1024;

function topicFor(
  style: TopicStyle,
  kind: EventKind,
  active: boolean,
): Pick<R.SimNotification, 'topic' | 'source' | 'data'> {
  const v = active ? 'true' : 'false';
  const src: Array<[string, string]> = [
    ['VideoSourceConfigurationToken', 'VideoSourceConfig_1'],
    ['VideoAnalyticsConfigurationToken', 'VideoAnalytics_1'],
    ['Rule', `${kind}Rule`],
  ];
  if (style === 'axis') {
    if (kind === 'motion')
      return { topic: 'tns1:VideoSource/MotionAlarm', source: [['Source', 'VideoSource_1']], data: [['State', v]] };
    return {
      topic: 'tns1:RuleEngine/ObjectDetection/Object',
      source: src,
      data: [
        ['ClassTypes', kind === 'human' ? 'Human' : 'Vehicle'],
        ['State', v],
      ],
    };
  }
  if (style === 'tplink') {
    if (kind === 'motion')
      return { topic: 'tns1:RuleEngine/CellMotionDetector/Motion', source: src, data: [['IsMotion', v]] };
    return {
      topic: 'tptopic:RuleEngine/TPSmartEventDetector/TPSmartEvent',
      source: src,
      data: [[kind === 'human' ? 'IsPeople' : 'IsVehicle', v]],
    };
  }
  if (kind === 'motion')
    return { topic: 'tns1:RuleEngine/CellMotionDetector/Motion', source: src, data: [['IsMotion', v]] };
  if (kind === 'human') return { topic: 'tns1:RuleEngine/PeopleDetector/People', source: src, data: [['IsPeople', v]] };
  return { topic: 'tns1:RuleEngine/MyRuleDetector/VehicleDetect', source: src, data: [['State', v]] };
}

/** "PT5S", "PT1M", "PT1M30S" → ms (bounded to 60 s, like cameras do). */
function durationMs(text: string | null, fallback: number): number {
  const m = text ? /^PT(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(text) : null;
  if (!m) return fallback;
  return Math.min(60_000, (Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000);
}

export class SimulatedCamera {
  readonly endpoint: string;
  private server: Server | null = null;
  private port: number;
  private readonly host: string;
  private skewMs: number;
  private readonly subs = new Map<string, Subscription>();
  private readonly state: Record<EventKind, boolean> = { motion: false, human: false, vehicle: false };
  private readonly identity: R.CameraIdentity;
  /** Counts of operations served, for tests. */
  readonly calls = new Map<string, number>();
  rebooting = false;
  private password: string;
  /** GET /snapshot.jpg, the URI GetSnapshotUri answers (HTTP Digest with the camera's account). */
  readonly snapshot: SimulatedSnapshot;
  /** Pan, tilt and zoom; null for a fixed camera. */
  readonly ptz: SimulatedPtz | null;
  /** Operations answered by dropping the connection once carried out (tests change it at will). */
  readonly dropConnection: Set<string>;

  constructor(private readonly opts: SimulatedCameraOptions) {
    this.host = opts.host ?? '127.0.0.1';
    this.port = opts.port ?? 0;
    this.skewMs = opts.skewMs ?? 0;
    this.password = opts.password;
    this.endpoint = opts.endpoint ?? `urn:uuid:${randomUUID()}`;
    this.snapshot = new SimulatedSnapshot(() => ({ username: opts.username, password: this.password }));
    this.identity = {
      manufacturer: 'SimCam',
      model: 'SIM-4MP',
      firmware: '1.0.0',
      serial: this.endpoint.slice(-12),
      hardwareId: 'sim',
      ...opts.identity,
    };
    const ptz = opts.ptz ?? true;
    this.ptz =
      ptz === false
        ? null
        : new SimulatedPtz({
            ...(ptz === true ? {} : ptz),
            ...(opts.onPtzMotion ? { onMotion: opts.onPtzMotion } : {}),
          });
    this.dropConnection = new Set(opts.dropConnection ?? []);
  }

  get baseUrl(): string {
    return `http://${this.host}:${this.port}`;
  }
  get deviceServiceUrl(): string {
    return `${this.baseUrl}/onvif/device_service`;
  }
  private get subscriptionLifetimeMs(): number {
    return (this.opts.subscriptionLifetimeS ?? 60) * 1000;
  }

  nowMs(): number {
    return Date.now() + this.skewMs;
  }
  setSkew(ms: number): void {
    this.skewMs = ms;
  }
  /** The owner changes the camera's password (e.g. to the one the gateway was configured with). */
  setPassword(password: string): void {
    this.password = password;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.subs.values()) s.waiter?.();
    this.subs.clear();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Drops off the network for rebootMs, then comes back on the same port with no subscriptions. */
  reboot(): void {
    if (this.rebooting) return;
    this.rebooting = true;
    setTimeout(() => {
      void this.stop()
        .then(() => new Promise((r) => setTimeout(r, this.opts.rebootMs ?? 3000)))
        .then(() => this.start())
        .finally(() => {
          this.rebooting = false;
        });
    }, 100);
  }

  /** Starts or stops an event of one kind; every subscription gets the camera's notification. */
  trigger(kind: EventKind, active: boolean): void {
    this.state[kind] = active;
    const note: R.SimNotification = {
      ...topicFor(this.opts.topicStyle ?? 'hikvision', kind, active),
      operation: 'Changed',
      utcMs: this.nowMs(),
    };
    for (const sub of this.subs.values()) {
      if (sub.queue.length >= MAX_QUEUE) sub.queue.shift();
      sub.queue.push(note);
      sub.waiter?.();
    }
  }

  /**
   * The simulator's own controls, for demos and tests driving it from another process:
   * POST /sim/trigger?kind=motion|human|vehicle&active=true|false, /sim/reboot, /sim/skew?ms=N.
   */
  private control(url: URL, res: ServerResponse): void {
    const answer = (status: number, text: string): void => {
      res.writeHead(status, { 'content-type': 'text/plain' }).end(`${text}\n`);
    };
    if (url.pathname === '/sim/trigger') {
      const kind = url.searchParams.get('kind');
      const active = url.searchParams.get('active') !== 'false';
      if (kind !== 'motion' && kind !== 'human' && kind !== 'vehicle')
        return answer(400, 'kind must be motion, human or vehicle');
      this.trigger(kind, active);
      return answer(200, `${kind} ${active ? 'started' : 'stopped'}`);
    }
    if (url.pathname === '/sim/reboot') {
      this.reboot();
      return answer(200, 'rebooting');
    }
    if (url.pathname === '/sim/skew') {
      const ms = Number(url.searchParams.get('ms'));
      if (!Number.isFinite(ms)) return answer(400, 'ms must be a number');
      this.setSkew(ms);
      return answer(200, `clock skew ${ms} ms`);
    }
    return answer(404, 'unknown simulator control');
  }

  private count(op: string): void {
    this.calls.set(op, (this.calls.get(op) ?? 0) + 1);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, xml: string) => {
      res.writeHead(status, { 'content-type': 'application/soap+xml; charset=utf-8' }).end(xml);
    };
    if (req.method === 'GET' && req.url === '/snapshot.jpg') {
      this.count('snapshot.jpg');
      return this.snapshot.serve(req, res);
    }
    if (req.method !== 'POST') return reply(405, R.fault('env:Sender', 'ter:InvalidArgVal', 'POST only'));
    if (req.url?.startsWith('/sim/')) return this.control(new URL(req.url, this.baseUrl), res);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) return reply(413, R.fault('env:Sender', 'ter:InvalidArgVal', 'too large'));
      chunks.push(chunk);
    }
    const request = await parseSoapRequest(Buffer.concat(chunks).toString('utf8'));
    if (!request) return reply(400, R.fault('env:Sender', 'ter:WellFormed', 'Malformed SOAP request'));
    this.count(request.operation);
    if (this.opts.refuse?.includes(request.operation))
      return reply(500, R.fault('env:Receiver', 'ter:ActionNotSupported', 'Optional Action Not Implemented'));
    const open =
      (request.operation === 'GetSystemDateAndTime' && !this.opts.strictTimeAuth) ||
      (this.opts.openOperations?.includes(request.operation) ?? false);
    if (!open) {
      const check = checkUsernameToken(
        request.token,
        { username: this.opts.username, password: this.password },
        this.nowMs(),
      );
      if (!check.ok)
        return reply(400, R.fault('env:Sender', 'ter:NotAuthorized', `Sender not Authorized (${check.reason})`));
    }
    const out = await this.answer(request, req.url ?? '');
    if (this.dropConnection.has(request.operation)) {
      req.socket.destroy();
      return;
    }
    return reply(
      out.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope') && out.includes('<env:Fault>')
        ? 500
        : 200,
      out,
    );
  }

  private async answer(r: SoapRequest, path: string): Promise<string> {
    const now = this.nowMs();
    switch (r.operation) {
      case 'GetSystemDateAndTime':
        return R.systemDateAndTime(now);
      case 'SetSystemDateAndTime': {
        const utc = ((r.body.UTCDateTime as unknown[] | undefined)?.[0] ?? {}) as Record<
          string,
          Array<Record<string, string[]>>
        >;
        const d = utc.Date?.[0];
        const t = utc.Time?.[0];
        const n = (x: string[] | undefined) => Number(x?.[0]);
        const ms = d && t ? Date.UTC(n(d.Year), n(d.Month) - 1, n(d.Day), n(t.Hour), n(t.Minute), n(t.Second)) : NaN;
        if (Number.isNaN(ms)) return R.fault('env:Sender', 'ter:InvalidArgVal', 'Invalid date and time');
        this.skewMs = ms - Date.now();
        return R.setSystemDateAndTime();
      }
      case 'GetDeviceInformation':
        return R.deviceInformation(this.identity);
      case 'GetServices':
        return R.services(this.baseUrl, { ptz: this.ptz !== null });
      case 'GetCapabilities':
        return R.capabilities(this.baseUrl, { ptz: this.ptz !== null });
      case 'GetServiceCapabilities':
        return this.ptz && path.startsWith('/onvif/ptz_service')
          ? R.ptzServiceCapabilities()
          : R.fault('env:Receiver', 'ter:ActionNotSupported', 'Optional Action Not Implemented');
      case 'GetProfiles':
        return R.profiles(
          [
            { token: 'Profile_1', name: 'mainStream', width: 2560, height: 1440 },
            { token: 'Profile_2', name: 'subStream', width: 640, height: 360 },
          ],
          { ptz: this.ptz !== null },
        );
      case 'GetVideoSources':
        return R.envelope(
          '<trt:GetVideoSourcesResponse><trt:VideoSources token="VideoSource_1"><tt:Framerate>15</tt:Framerate><tt:Resolution><tt:Width>2560</tt:Width><tt:Height>1440</tt:Height></tt:Resolution></trt:VideoSources></trt:GetVideoSourcesResponse>',
        );
      case 'GetStreamUri': {
        const sub = field(r.body, 'ProfileToken') === 'Profile_2';
        return R.streamUri(
          (sub ? this.opts.rtspSub : this.opts.rtspMain) ?? `rtsp://${this.host}:8554/${sub ? 'sub' : 'main'}`,
        );
      }
      case 'GetSnapshotUri':
        return R.snapshotUri(`${this.baseUrl}/snapshot.jpg`);
      case 'SystemReboot':
        this.reboot();
        return R.systemReboot();
      case 'CreatePullPointSubscription': {
        const id = randomUUID();
        const sub: Subscription = { id, terminationMs: now + this.subscriptionLifetimeMs, queue: [], waiter: null };
        // Current state first, as cameras do right after subscribing.
        for (const kind of ['motion', 'human', 'vehicle'] as const) {
          sub.queue.push({
            ...topicFor(this.opts.topicStyle ?? 'hikvision', kind, this.state[kind]),
            operation: 'Initialized',
            utcMs: now,
          });
        }
        this.subs.set(id, sub);
        return R.createPullPoint(`${this.baseUrl}/onvif/subscription/${id}`, now, sub.terminationMs);
      }
      case 'PullMessages':
      case 'Renew':
      case 'Unsubscribe': {
        const id = /\/onvif\/subscription\/([\w-]+)/.exec(path)?.[1];
        const sub = id ? this.subs.get(id) : undefined;
        if (!sub || sub.terminationMs < now)
          return R.fault('env:Receiver', 'ter:InvalidArgVal', 'Unknown or expired subscription');
        if (r.operation === 'Unsubscribe') {
          this.subs.delete(sub.id);
          sub.waiter?.();
          return R.unsubscribe();
        }
        if (r.operation === 'Renew') {
          sub.terminationMs = this.nowMs() + this.subscriptionLifetimeMs;
          return R.renew(this.nowMs(), sub.terminationMs);
        }
        if (sub.queue.length === 0) {
          const waitMs = durationMs(field(r.body, 'Timeout'), 5000);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, waitMs);
            sub.waiter = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          sub.waiter = null;
        }
        const limit = Math.max(1, Number(field(r.body, 'MessageLimit') ?? 10) || 10);
        return R.pullMessages(this.nowMs(), sub.terminationMs, sub.queue.splice(0, limit));
      }
      default:
        return (
          (path.startsWith('/onvif/ptz_service') ? this.ptz?.answer(r.operation, r.body, Date.now()) : null) ??
          R.fault('env:Receiver', 'ter:ActionNotSupported', 'Optional Action Not Implemented')
        );
    }
  }
}
