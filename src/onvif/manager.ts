import type { BaseLogger } from 'pino';
import { backoffMs } from '../domain/backoff.js';
import type { EventBus } from '../domain/bus.js';
import { aliasOf, deviceIdFrom, endpointOf, type DeviceAlias } from '../domain/device-alias.js';
import { DeviceCommandError, DeviceUnavailableError, NotSupportedError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { DevicePtz, PtzCommand } from '../domain/ptz.js';
import { isRtspUrl, rtspUrlForDisplay } from '../domain/rtsp-url.js';
import type { FailureAt } from '../domain/system-facts.js';
import type {
  Alert,
  CameraRecord,
  ControlAction,
  ControlRequest,
  Device,
  DeviceFields,
  DeviceStatus,
  StreamProfile,
} from '../domain/types.js';
import { openCameraPassword, sealCameraPassword, type SecretBox } from '../platform/secret-box.js';
import { EventTracker } from './event-tracker.js';
import { CameraFaultError, CameraUnauthorizedError } from './errors.js';
import { OnvifSession, pickMainAndSub, type CameraDescription } from './library.js';
import { toNotifications } from './notification.js';
import { PtzControl } from './ptz.js';
import { classify } from './topics.js';
import { snapshotUrlAt, type CameraSnapshotSource } from './snapshot.js';

// Adopts cameras (configured or discovered), keeps their status, watches their events and carries
// out control actions. One supervisor loop per camera; every wait is a timer that stop() cancels.

export interface CameraTarget {
  url: string;
  /** config: the file's cameras[]; discovery: WS-Discovery; app: added through the API (POST /v1/devices). */
  source: 'config' | 'discovery' | 'app';
  /** The device it is already known as (a camera added through the API). */
  deviceId?: string;
  /** From the config entry; discovered cameras have none. */
  name?: string;
  username?: string | null;
  password?: string | null;
  /** WS-Discovery endpoint reference (urn:uuid:…), when discovered. */
  endpoint?: string | null;
}

/**
 * What the manager reads and writes of the store: devices, how to reach their cameras, the aliases
 * they are known by and control requests. Declared here so onvif depends on no more of the store
 * than it uses; main.ts passes the Store.
 */
export interface CameraStore {
  getDevice(id: string): Device | null;
  /** createdAt is the store's: the time the device is first written. */
  upsertDevice(d: DeviceFields): unknown;
  /** The alert is written only when the status changes, in the same transaction. */
  setDeviceStatus(
    id: string,
    status: DeviceStatus,
    now: number,
    alertOnChange?: Pick<Alert, 'id' | 'deviceId' | 'type' | 'message' | 'createdAt'> | null,
  ): { changed: boolean } | null;
  findDeviceByAlias(aliases: readonly DeviceAlias[]): string | null;
  aliasesOf(deviceId: string): DeviceAlias[];
  addAliases(deviceId: string, aliases: readonly DeviceAlias[]): void;
  upsertCamera(c: CameraRecord): void;
  /** What the camera offers of PTZ after its presets changed (the Device's `ptz`). */
  setCameraPtz(deviceId: string, ptz: DevicePtz | null): boolean;
  getCamera(deviceId: string): CameraRecord | null;
  listCameras(): CameraRecord[];
  /** What the owner set through the API: the camera's account (sealed as a camera record's) and whether to use it. */
  cameraSettings(
    deviceId: string,
  ): { username: string | null; passwordSealed: string | null; enabled: boolean | null } | null;
  /** The cameras added through the API (POST /v1/devices), not removed since. */
  addedCameras(): Array<{ deviceId: string; onvifUrl: string }>;
  /** Removed through the API: the gateway leaves it alone, also when discovery finds it again. */
  isDeviceRemoved(deviceId: string): boolean;
  /** A removed device the config file lists after all: listed again. */
  restoreDevice(deviceId: string): void;
  insertControlRequest(c: Pick<ControlRequest, 'id' | 'deviceId' | 'action' | 'requestedAt'>): ControlRequest;
  completeControlRequest(id: string, outcome: { status: 'succeeded' | 'failed'; error: string | null }): ControlRequest;
  transaction<T>(fn: () => T): T;
}

/**
 * Whether a plain RTSP camera's stream can be opened with this account: `online` when it answers
 * DESCRIBE with an SDP, `unauthorized` when it refuses the account, `offline` otherwise, with why
 * (for the log). Declared here; main.ts passes the relay's (src/media/relay/probe.ts).
 */
export type StreamProbe = (source: {
  url: string;
  username: string | null;
  password: string | null;
}) => Promise<{ status: DeviceStatus; reason: string | null }>;

export interface CameraManagerOptions {
  store: CameraStore;
  probeStream: StreamProbe;
  secretBox: SecretBox;
  bus: EventBus;
  logger: BaseLogger;
  /** Accounts tried in order when a camera has none of its own (onvif.credentials). */
  credentials: ReadonlyArray<{ username: string; password: string }>;
  healthIntervalS?: number;
  callTimeoutMs?: number;
  /** Longest wait between retries of an unreachable camera. */
  maxBackoffMs?: number;
  /** Wait before trying a camera whose credentials were all refused again: not a crash loop. */
  unauthorizedRetryMs?: number;
  eventDebounceMs?: number;
  random?: () => number;
}

interface Worker {
  target: CameraTarget;
  deviceId: string | null;
  session: OnvifSession | null;
  stopped: boolean;
  /** Ends every wait of this worker early (stop, or a new address for the camera). */
  wakers: Set<() => void>;
  /** A PullPoint subscription is open on the current session. */
  subscribed: boolean;
  /** Counts the owner's changes of the camera's account or use (reconnect): a session of an older one ends. */
  generation: number;
  done: Promise<void>;
}

/** How long a camera switched off waits between looks at its settings (reconnect() ends the wait at once). */
const DISABLED_WAIT_MS = 3_600_000;

export class CameraManager {
  private readonly workers = new Map<DeviceAlias, Worker>(); // by target key
  /** Each device's last failure to reach or adopt its camera, and when (kept until the stop). */
  private readonly lastErrors = new Map<string, FailureAt>();
  private stopped = false;
  private readonly random: () => number;
  private readonly ptz: PtzControl;

  constructor(private readonly opts: CameraManagerOptions) {
    this.random = opts.random ?? Math.random;
    this.ptz = new PtzControl({ sessionOf: (id) => this.onlineSession(id), store: opts.store, logger: opts.logger });
  }

  /** Starts watching the configured cameras and those adopted before (so a restart needs no rediscovery). */
  start(
    configured: ReadonlyArray<{ name: string; onvif_url: string; username: string | null; password: string | null }>,
  ): void {
    for (const c of configured)
      this.addTarget({ url: c.onvif_url, source: 'config', name: c.name, username: c.username, password: c.password });
    for (const added of this.opts.store.addedCameras())
      this.addTarget({ url: added.onvifUrl, source: 'app', deviceId: added.deviceId });
    for (const cam of this.opts.store.listCameras()) {
      if (cam.source !== 'discovery' || this.opts.store.isDeviceRemoved(cam.deviceId)) continue;
      this.addTarget({ url: cam.onvifUrl, source: 'discovery', endpoint: this.endpointAliasOf(cam.deviceId) });
    }
  }

  /** A camera to watch; the same camera seen again (e.g. at a new DHCP address) updates its worker. */
  addTarget(target: CameraTarget): void {
    if (this.stopped || this.removedTarget(target)) return;
    const key = targetKey(target);
    const existing = this.workers.get(key);
    if (existing) {
      if (existing.target.url !== target.url) {
        this.opts.logger.info({ deviceId: existing.deviceId, url: target.url }, 'camera moved to a new address');
        existing.target = { ...existing.target, url: target.url };
        wakeAll(existing);
      }
      return;
    }
    if (isRtspUrl(target.url) && target.deviceId === undefined) return; // only ever added with its device
    const worker: Worker = {
      target,
      deviceId: target.deviceId ?? null,
      session: null,
      stopped: false,
      wakers: new Set(),
      subscribed: false,
      generation: 0,
      done: Promise.resolve(),
    };
    this.workers.set(key, worker);
    worker.done =
      target.deviceId !== undefined && isRtspUrl(target.url)
        ? this.superviseStream(worker, target.deviceId)
        : this.supervise(worker);
  }

  /**
   * A plain RTSP camera's owner gave it a new main stream URL: it is looked at there at once (the
   * device and its worker stay the same).
   */
  moved(deviceId: string, url: string): void {
    for (const [key, w] of [...this.workers]) {
      if (w.deviceId !== deviceId) continue;
      // Known by the new URL from now on: another camera may be added at the old one.
      this.workers.delete(key);
      w.target = { ...w.target, url };
      this.workers.set(targetKey(w.target), w);
      w.generation++;
      wakeAll(w);
    }
  }

  /**
   * The owner changed how to reach the camera (its account) or whether to use it: the camera is
   * tried again at once with what is set now, an open session closed first. A camera switched off is
   * listed offline from here on, without the offline alert of a camera that failed.
   */
  reconnect(deviceId: string): void {
    if (this.cameraSettings(deviceId)?.enabled === false) this.setStatus(deviceId, 'offline', { alert: false });
    for (const w of this.workers.values()) {
      if (w.deviceId !== deviceId) continue;
      w.generation++;
      wakeAll(w);
    }
  }

  /**
   * The gateway stops using the device (removed through the API): its sessions end (their event
   * subscriptions given back, bounded as at stop) and no worker takes it up again.
   */
  async forget(deviceId: string): Promise<void> {
    await this.ptz.forget(deviceId);
    this.lastErrors.delete(deviceId);
    const leaving = [...this.workers.entries()].filter(([, w]) => w.deviceId === deviceId);
    for (const [key] of leaving) this.workers.delete(key);
    await Promise.all(leaving.map(([, w]) => this.endWorker(w)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // Before the sessions close: a camera still turning gets its Stop.
    await this.ptz.stop();
    await Promise.all([...this.workers.values()].map((w) => this.endWorker(w)));
  }

  private async endWorker(w: Worker): Promise<void> {
    // Tell the camera we are leaving, so it frees its subscription slot now rather than at
    // termination time (cameras allow only a few); bounded, since a camera may not answer.
    if (w.session && w.subscribed)
      await Promise.race([w.session.unsubscribe(), new Promise((r) => setTimeout(r, 2000).unref())]).catch(
        () => undefined,
      );
    w.stopped = true;
    wakeAll(w);
    w.session?.close();
    await w.done;
  }

  /** The worker's camera is not to be used: it leaves the watched ones (a later target makes a new worker). */
  private retire(w: Worker): void {
    w.stopped = true;
    for (const [key, other] of this.workers) if (other === w) this.workers.delete(key);
  }

  /** A discovered camera the owner removed through the API (known by its endpoint reference) is not taken up. */
  private removedTarget(t: CameraTarget): boolean {
    const alias = t.source === 'discovery' && t.endpoint ? aliasOf.endpoint(t.endpoint) : null;
    const deviceId = alias ? this.opts.store.findDeviceByAlias([alias]) : null;
    if (deviceId === null || !this.opts.store.isDeviceRemoved(deviceId)) return false;
    this.opts.logger.debug({ deviceId, url: t.url }, 'camera removed through the API found again: left alone');
    return true;
  }

  /**
   * Whether the worker may use the device: not one removed through the API, unless the config file
   * lists the camera (the file wins: it is used again). A worker that may not is retired.
   */
  private mayUse(w: Worker, deviceId: string): boolean {
    if (!this.opts.store.isDeviceRemoved(deviceId)) return true;
    if (w.target.source === 'config') {
      this.opts.store.restoreDevice(deviceId);
      this.opts.logger.info(
        { deviceId, url: w.target.url },
        'camera removed through the API is in the config file: used again',
      );
      return true;
    }
    this.opts.logger.info({ deviceId, url: w.target.url }, 'camera removed through the API found again: left alone');
    this.retire(w);
    return false;
  }

  private cameraSettings(deviceId: string) {
    return this.opts.store.cameraSettings(deviceId);
  }

  /** The camera's session while its device is online. */
  private onlineSession(deviceId: string): OnvifSession | null {
    const session = [...this.workers.values()].find((w) => w.deviceId === deviceId)?.session;
    return session && this.opts.store.getDevice(deviceId)?.status === 'online' ? session : null;
  }

  /**
   * Carries out an action on an online camera: the API's POST …/control and the cloud's commands (main.ts hands this to
   * both). `by`: who asked, for the log (the token's subject; absent: the cloud).
   */
  async run(
    deviceId: string,
    action: ControlAction,
    requestId: string = newId('ctl'),
    by?: string,
  ): Promise<ControlRequest> {
    this.refuseStreamOnly(deviceId, action);
    const session = this.onlineSession(deviceId);
    if (!session)
      throw new DeviceUnavailableError(
        `device ${deviceId} is ${this.opts.store.getDevice(deviceId)?.status ?? 'unknown'}`,
      );
    this.opts.logger.info({ deviceId, action, requestId, by: by ?? 'cloud' }, 'camera control');
    const request = this.opts.store.insertControlRequest({ id: requestId, deviceId, action, requestedAt: Date.now() });
    try {
      if (action === 'reboot') await session.reboot();
      else await session.setClock(new Date());
      return this.opts.store.completeControlRequest(request.id, { status: 'succeeded', error: null });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const done = this.opts.store.completeControlRequest(request.id, { status: 'failed', error: message });
      // A refusal is the camera's answer; no answer at all may still mean it acted (a reboot often
      // drops the connection first), so that is a failed request, reported as such with 200.
      if (err instanceof CameraFaultError || err instanceof CameraUnauthorizedError)
        throw new DeviceCommandError(`camera refused ${action}: ${message}`);
      return done;
    }
  }

  /**
   * Pans, tilts or zooms an online camera, or recalls, saves or removes a preset (the API's ptz_*
   * actions; src/onvif/ptz.ts). `by`: who asked, for the log.
   */
  async ptzCommand(deviceId: string, command: PtzCommand, by: string): Promise<ControlRequest> {
    this.refuseStreamOnly(deviceId, command.action);
    return this.ptz.run(deviceId, command, by);
  }

  /** A plain RTSP camera is only a stream: the gateway has no way to control it (NotSupportedError). */
  private refuseStreamOnly(deviceId: string, action: string): void {
    if (this.opts.store.getDevice(deviceId)?.source !== 'rtsp') return;
    const what = action === 'reboot' ? 'reboot it' : action === 'sync_time' ? 'set its clock' : 'pan, tilt or zoom it';
    throw new NotSupportedError(
      `device ${deviceId} was added by its RTSP address: the gateway only reads its video and cannot ${what} (add it by its ONVIF address for control)`,
    );
  }

  /** Why the camera was last found offline or refusing the gateway, whatever its status now; null: never. */
  lastError(deviceId: string): FailureAt | null {
    return this.lastErrors.get(deviceId) ?? null;
  }

  /** Whether the camera's own event subscription (PullPoint) is open now. */
  hasEventSubscription(deviceId: string): boolean {
    for (const w of this.workers.values()) if (w.deviceId === deviceId && w.subscribed) return true;
    return false;
  }

  /** Where a device's main or sub stream is and how to log in (for the relay; never for the API). */

  streamSource(
    deviceId: string,
    profile: StreamProfile,
  ): { url: string; username: string | null; password: string | null } | null {
    const cam = this.opts.store.getCamera(deviceId);
    const url = profile === 'sub' ? (cam?.subStreamUri ?? cam?.mainStreamUri) : cam?.mainStreamUri;
    if (!cam || !url || this.cameraSettings(deviceId)?.enabled === false) return null;
    const password = openCameraPassword(this.opts.secretBox, cam);
    return { url, username: cam.username, password };
  }

  /**
   * Where the camera's own still picture is (its GetSnapshotUri answer at the address the gateway
   * reaches it at, see snapshotUrlAt) and the credentials to fetch it with; null when it has none.
   */
  snapshotSource(deviceId: string): CameraSnapshotSource | null {
    const cam = this.opts.store.getCamera(deviceId);
    const url = cam?.snapshotUri ? snapshotUrlAt(cam.snapshotUri, cam.onvifUrl) : null;
    if (!cam || !url || this.cameraSettings(deviceId)?.enabled === false) return null;
    const password = openCameraPassword(this.opts.secretBox, cam);
    return { url, username: cam.username, password };
  }

  private endpointAliasOf(deviceId: string): string | null {
    for (const alias of this.opts.store.aliasesOf(deviceId)) {
      const endpoint = endpointOf(alias);
      if (endpoint !== null) return endpoint;
    }
    return null;
  }

  private sleep(w: Worker, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        w.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      w.wakers.add(done);
    });
  }

  private async supervise(w: Worker): Promise<void> {
    const maxBackoff = this.opts.maxBackoffMs ?? 60_000;
    let attempt = 0;
    while (!w.stopped) {
      const generation = w.generation;
      if (w.deviceId !== null && this.cameraSettings(w.deviceId)?.enabled === false) {
        // Switched off by the owner: listed offline, nothing tried until reconnect() wakes it.
        this.setStatus(w.deviceId, 'offline', { alert: false });
        await this.sleep(w, DISABLED_WAIT_MS);
        continue;
      }
      let waitMs: number;
      try {
        if (!(await this.adopt(w))) break;
        attempt = 0;
        await this.watch(w, generation);
        waitMs = backoffMs(attempt++, maxBackoff, this.random);
      } catch (err) {
        if (w.stopped) break;
        const status: DeviceStatus = err instanceof CameraUnauthorizedError ? 'unauthorized' : 'offline';
        if (w.deviceId) {
          this.setStatus(w.deviceId, status);
          this.lastErrors.set(w.deviceId, { message: `ONVIF: ${(err as Error).message}`, at: Date.now() });
        }
        this.opts.logger.warn(
          { deviceId: w.deviceId, url: w.target.url, err: (err as Error).message },
          `camera ${status}`,
        );
        waitMs =
          status === 'unauthorized'
            ? (this.opts.unauthorizedRetryMs ?? 300_000)
            : backoffMs(attempt++, maxBackoff, this.random);
      } finally {
        w.session?.close();
        w.session = null;
      }
      // The owner changed the account or use meanwhile: tried now, not after the wait.
      if (w.generation !== generation) waitMs = 0;
      if (!w.stopped) await this.sleep(w, Math.max(waitMs, 200));
    }
  }

  /**
   * A plain RTSP camera (added by its URL through the API): online while its stream can be opened
   * with the account its owner gave, unauthorized while that account is refused, offline
   * otherwise; looked at again every health interval, as an ONVIF camera's session is pinged. There
   * is no session to keep: no events, no control, no snapshot URI.
   */
  private async superviseStream(w: Worker, deviceId: string): Promise<void> {
    const maxBackoff = this.opts.maxBackoffMs ?? 60_000;
    const interval = (this.opts.healthIntervalS ?? 30) * 1000;
    let attempt = 0;
    while (!w.stopped) {
      const generation = w.generation;
      const own = this.cameraSettings(deviceId);
      if (own?.enabled === false) {
        this.setStatus(deviceId, 'offline', { alert: false });
        await this.sleep(w, DISABLED_WAIT_MS);
        continue;
      }
      const username = own?.username ?? null;
      const passwordSealed = own?.passwordSealed ?? null;
      const url = w.target.url;
      const probe = await this.probeStream(deviceId, { url, username, passwordSealed });
      // Stopped, or the owner changed the URL, account or use meanwhile: looked at again with what is set now.
      if (w.stopped || w.generation !== generation) continue;
      let waitMs = interval;
      if (probe.status === 'online') {
        attempt = 0;
        this.keepAccount(deviceId, username, passwordSealed);
        this.setStatus(deviceId, 'online');
      } else {
        this.setStatus(deviceId, probe.status);
        this.opts.logger.warn({ deviceId, url: rtspUrlForDisplay(url), err: probe.reason }, `camera ${probe.status}`);
        waitMs =
          probe.status === 'unauthorized'
            ? (this.opts.unauthorizedRetryMs ?? 300_000)
            : backoffMs(attempt++, maxBackoff, this.random);
      }
      await this.sleep(w, Math.max(waitMs, 200));
    }
  }

  /** The probe's answer; whatever goes wrong on the way (a password that does not open) is offline, with why. */
  private async probeStream(
    deviceId: string,
    c: { url: string; username: string | null; passwordSealed: string | null },
  ): ReturnType<StreamProbe> {
    try {
      const password = c.username === null ? null : openCameraPassword(this.opts.secretBox, { deviceId, ...c });
      return await this.opts.probeStream({ url: c.url, username: c.username, password });
    } catch (err) {
      return { status: 'offline', reason: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * The account a plain RTSP camera just let in becomes its camera row's, which the relay logs in
   * with (as adoption keeps the account that worked); written only when it changed.
   */
  private keepAccount(deviceId: string, username: string | null, passwordSealed: string | null): void {
    const cam = this.opts.store.getCamera(deviceId);
    if (!cam || (cam.username === username && cam.passwordSealed === passwordSealed)) return;
    this.opts.store.upsertCamera({ ...cam, username, passwordSealed });
  }

  /**
   * Connects with the camera's own account (the file's, else the app's), else the one adoption found
   * before, else each of onvif.credentials in turn.
   */
  private async connect(
    w: Worker,
  ): Promise<{ session: OnvifSession; username: string | null; password: string | null }> {
    const t = w.target;
    const accounts: Array<{ username: string | null; password: string | null }> = [];
    const own = w.deviceId === null ? null : this.cameraSettings(w.deviceId);
    // The file's account, else the one the owner set in the app: only that one, so a wrong
    // password shows as unauthorized rather than being hidden by another account that works.
    if (t.username) accounts.push({ username: t.username, password: t.password ?? '' });
    else if (w.deviceId !== null && own?.username) {
      const password = openCameraPassword(this.opts.secretBox, {
        deviceId: w.deviceId,
        passwordSealed: own.passwordSealed,
      });
      accounts.push({ username: own.username, password: password ?? '' });
    } else {
      const known = w.deviceId ? this.opts.store.getCamera(w.deviceId) : null;
      if (known?.username) {
        const password = openCameraPassword(this.opts.secretBox, known) ?? '';
        accounts.push({ username: known.username, password });
      }
      accounts.push(...this.opts.credentials);
      if (accounts.length === 0) accounts.push({ username: null, password: null });
    }
    let refused: CameraUnauthorizedError | null = null;
    for (const account of accounts) {
      try {
        const session = await OnvifSession.connect(
          { url: t.url, ...account },
          { callTimeoutMs: this.opts.callTimeoutMs ?? 10_000 },
        );
        return { session, ...account };
      } catch (err) {
        if (!(err instanceof CameraUnauthorizedError)) throw err;
        refused = err;
      }
    }
    throw refused ?? new CameraUnauthorizedError('no account to try');
  }

  /** False when the camera turns out to be a device removed through the API (the worker is retired). */
  private async adopt(w: Worker): Promise<boolean> {
    const t = w.target;
    const endpointAlias = t.endpoint ? aliasOf.endpoint(t.endpoint) : null;
    // Only an address the owner gave names the camera; one it was discovered at may be another's tomorrow.
    const addressAlias = t.source === 'discovery' ? null : aliasOf.url(t.url);
    let connected: Awaited<ReturnType<CameraManager['connect']>>;
    let d: CameraDescription;
    try {
      connected = await this.connect(w);
      w.session = connected.session;
      d = await connected.session.describe();
    } catch (err) {
      // Even a camera we cannot log into, or that answers nonsense, gets a device, so the owner
      // sees it (unauthorized or offline) instead of nothing. Real firmware answers the clock and
      // capabilities to anyone and refuses only later calls: every step of the connect is in here.
      if (!w.deviceId) {
        const aliases = present([endpointAlias, addressAlias]);
        const id = this.opts.store.findDeviceByAlias(aliases) ?? deviceIdFrom(endpointAlias ?? aliasOf.url(t.url));
        if (!this.mayUse(w, id)) return false;
        w.deviceId = id;
        if (!this.opts.store.getDevice(id)) {
          const status = err instanceof CameraUnauthorizedError ? 'unauthorized' : 'offline';
          this.opts.store.upsertDevice({ ...this.deviceBase(id, t.name ?? `Camera at ${hostOf(t.url)}`), status });
        }
        this.opts.store.addAliases(id, aliases);
      }
      throw err;
    }
    const { session } = connected;
    const serialAlias = aliasOf.serial(d.manufacturer, d.serialNumber);
    const aliases = present([endpointAlias, serialAlias, addressAlias]);
    // A new device is named by the alias most likely to outlast a DHCP move.
    const deviceId =
      w.deviceId ??
      this.opts.store.findDeviceByAlias(aliases) ??
      deviceIdFrom(endpointAlias ?? serialAlias ?? aliasOf.url(t.url));
    if (!this.mayUse(w, deviceId)) return false;
    w.deviceId = deviceId;

    const { main, sub } = pickMainAndSub(d.profiles);
    const uri = async (f: () => Promise<string | null>) => f().catch(() => null);
    const mainStreamUri = main ? await uri(() => session.streamUri(main.token)) : null;
    const subStreamUri = sub ? await uri(() => session.streamUri(sub.token)) : null;
    const snapshotUri = main ? await uri(() => session.snapshotUri(main.token)) : null;

    const existing = this.opts.store.getDevice(deviceId);
    const name =
      t.name ?? existing?.name ?? ([d.manufacturer, d.model].filter(Boolean).join(' ') || `Camera at ${hostOf(t.url)}`);
    this.opts.store.transaction(() => {
      this.opts.store.upsertDevice({
        ...this.deviceBase(deviceId, name),
        status: existing?.status ?? 'offline', // setStatus below makes the transition (and its event)
        model: d.model,
        manufacturer: d.manufacturer,
        firmwareVersion: d.firmwareVersion,
        lastSeenAt: Date.now(),
      });
      this.opts.store.upsertCamera({
        deviceId,
        onvifUrl: t.url,
        source: t.source,
        username: connected.username,
        passwordSealed: sealCameraPassword(this.opts.secretBox, deviceId, connected.password),
        serial: d.serialNumber,
        mainProfile: main?.token ?? null,
        mainStreamUri,
        subProfile: sub?.token ?? null,
        subStreamUri,
        snapshotUri,
        clockOffsetMs: d.clockOffsetMs,
        ptz: d.ptz,
      });
      this.opts.store.addAliases(deviceId, aliases);
    });
    this.setStatus(deviceId, 'online');
    this.opts.logger.info(
      { deviceId, url: t.url, model: d.model, clockOffsetMs: d.clockOffsetMs, ptz: d.ptz !== null },
      'camera adopted',
    );
    return true;
  }

  private deviceBase(id: string, name: string) {
    return {
      id,
      name,
      type: 'camera' as const,
      status: 'offline' as DeviceStatus,
      model: null,
      manufacturer: null,
      firmwareVersion: null,
      lastSeenAt: null,
    };
  }

  /** `alert: false`: the owner switched the camera off; no offline alert for that. */
  private setStatus(deviceId: string, status: DeviceStatus, opts: { alert?: boolean } = {}): void {
    const now = Date.now();
    const before = this.opts.store.getDevice(deviceId);
    const alert =
      opts.alert !== false && status === 'offline' && before?.status === 'online'
        ? {
            id: newId('alr'),
            deviceId,
            type: 'device_offline' as const,
            message: `${before.name} went offline`,
            createdAt: now,
          }
        : null;
    const result = this.opts.store.setDeviceStatus(deviceId, status, now, alert);
    if (result?.changed)
      this.opts.bus.emit('device.status', { deviceId, status, previous: before?.status ?? null, at: now });
  }

  /**
   * Health checks and the event subscription, until the camera stops answering (throws), stop(), or
   * the owner changes its account or use (the worker's generation moves on).
   */
  private async watch(w: Worker, generation: number): Promise<void> {
    const session = w.session;
    const deviceId = w.deviceId;
    if (!session || !deviceId) return;
    const events = this.watchEvents(w, session, deviceId);
    try {
      const interval = (this.opts.healthIntervalS ?? 30) * 1000;
      while (!w.stopped && w.generation === generation) {
        const url = w.target.url;
        await this.sleep(w, interval);
        if (w.stopped || w.generation !== generation) return;
        if (w.target.url !== url) return; // moved: reconnect at the new address
        await session.ping();
        if (w.generation !== generation) return;
        this.opts.store.setDeviceStatus(deviceId, 'online', Date.now());
      }
    } finally {
      session.close();
      await events;
    }
  }

  /** PullPoint loop: create, pull, renew before termination, re-create after errors with backoff. */
  private async watchEvents(w: Worker, session: OnvifSession, deviceId: string): Promise<void> {
    const tracker = new EventTracker({ debounceMs: this.opts.eventDebounceMs ?? 1500 });
    const unknownTopics = new Set<string>();
    const emit = (outputs: ReturnType<EventTracker['tick']>) => {
      for (const o of outputs) this.opts.bus.emit('camera.event', { deviceId, kind: o.kind, phase: o.type, at: o.at });
    };
    let tickTimer: NodeJS.Timeout | null = null;
    const scheduleTick = () => {
      if (tickTimer) clearTimeout(tickTimer);
      const due = tracker.nextDeadline();
      if (due === null) return;
      tickTimer = setTimeout(
        () => {
          emit(tracker.tick(Date.now()));
          scheduleTick();
        },
        Math.max(0, due - Date.now()),
      );
      tickTimer.unref();
    };
    let attempt = 0;
    try {
      while (!w.stopped && !session.isClosed) {
        try {
          await session.createPullPoint();
          w.subscribed = true;
          let renewedAt = Date.now();
          attempt = 0;
          while (!w.stopped && !session.isClosed) {
            // Cameras grant the lifetime they like (60 s to a request for 2 minutes is common):
            // renewed before a pull that could end past half of it, so a renewal is never later
            // than half the lifetime and a loaded machine has the other half to spare.
            if (Date.now() - renewedAt + session.pullWaitMs > session.subscriptionLifetimeMs / 2) {
              await session.renew();
              renewedAt = Date.now();
            }
            const response = await session.pullMessages();
            for (const n of toNotifications(response)) {
              const c = classify(n);
              if (!c && !unknownTopics.has(n.topic) && unknownTopics.size < 256) {
                unknownTopics.add(n.topic);
                this.opts.logger.debug({ deviceId, topic: n.topic }, 'camera event topic not used');
              }
              emit(tracker.push(n, c, Date.now()));
            }
            scheduleTick();
          }
        } catch (err) {
          w.subscribed = false;
          emit(tracker.reset(Date.now()));
          if (w.stopped || session.isClosed) break;
          this.opts.logger.info(
            { deviceId, err: (err as Error).message },
            'camera event subscription lost; re-creating',
          );
          await this.sleep(w, Math.max(500, backoffMs(attempt++, this.opts.maxBackoffMs ?? 60_000, this.random)));
        }
      }
    } finally {
      if (tickTimer) clearTimeout(tickTimer);
      emit(tracker.reset(Date.now()));
    }
  }
}

/** The device service address to use from a camera's XAddrs: plain http over IPv4 first (what LAN cameras serve). */
export function pickDeviceServiceUrl(xaddrs: readonly string[]): string | null {
  const parsed = xaddrs.flatMap((x) => {
    try {
      const u = new URL(x);
      return u.protocol === 'http:' || u.protocol === 'https:' ? [u] : [];
    } catch {
      return [];
    }
  });
  const score = (u: URL) => (u.protocol === 'http:' ? 0 : 2) + (u.hostname.startsWith('[') ? 1 : 0);
  return parsed.sort((a, b) => score(a) - score(b))[0]?.href ?? null;
}

function wakeAll(w: Worker): void {
  for (const wake of [...w.wakers]) wake();
}

function targetKey(t: CameraTarget): DeviceAlias {
  return (t.endpoint ? aliasOf.endpoint(t.endpoint) : null) ?? aliasOf.url(t.url);
}

function present(aliases: ReadonlyArray<DeviceAlias | null>): DeviceAlias[] {
  return aliases.filter((a): a is DeviceAlias => a !== null);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
