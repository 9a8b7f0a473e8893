import { Agent, type AgentOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import onvif from 'onvif';
import { countXmlns, MAX_SOAP_BYTES, MAX_XMLNS } from './soap-xml.js';

// The only file that sees the `onvif` library (agsh/onvif 0.8.x). Everything else talks to cameras
// through OnvifSession, so a move to the library's v1 changes this file alone. We drive its calls
// one by one (never its built-in event loop, which crashes with "You should create pull-point
// subscription first!", agsh/onvif#243) and guard its HTTP with our own agent: responses are capped
// in size, documents with a DTD are refused, and close() aborts anything in flight.

export class CameraUnreachableError extends Error {
  override readonly name = 'CameraUnreachableError';
}
export class CameraUnauthorizedError extends Error {
  override readonly name = 'CameraUnauthorizedError';
}
/** The camera answered, but with a SOAP Fault or a document we refuse. */
export class CameraFaultError extends Error {
  override readonly name = 'CameraFaultError';
}

export interface CameraEndpoint {
  /** The device service, e.g. http://192.168.1.20/onvif/device_service */
  url: string;
  username: string | null;
  password: string | null;
}

export interface CameraProfile {
  token: string;
  name: string | null;
  width: number | null;
  height: number | null;
  encoding: string | null;
}

export interface CameraDescription {
  manufacturer: string | null;
  model: string | null;
  firmwareVersion: string | null;
  serialNumber: string | null;
  hardwareId: string | null;
  /** Camera clock minus gateway clock, ms. */
  clockOffsetMs: number;
  media2: boolean;
  profiles: CameraProfile[];
}

/** One camera's HTTP guard: counts and inspects what the camera sends on every socket. */
class GuardedAgent extends Agent {
  constructor(
    opts: AgentOptions,
    private readonly maxBytes: number,
  ) {
    super(opts);
  }

  override createConnection(...args: Parameters<Agent['createConnection']>): Duplex {
    const socket = super.createConnection(...args) as Duplex;
    let total = 0;
    let namespaces = 0;
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      total += chunk.length;
      // Keep a little of the previous chunk so a marker split across two chunks is still seen once.
      const text = tail + chunk.toString('latin1');
      namespaces += countXmlns(text) - countXmlns(tail);
      tail = text.slice(-16);
      if (total > this.maxBytes) socket.destroy(new CameraFaultError(`camera response larger than ${this.maxBytes} bytes`));
      else if (/<!DOCTYPE|<!ENTITY/i.test(text)) socket.destroy(new CameraFaultError('camera response with a DTD refused'));
      else if (namespaces > MAX_XMLNS) socket.destroy(new CameraFaultError('camera response with a namespace flood refused'));
    });
    return socket;
  }
}

type Callback<T> = (err: Error | null, result?: T) => void;
interface LibCam {
  timeShift?: number;
  events?: { subscription?: { subscriptionReference?: { address?: unknown } } };
  media2Support?: boolean;
  profiles?: unknown[];
  connect(cb: Callback<unknown>): void;
  getSystemDateAndTime(cb: Callback<Date>): void;
  getDeviceInformation(cb: Callback<Record<string, unknown>>): void;
  getProfiles(cb: Callback<unknown[]>): void;
  getStreamUri(opts: { protocol: string; profileToken: string }, cb: Callback<{ uri?: unknown }>): void;
  getSnapshotUri(opts: { profileToken: string }, cb: Callback<{ uri?: unknown }>): void;
  _envelopeHeader(): string;
  _envelopeFooter(): string;
  _request(opts: { service: string; body: string }, cb: Callback<unknown>): void;
  setSystemDateAndTime(opts: { dateTime: Date; dateTimeType: 'Manual'; daylightSavings: boolean; timezone: string }, cb: Callback<unknown>): void;
  createPullPointSubscription(cb: Callback<unknown>): void;
  pullMessages(opts: { messageLimit: number }, cb: Callback<unknown>): void;
  renew(opts: object, cb: Callback<unknown>): void;
  unsubscribe(cb: Callback<unknown>): void;
}
type LibCamConstructor = new (opts: Record<string, unknown>) => LibCam;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);
const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});

