import { CameraFaultError, CameraUnauthorizedError, CameraUnreachableError } from './errors.js';
import { MAX_SOAP_BYTES } from './soap-xml.js';
import { SoapClient } from './soap/client.js';
import {
  GET_CAPABILITIES,
  GET_DEVICE_INFORMATION,
  GET_SERVICES,
  GET_SYSTEM_DATE_AND_TIME,
  NO_DEVICE_INFORMATION,
  readCapabilities,
  readDeviceInformation,
  readServices,
  readSystemDateAndTime,
  setSystemDateAndTime,
  SYSTEM_REBOOT,
  type DeviceInformation,
  type ServiceAddresses,
} from './soap/device-ops.js';
import {
  ACTIONS,
  addressing,
  CREATE_PULL_POINT,
  PULL_WAIT_S,
  pullMessages,
  readPullMessages,
  readRenew,
  readSubscription,
  RENEW,
  UNSUBSCRIBE,
  type Subscription,
} from './soap/event-ops.js';
import { GuardedAgent } from './soap/guarded-agent.js';
import {
  getProfiles,
  getSnapshotUri,
  getStreamUri,
  readMediaUri,
  readProfiles,
  type CameraProfile,
  type MediaVersion,
} from './soap/media-ops.js';
import {
  continuousMove,
  fovTranslation,
  GET_CONFIGURATIONS,
  GET_NODES,
  getConfigurationOptions,
  getPresets,
  gotoHomePosition,
  gotoPreset,
  readConfigurationOptions,
  readConfigurations,
  readNodes,
  readPresets,
  readSetPreset,
  relativeMoveFov,
  removePreset,
  setPreset,
  stop,
  type FovSpace,
  type Range,
  type Velocity,
} from './soap/ptz-ops.js';
import type { Account } from './soap/security.js';
import type { DevicePtz, PtzPreset } from '../domain/ptz.js';

// Everything else talks to cameras through OnvifSession. Each ONVIF operation the gateway uses is
// sent by our own SOAP client (src/onvif/soap/): every answer, silence or broken connection ends as
// a result or a typed error of that one call, never as an exception outside its promise (a throw
// from a response handler would take the daemon down: README, "Dependencies and why").

export type { CameraProfile };

export interface CameraEndpoint {
  /** The device service, e.g. http://192.168.1.20/onvif/device_service */
  url: string;
  username: string | null;
  password: string | null;
}

export interface CameraDescription extends DeviceInformation {
  /** Camera clock minus gateway clock, ms (0 when the camera would not tell its clock). */
  clockOffsetMs: number;
  media2: boolean;
  profiles: CameraProfile[];
  /** Null for a fixed camera. */
  ptz: DevicePtz | null;
}

/** How the session moves the camera, learnt by describe(). */
interface PtzTarget {
  url: string;
  /** A media profile with a PTZ configuration: every PTZ operation names one. */
  profileToken: string;
  homeSupported: boolean;
  fov: FovSpace | null;
  /** The Timeout a ContinuousMove may carry (ms), when the camera says. */
  timeout: Range | null;
}

/** How the camera told us its clock at connect; health checks ask the same way. */
type ClockSource = 'open' | 'authenticated' | 'none';

const isTransport = (err: unknown) => err instanceof CameraUnreachableError;
/** An optional step's failure: the camera is there and answered, just not this. */
const isRefusal = (err: unknown) => err instanceof CameraFaultError || err instanceof CameraUnauthorizedError;

/**
 * Service addresses from a camera often name another interface or a NAT address: keep the path the
 * camera gave, on the host and port we reached it at.
 */
export function rebase(xaddr: string, device: URL): string {
  try {
    const u = new URL(xaddr);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return device.href;
    u.protocol = device.protocol;
    u.hostname = device.hostname;
    u.port = device.port;
    return u.href;
  } catch {
    return device.href;
  }
}

/** What a camera grants a subscription when its answer does not say (Hikvision and others grant 60 s). */
const DEFAULT_SUBSCRIPTION_LIFETIME_MS = 60_000;

/** A connection to one camera; every call is bounded by callTimeoutMs (PullMessages by its own wait). */
export class OnvifSession {
  private closed = false;
  private clockSource: ClockSource = 'none';
  private info: DeviceInformation = NO_DEVICE_INFORMATION;
  private services: ServiceAddresses = { media1: null, media2: null, events: null, ptz: null };
  private ptz: PtzTarget | null = null;
  private media: MediaVersion = 'media1';
  private subscription: Subscription | null = null;
  private readonly client: SoapClient;