/** Maps the library's errors (plain Error messages) to ours. */
export function classifyError(err: unknown): Error {
  if (err instanceof CameraFaultError || err instanceof CameraUnauthorizedError || err instanceof CameraUnreachableError) return err;
  const e = err as NodeJS.ErrnoException;
  const cause = (e as { cause?: unknown })?.cause;
  if (cause instanceof CameraFaultError) return cause;
  const message = e instanceof Error ? e.message : String(err);
  // Not a bare "401": error messages carry addresses, and ports such as :40123 contain it.
  if (/not ?authori[sz]ed|authentication failed|authentication headers not found/i.test(message)) return new CameraUnauthorizedError(message);
  if (/ONVIF SOAP Fault|Wrong ONVIF SOAP response|Non-whitespace|Unexpected|Invalid|Unclosed|larger than|DTD/i.test(message)) return new CameraFaultError(message);
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE'].includes(e?.code ?? '') || /timeout|socket hang up|aborted/i.test(message)) {
    return new CameraUnreachableError(message);
  }
  return new CameraFaultError(message);
}

/** A connection to one camera through the library; every call is bounded by callTimeoutMs. */
export class OnvifSession {
  private closed = false;

  private constructor(
    private readonly cam: LibCam,
    private readonly agent: GuardedAgent,
    private readonly callTimeoutMs: number,
  ) {}

  /**
   * Connects: GetSystemDateAndTime (unauthenticated, else authenticated; its clock offset goes into
   * every later WS-UsernameToken digest), GetServices or GetCapabilities, profiles via Media2 where
   * offered, else Media1.
   */
  static async connect(endpoint: CameraEndpoint, opts: { callTimeoutMs?: number; maxResponseBytes?: number } = {}): Promise<OnvifSession> {
    const callTimeoutMs = Math.min(opts.callTimeoutMs ?? 10_000, 10_000);
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      throw new CameraUnreachableError(`not a URL: ${endpoint.url}`);
    }
    const agent = new GuardedAgent({ keepAlive: false }, opts.maxResponseBytes ?? MAX_SOAP_BYTES);
    const Cam = (onvif as unknown as { Cam: LibCamConstructor }).Cam;
    const cam = new Cam({
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 80),
      path: url.pathname || '/onvif/device_service',
      username: endpoint.username ?? undefined,
      password: endpoint.password ?? undefined,
      timeout: callTimeoutMs,
      agent,
      autoconnect: false,
      // Service addresses from the camera often name another interface or a NAT address; use the one we reached.
      preserveAddress: true,
    });
    const session = new OnvifSession(cam, agent, callTimeoutMs);
    try {
      // The library digests passwords with its idea of the camera clock, which it only learns from
      // GetSystemDateAndTime; a camera that answers that call only when authenticated would get a
      // token dated 1970. So start from our own clock, ask the camera's, and keep that.
      const uptimeMs = () => process.uptime() * 1000;
      cam.timeShift = Date.now() - uptimeMs();
      const cameraTime = await session.call<Date>((cb) => cam.getSystemDateAndTime(cb));
      if (cameraTime instanceof Date && !Number.isNaN(cameraTime.getTime())) cam.timeShift = cameraTime.getTime() - uptimeMs();
      // connect() makes several calls in sequence; allow each its timeout.
      await session.call<unknown>((cb) => cam.connect(cb), callTimeoutMs * 6);
    } catch (err) {
      session.close();
      throw err;
    }
    return session;
  }

  private call<T>(start: (cb: Callback<T>) => void, timeoutMs = this.callTimeoutMs): Promise<T> {
    if (this.closed) return Promise.reject(new CameraUnreachableError('session closed'));
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        reject(new CameraUnreachableError(`camera did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      try {
        start((err, result) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          if (err) reject(classifyError(err));
          else resolve(result as T);
        });
      } catch (err) {
        done = true;
        clearTimeout(timer);
        reject(classifyError(err));
      }
    });
  }

  get clockOffsetMs(): number {
    // The library keeps the camera clock as timeShift relative to process.uptime().
    return (this.cam.timeShift ?? 0) + process.uptime() * 1000 - Date.now();
  }

  async describe(): Promise<CameraDescription> {
    const info = obj(await this.call<Record<string, unknown>>((cb) => this.cam.getDeviceInformation(cb)));
    // connect() drops the profiles when GetVideoSources fails, which some firmware does not
    // implement although GetProfiles works: ask for the profiles on their own then.
    if (!this.cam.profiles?.length) {
      const profiles = await this.call<unknown[]>((cb) => this.cam.getProfiles(cb)).catch(() => []);
      if (Array.isArray(profiles)) this.cam.profiles = profiles;
    }
    return {
      manufacturer: str(info.manufacturer),
      model: str(info.model),
      firmwareVersion: str(info.firmwareVersion),
      serialNumber: str(info.serialNumber),
      hardwareId: str(info.hardwareId),
      clockOffsetMs: Math.round(this.clockOffsetMs),
      media2: this.cam.media2Support === true,
      profiles: (this.cam.profiles ?? []).map(toProfile).filter((p): p is CameraProfile => p !== null),
    };
  }

  /** A cheap liveness check: GetSystemDateAndTime (which also refreshes nothing else). */
  async ping(): Promise<void> {
    await this.call<Date>((cb) => this.cam.getSystemDateAndTime(cb));
  }

  async streamUri(profileToken: string): Promise<string | null> {
    const r = await this.call<{ uri?: unknown }>((cb) => this.cam.getStreamUri({ protocol: 'RTSP', profileToken }, cb));
    return str(obj(r).uri);
  }

  async snapshotUri(profileToken: string): Promise<string | null> {
    const r = await this.call<{ uri?: unknown }>((cb) => this.cam.getSnapshotUri({ profileToken }, cb));
    return str(obj(r).uri);
  }

  async reboot(): Promise<void> {
    // The library's systemReboot posts to the DeviceIO service (path "deviceIO" when the camera has
    // none, which no HTTP server accepts); SystemReboot belongs to the device management service.
    const body = `${this.cam._envelopeHeader()}<SystemReboot xmlns="http://www.onvif.org/ver10/device/wsdl"/>${this.cam._envelopeFooter()}`;
    await this.call((cb) => this.cam._request({ service: 'device', body }, cb));
  }

  async setClock(now: Date): Promise<void> {
    await this.call((cb) => this.cam.setSystemDateAndTime({ dateTime: now, dateTimeType: 'Manual', daylightSavings: false, timezone: 'UTC0' }, cb));
    // The library keeps the offset it learnt at connect; from now on the camera runs on our clock,
    // and digests dated by the old offset would be refused as replays.
    this.cam.timeShift = Date.now() - process.uptime() * 1000;
  }

  async createPullPoint(): Promise<void> {
    await this.call((cb) => this.cam.createPullPointSubscription(cb));
    // The library sends PullMessages/Renew/Unsubscribe to the subscription address with that parsed
    // URL object as the request options, bypassing the agent given to the camera: put ours on it, so
    // those answers are guarded too and close() aborts a long-poll in flight.
    const address = this.cam.events?.subscription?.subscriptionReference?.address;
    if (address && typeof address === 'object') (address as { agent?: Agent }).agent = this.agent;
  }

  /** One PullMessages long-poll (the library asks for up to a minute); returns the simplified response. */
  pullMessages(messageLimit = 32): Promise<unknown> {
    return this.call<unknown>((cb) => this.cam.pullMessages({ messageLimit }, cb), 80_000);
  }

  async renew(): Promise<void> {
    await this.call((cb) => this.cam.renew({}, cb));
  }

  async unsubscribe(): Promise<void> {
    await this.call((cb) => this.cam.unsubscribe(cb));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Aborts every request in flight (a pending long-poll included) and refuses new ones. */
  close(): void {
    this.closed = true;
    this.agent.destroy();
  }
}

function toProfile(raw: unknown): CameraProfile | null {
  const p = obj(raw);
  const token = str(obj(p.$).token) ?? str(p.token);
  if (!token) return null;
  const enc = obj(p.videoEncoderConfiguration ?? obj(p.configurations).videoEncoder);
  const res = obj(enc.resolution);
  return { token, name: str(p.name), width: num(res.width), height: num(res.height), encoding: str(enc.encoding) };
}

/** Main = highest resolution, sub = lowest (they may be the same profile on a single-stream camera). */
export function pickMainAndSub(profiles: readonly CameraProfile[]): { main: CameraProfile | null; sub: CameraProfile | null } {
  const area = (p: CameraProfile) => (p.width ?? 0) * (p.height ?? 0);
  const sorted = [...profiles].sort((a, b) => area(b) - area(a));
  return { main: sorted[0] ?? null, sub: sorted[sorted.length - 1] ?? null };
}