  private constructor(
    private readonly device: URL,
    account: Account | null,
    private readonly agent: GuardedAgent,
    private readonly callTimeoutMs: number,
    maxResponseBytes: number,
    /** How long the camera may hold a PullMessages (ONVIF cameras must allow a minute). */
    private readonly pullWaitS: number,
  ) {
    this.client = new SoapClient(account, agent, callTimeoutMs, maxResponseBytes, () => this.closed);
  }

  /**
   * Connects: the camera clock (GetSystemDateAndTime unauthenticated, else authenticated, else the
   * gateway's own clock), GetDeviceInformation under the UsernameToken (which proves the account),
   * then the service addresses from GetServices, else GetCapabilities, else the device service
   * address for everything. The connect fails only when the camera is unreachable or
   * GetDeviceInformation fails (a refused account, a fault, an unreadable answer).
   */
  static async connect(
    endpoint: CameraEndpoint,
    opts: { callTimeoutMs?: number; maxResponseBytes?: number; pullWaitS?: number } = {},
  ): Promise<OnvifSession> {
    const callTimeoutMs = Math.min(opts.callTimeoutMs ?? 10_000, 10_000);
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      throw new CameraUnreachableError(`not a URL: ${endpoint.url}`);
    }
    const maxBytes = opts.maxResponseBytes ?? MAX_SOAP_BYTES;
    const account =
      endpoint.username !== null ? { username: endpoint.username, password: endpoint.password ?? '' } : null;
    const session = new OnvifSession(
      url,
      account,
      new GuardedAgent({ keepAlive: false }, maxBytes),
      callTimeoutMs,
      maxBytes,
      opts.pullWaitS ?? PULL_WAIT_S,
    );
    try {
      await session.learnClock(account !== null);
      session.info = await session.deviceInformation();
      session.services = await session.findServices();
    } catch (err) {
      session.close();
      throw err;
    }
    return session;
  }

  private get deviceUrl(): string {
    return this.device.href;
  }

  private readClock(authenticated: boolean): Promise<number | null> {
    return this.client.call({
      url: this.deviceUrl,
      body: GET_SYSTEM_DATE_AND_TIME,
      read: readSystemDateAndTime,
      authenticated,
    });
  }

  private async learnClock(hasAccount: boolean): Promise<void> {
    const attempts: Array<Exclude<ClockSource, 'none'>> = hasAccount ? ['open', 'authenticated'] : ['open'];
    for (const source of attempts) {
      try {
        const cameraMs = await this.readClock(source === 'authenticated');
        this.clockSource = source;
        // A camera that answers without a UTC time (local time only) is taken to run on ours.
        this.client.clockOffsetMs = cameraMs === null ? 0 : cameraMs - Date.now();
        return;
      } catch (err) {
        if (isTransport(err)) throw err;
      }
    }
    // Refused both ways (ActionNotSupported on some firmware): date the tokens by our own clock.
    this.clockSource = 'none';
    this.client.clockOffsetMs = 0;
  }

  /** Required: the call that proves the account, and the identity; a camera that refuses it is not adopted. */
  private deviceInformation(): Promise<DeviceInformation> {
    return this.client.call({ url: this.deviceUrl, body: GET_DEVICE_INFORMATION, read: readDeviceInformation });
  }

  private async findServices(): Promise<ServiceAddresses> {
    for (const [body, read] of [
      [GET_SERVICES, readServices],
      [GET_CAPABILITIES, readCapabilities],
    ] as const) {
      try {
        const found = await this.client.call({ url: this.deviceUrl, body, read });
        const at = (x: string | null) => (x ? rebase(x, this.device) : null);
        return { media1: at(found.media1), media2: at(found.media2), events: at(found.events), ptz: at(found.ptz) };
      } catch (err) {
        if (!isRefusal(err)) throw err;
      }
    }
    // Many cameras serve every service at the device address; worth a try.
    return { media1: this.deviceUrl, media2: null, events: this.deviceUrl, ptz: this.deviceUrl };
  }

  get clockOffsetMs(): number {
    return this.client.clockOffsetMs;
  }

  /**
   * What was learnt at connect plus the profiles: Media2 where offered, else (or when Media2 refuses)
   * Media1; a camera that refuses both is described with no profiles.
   */
  async describe(): Promise<CameraDescription> {
    const tries: Array<[MediaVersion, string]> = [];
    if (this.services.media2) tries.push(['media2', this.services.media2]);
    tries.push(['media1', this.services.media1 ?? this.deviceUrl]);
    let profiles: CameraProfile[] = [];
    for (const [media, url] of tries) {
      try {
        profiles = await this.client.call({ url, body: getProfiles(media), read: (b) => readProfiles(b, media) });
        this.media = media;
        break;
      } catch (err) {
        if (!isRefusal(err)) throw err;
      }
    }
    return {
      ...this.info,
      clockOffsetMs: Math.round(this.clockOffsetMs),
      media2: this.media === 'media2' && profiles.length > 0,
      profiles,
      ptz: await this.describePtz(profiles),
    };
  }

  /**
   * Pan, tilt and zoom, when the camera lists a PTZ service and a profile with a PTZ configuration
   * (else, when its profiles do not show theirs, as some Media2 answers do not, the main profile
   * with the first configuration GetConfigurations lists): its node (home position, the
   * field-of-view space), the configuration's options (the same space, the Timeout range) and its
   * presets. Each is optional: a refusal leaves its part out. A camera whose service lists no node
   * at all is a fixed one.
   */
  private async describePtz(profiles: readonly CameraProfile[]): Promise<DevicePtz | null> {
    this.ptz = null;
    const url = this.services.ptz;
    if (!url) return null;
    const optional = async <T>(call: Promise<T>, fallback: T): Promise<T> => {
      try {
        return await call;
      } catch (err) {
        if (isRefusal(err)) return fallback;
        throw err;
      }
    };
    const main = pickMainAndSub(profiles).main;
    let profile = main?.ptz ? main : profiles.find((p) => p.ptz !== null);
    if (!profile && main) {
      const [listed] = await optional(
        this.client.call({ url, body: GET_CONFIGURATIONS, read: readConfigurations }),
        [],
      );
      if (listed) profile = { ...main, ptz: listed };
    }
    const ptz = profile?.ptz;
    if (!profile || !ptz) return null;
    const nodes = await optional(this.client.call({ url, body: GET_NODES, read: readNodes }), null);
    if (nodes?.length === 0) return null;
    const node = nodes?.find((n) => n.token === ptz.nodeToken) ?? nodes?.[0] ?? null;
    const options = await optional(
      this.client.call({ url, body: getConfigurationOptions(ptz.configurationToken), read: readConfigurationOptions }),
      null,
    );
    const presets = await optional(this.client.call({ url, body: getPresets(profile.token), read: readPresets }), []);
    const fov = options?.fov ?? node?.fov ?? null;
    this.ptz = {
      url,
      profileToken: profile.token,
      homeSupported: node?.homeSupported ?? true,
      fov,
      timeout: options?.timeout ?? null,
    };
    return { presets, canCenter: fov !== null };
  }

  /** What describe() found of the camera's PTZ (null: a fixed camera, or not described yet). */
  get ptzAbilities(): { homeSupported: boolean; canCenter: boolean } | null {
    return this.ptz && { homeSupported: this.ptz.homeSupported, canCenter: this.ptz.fov !== null };
  }

  private ptzCall<T>(body: (t: PtzTarget) => string, read: (b: Record<string, unknown>) => T): Promise<T> {
    const target = this.ptz;
    if (!target) return Promise.reject(new CameraFaultError('the camera has no PTZ'));
    return this.client.call({ url: target.url, body: body(target), read });
  }

  /**
   * ContinuousMove at these velocities. Its Timeout is sent where the camera's range takes it, so
   * the camera stops by itself too should the gateway's Stop never come (the gateway gone).
   */
  async ptzMove(v: Velocity, timeoutMs: number): Promise<void> {
    const r = this.ptz?.timeout;
    const timeout = r && timeoutMs >= r.min && timeoutMs <= r.max ? timeoutMs : null;
    await this.ptzCall(
      (t) => continuousMove(t.profileToken, v, timeout),
      () => undefined,
    );
  }

  async ptzStop(): Promise<void> {
    await this.ptzCall(
      (t) => stop(t.profileToken),
      () => undefined,
    );
  }

  async ptzGotoPreset(presetToken: string): Promise<void> {
    await this.ptzCall(
      (t) => gotoPreset(t.profileToken, presetToken),
      () => undefined,
    );
  }

  async ptzHome(): Promise<void> {
    await this.ptzCall(
      (t) => gotoHomePosition(t.profileToken),
      () => undefined,
    );
  }

  /** The new preset's token (null when the answer lacks it). */
  ptzSetPreset(name: string): Promise<string | null> {
    return this.ptzCall((t) => setPreset(t.profileToken, name), readSetPreset);
  }

  async ptzRemovePreset(presetToken: string): Promise<void> {
    await this.ptzCall(
      (t) => removePreset(t.profileToken, presetToken),
      () => undefined,
    );
  }

  ptzPresets(): Promise<PtzPreset[]> {
    return this.ptzCall((t) => getPresets(t.profileToken), readPresets);
  }

  /** Brings a point of the picture (0–1 from its top-left corner) to the centre. */
  async ptzCenter(point: { x: number; y: number }): Promise<void> {
    const fov = this.ptz?.fov;
    if (!fov) throw new CameraFaultError('the camera has no field-of-view translation space');
    const { x, y } = fovTranslation(fov, point);
    await this.ptzCall(
      (t) => relativeMoveFov(t.profileToken, x, y),
      () => undefined,
    );
  }

  private get mediaUrl(): string {
    return (this.media === 'media2' ? this.services.media2 : this.services.media1) ?? this.deviceUrl;
  }

  /** A cheap liveness check: the clock call that worked at connect (GetDeviceInformation when none did). */
  async ping(): Promise<void> {
    if (this.clockSource === 'none')
      await this.client.call({ url: this.deviceUrl, body: GET_DEVICE_INFORMATION, read: readDeviceInformation });
    else await this.readClock(this.clockSource === 'authenticated');
  }

  streamUri(profileToken: string): Promise<string | null> {
    return this.client.call({
      url: this.mediaUrl,
      body: getStreamUri(this.media, profileToken),
      read: (b) => readMediaUri(b, 'GetStreamUri'),
    });
  }

  snapshotUri(profileToken: string): Promise<string | null> {
    return this.client.call({
      url: this.mediaUrl,
      body: getSnapshotUri(this.media, profileToken),
      read: (b) => readMediaUri(b, 'GetSnapshotUri'),
    });
  }

  /** SystemReboot, to the device management service (not DeviceIO, where some libraries send it). */
  async reboot(): Promise<void> {
    await this.client.call({ url: this.deviceUrl, body: SYSTEM_REBOOT, read: () => undefined });
  }

  async setClock(now: Date): Promise<void> {
    await this.client.call({ url: this.deviceUrl, body: setSystemDateAndTime(now), read: () => undefined });
    // From now on the camera runs on our clock; tokens dated by the old offset would be refused.
    this.client.clockOffsetMs = 0;
  }

  async createPullPoint(): Promise<void> {
    this.subscription = null;
    const sub = await this.client.call({
      url: this.services.events ?? this.deviceUrl,
      body: CREATE_PULL_POINT,
      read: readSubscription,
    });
    this.subscription = { ...sub, address: rebase(sub.address, this.device) };
  }

  private onSubscription<T>(
    body: string,
    action: string,
    read: (b: Record<string, unknown>) => T,
    timeoutMs?: number,
  ): Promise<T> {
    const sub = this.subscription;
    if (!sub) return Promise.reject(new CameraFaultError('no PullPoint subscription'));
    return this.client.call({
      url: sub.address,
      body,
      read,
      addressing: addressing(sub, sub.address, action),
      timeoutMs,
    });
  }

  /**
   * How long the subscription lives from its creation or last renewal: what the camera granted, or
   * 60 s (the usual grant) when it did not say. The pull loop renews before half of it has passed.
   */
  get subscriptionLifetimeMs(): number {
    return this.subscription?.lifetimeMs ?? DEFAULT_SUBSCRIPTION_LIFETIME_MS;
  }

  /** How long the camera may hold a pull: at most a quarter of the subscription's lifetime. */
  get pullWaitMs(): number {
    return Math.max(1, Math.min(this.pullWaitS, Math.floor(this.subscriptionLifetimeMs / 4000))) * 1000;
  }

  /** One PullMessages long-poll (held by the camera up to pullWaitMs); returns the PullMessagesResponse. */
  pullMessages(messageLimit = 32): Promise<unknown> {
    const waitMs = this.pullWaitMs;
    return this.onSubscription(
      pullMessages(messageLimit, waitMs / 1000),
      ACTIONS.pull,
      readPullMessages,
      waitMs + this.callTimeoutMs,
    );
  }

  async renew(): Promise<void> {
    const lifetimeMs = await this.onSubscription(RENEW, ACTIONS.renew, readRenew);
    if (this.subscription && lifetimeMs !== null) this.subscription = { ...this.subscription, lifetimeMs };
  }

  async unsubscribe(): Promise<void> {
    await this.onSubscription(UNSUBSCRIBE, ACTIONS.unsubscribe, () => undefined);
    this.subscription = null;
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

/** Main = highest resolution, sub = lowest (they may be the same profile on a single-stream camera). */
export function pickMainAndSub(profiles: readonly CameraProfile[]): {
  main: CameraProfile | null;
  sub: CameraProfile | null;
} {
  const area = (p: CameraProfile) => (p.width ?? 0) * (p.height ?? 0);
  const sorted = [...profiles].sort((a, b) => area(b) - area(a));
  return { main: sorted[0] ?? null, sub: sorted[sorted.length - 1] ?? null };
}
