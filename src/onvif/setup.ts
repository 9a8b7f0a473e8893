import type { BaseLogger } from 'pino';
import type { EventBus } from '../domain/bus.js';
import { type ChangedField, patchedFields, type SettingField, type SettingsPatch } from '../domain/camera-settings.js';
import { aliasOf, deviceIdFrom, type DeviceAlias } from '../domain/device-alias.js';
import { ConflictError, InvalidSettingError, NotFoundError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { isRtspUrl, parseRtspUrl, rtspUrlForDisplay, type ParsedRtspUrl } from '../domain/rtsp-url.js';
import type { CameraRecord, Device } from '../domain/types.js';
import { sealCameraPassword, type SecretBox } from '../platform/secret-box.js';
import type { NewAppCamera, RtspStreams, SettingsChange } from '../store/store.js';
import type { CameraTarget } from './manager.js';

// Cameras set up by their owner through the API: added by address (an ONVIF camera) or by stream
// URL (a plain RTSP camera), their settings changed, removed. The store keeps what is set (the file's cameras[] entry is the base and wins where it
// sets a field: src/domain/camera-settings.ts); this applies it at once: a new account is tried now,
// the recorder and detector read the new settings at their next look (the bus tells them), a
// removed camera's session ends. Every change is logged with who made it, never with a password.

/** What setting cameras up reads and writes of the store. Declared here; main.ts passes the Store. */
export interface SetupStore {
  getDevice(id: string): Device | null;
  findDeviceByAlias(aliases: readonly DeviceAlias[]): string | null;
  getCamera(deviceId: string): CameraRecord | null;
  listCameras(): Array<Pick<CameraRecord, 'deviceId' | 'onvifUrl' | 'mainStreamUri' | 'subStreamUri'>>;
  isDeviceRemoved(deviceId: string): boolean;
  addCamera(c: NewAppCamera, by: string): Device;
  changeCameraSettings(deviceId: string, change: SettingsChange, by: string): Device | null;
  removeDevice(deviceId: string): boolean;
}

/** What it asks of the camera manager. */
export interface SetupCameras {
  addTarget(target: CameraTarget): void;
  reconnect(deviceId: string): void;
  moved(deviceId: string, url: string): void;
  forget(deviceId: string): Promise<void>;
}

export interface CameraSetupOptions {
  store: SetupStore;
  cameras: SetupCameras;
  secretBox: SecretBox;
  bus: EventBus;
  logger: BaseLogger;
  /** The device service URLs the config file's cameras[] names: those are the file's to add and remove. */
  fileUrls: ReadonlySet<string>;
  /** Whether the gateway keeps continuous footage at all (recording.continuous.enabled). */
  continuousAvailable: boolean;
  /** Whether host:port is the gateway's own RTSP relay, which no camera may be (a loop). */
  isOwnRelay: (host: string, port: number) => boolean;
}

/** A plain RTSP camera as its owner gives it (POST /v1/devices with rtsp_url): the URLs as typed. */
export interface NewRtspCamera {
  url: string;
  subUrl: string | null;
  /** Null: none given (then the URL's own, if it carries one). */
  username: string | null;
  password: string | null;
  name: string;
}

/**
 * The ONVIF device service of a camera at host[:port]: the path ONVIF gives it, over plain http as
 * LAN cameras serve it.
 */
export const deviceServiceUrl = (host: string): string => `http://${host}/onvif/device_service`;

export class CameraSetup {
  constructor(private readonly opts: CameraSetupOptions) {}

  /**
   * Adds the ONVIF camera at `host` (host[:port], as parseCameraAddress writes it): listed offline
   * at once, then online, offline or unauthorized as the manager finds it. A camera removed before
   * comes back under its id (its recordings with it). ConflictError when the file lists it or a
   * camera at that address is known.
   */
  add(c: { host: string; username: string; password: string; name: string | null }, by: string): Device {
    const { store } = this.opts;
    const url = deviceServiceUrl(c.host);
    if (this.opts.fileUrls.has(url))
      throw new ConflictError(`the camera at ${c.host} is in the config file (cameras[]): it is set up there`);
    const urlAlias = aliasOf.url(url);
    const known = [
      ...store
        .listCameras()
        .filter((cam) => !isRtspUrl(cam.onvifUrl) && hostOf(cam.onvifUrl) === c.host)
        .map((cam) => cam.deviceId),
      store.findDeviceByAlias([urlAlias]),
    ].filter((id): id is string => id !== null);
    const inUse = known.find((id) => !store.isDeviceRemoved(id));
    if (inUse !== undefined) throw new ConflictError(`a camera at ${c.host} is already known: device ${inUse}`);
    const id = known[0] ?? deviceIdFrom(urlAlias);
    const device = store.addCamera(
      {
        id,
        name: c.name ?? `Camera at ${c.host}`,
        nameSet: c.name !== null,
        onvifUrl: url,
        aliases: [urlAlias],
        username: c.username,
        passwordSealed: sealCameraPassword(this.opts.secretBox, id, c.password),
      },
      by,
    );
    this.opts.logger.info({ deviceId: id, address: c.host, by, restored: known.length > 0 }, 'camera added');
    this.opts.cameras.addTarget({ url, source: 'app', deviceId: id });
    return device;
  }

  /**
   * Adds a plain RTSP camera: listed offline at once, then online, offline or unauthorized as its
   * stream answers (the manager looks). Its id comes from its main URL, so one removed before comes
   * back under its id. InvalidSettingError (a URL that is not a camera's, the gateway's own relay,
   * credentials given twice); ConflictError when a camera with that URL is known.
   */
  addRtsp(c: NewRtspCamera, by: string): Device {
    const { store } = this.opts;
    const main = this.streamUrl('rtsp_url', c.url);
    const sub = c.subUrl === null ? null : this.streamUrl('sub_rtsp_url', c.subUrl);
    const account = accountOf(
      { main, sub },
      c.username === null ? null : { username: c.username, password: c.password ?? '' },
    );
    const alias = aliasOf.url(main.url);
    this.refuseKnownStreams([main.url, sub?.url], null);
    const known = store.findDeviceByAlias([alias]);
    // The id its URL names may be taken: a camera added at this URL once, since moved to another.
    const derived = deviceIdFrom(alias);
    const taken = store.getDevice(derived) !== null || store.isDeviceRemoved(derived);
    const id = known ?? (taken ? newId('dev') : derived);
    const device = store.addCamera(
      {
        id,
        name: c.name,
        nameSet: true,
        onvifUrl: main.url,
        aliases: [alias],
        username: account?.username ?? null,
        passwordSealed: sealCameraPassword(this.opts.secretBox, id, account?.password ?? null),
        streams: { main: main.url, sub: sub?.url ?? null },
      },
      by,
    );
    this.opts.logger.info(
      { deviceId: id, url: rtspUrlForDisplay(main.url), sub: sub !== null, by, restored: known !== null },
      'RTSP camera added',
    );
    this.opts.cameras.addTarget({ url: main.url, source: 'app', deviceId: id });
    return device;
  }

  /**
   * Changes what `patch` names, all or nothing, and applies it at once. NotFoundError; ConflictError
   * for a field the config file sets, or continuous recording on a gateway that keeps none;
   * InvalidSettingError and ConflictError for stream URLs as addRtsp.
   */
  change(deviceId: string, patch: SettingsPatch, by: string): Device {
    const { store } = this.opts;
    const before = store.getDevice(deviceId);
    if (!before) throw new NotFoundError('device', deviceId);
    const moved = patch.streams ? this.movedStreams(before, patch) : null;
    const fields = patchedFields(patch);
    const fromFile = fields.filter((f) => before.settings.source[f] === 'file');
    if (fromFile.length > 0)
      throw new ConflictError(
        `${fromFile.join(', ')} ${fromFile.length > 1 ? 'are' : 'is'} set for this camera in the config file (its cameras[] entry): change it there`,
      );
    if (patch.recording === 'continuous' && !this.opts.continuousAvailable)
      throw new ConflictError(
        'recording continuous needs continuous recording on this gateway (recording.continuous.enabled in the config file)',
      );
    const { account: _plain, streams: _given, ...rest } = patch;
    const account = patch.account ?? moved?.account ?? undefined;
    const sealed = account && {
      username: account.username,
      passwordSealed: sealCameraPassword(this.opts.secretBox, deviceId, account.password),
    };
    const change = {
      ...rest,
      ...(sealed ? { account: sealed } : {}),
      ...(moved ? { streams: moved.streams } : {}),
    };
    const after = store.changeCameraSettings(deviceId, change, by);
    if (!after) throw new NotFoundError('device', deviceId);
    if (account && !fields.includes('account')) fields.push('account');
    const changed: ChangedField[] = fields.filter(
      (f) => f === 'account' || settingOf(before, f) !== settingOf(after, f),
    );
    const streamsChanged = moved !== null && moved.changed;
    if (streamsChanged) changed.push('rtsp_urls');
    this.opts.logger.info({ deviceId, by, fields, changed }, 'camera settings changed');
    this.opts.bus.emit('camera.settings', { deviceId, fields: changed, at: Date.now() });
    if (streamsChanged) this.opts.cameras.moved(deviceId, moved.streams.main);
    else if (changed.includes('account') || changed.includes('enabled')) this.opts.cameras.reconnect(deviceId);
    return store.getDevice(deviceId) ?? after;
  }

  /**
   * A plain RTSP camera's URLs after the patch, checked as addRtsp checks them, with the account a
   * new URL carries (which the patch may not give as well). InvalidSettingError for a camera added
   * by its ONVIF address.
   */
  private movedStreams(
    before: Device,
    patch: SettingsPatch,
  ): { streams: RtspStreams; account: { username: string; password: string } | null; changed: boolean } {
    const given = patch.streams ?? {};
    const camera = this.opts.store.getCamera(before.id);
    const field = given.main !== undefined ? 'rtsp_url' : 'sub_rtsp_url';
    if (before.source !== 'rtsp' || !camera)
      throw new InvalidSettingError(
        field,
        'is only for a camera added by its RTSP address: this one is reached over ONVIF, which tells the gateway its streams',
      );
    const main = given.main === undefined ? null : this.streamUrl('rtsp_url', given.main);
    const sub = given.sub === undefined || given.sub === null ? null : this.streamUrl('sub_rtsp_url', given.sub);
    const account = accountOf({ main, sub }, patch.account ?? null);
    const mainUrl = main?.url ?? camera.mainStreamUri ?? camera.onvifUrl;
    const subUrl = given.sub === undefined ? camera.subStreamUri : (sub?.url ?? null);
    this.refuseKnownStreams([main?.url, sub?.url], before.id);
    return {
      streams: { main: mainUrl, sub: subUrl, alias: aliasOf.url(mainUrl) },
      account: patch.account ? null : account,
      changed: mainUrl !== (camera.mainStreamUri ?? camera.onvifUrl) || subUrl !== camera.subStreamUri,
    };
  }

  /** A stream URL as the gateway keeps it; InvalidSettingError naming the field when it cannot be a camera's. */
  private streamUrl(field: 'rtsp_url' | 'sub_rtsp_url', text: string): ParsedRtspUrl {
    const parsed = parseRtspUrl(text);
    if ('problem' in parsed) throw new InvalidSettingError(field, parsed.problem);
    if (this.opts.isOwnRelay(parsed.host, parsed.port))
      throw new InvalidSettingError(
        field,
        "points at this gateway's own RTSP relay: give the camera's own address (the relay serves what it reads from cameras)",
      );
    return parsed;
  }

  /**
   * ConflictError when one of the URLs is a stream of a camera in use (its main or sub stream,
   * whatever the camera's kind), other than `self`: one camera is added once.
   */
  private refuseKnownStreams(urls: ReadonlyArray<string | undefined>, self: string | null): void {
    const { store } = this.opts;
    const wanted = new Set(urls.filter((u): u is string => u !== undefined));
    if (wanted.size === 0) return;
    for (const cam of store.listCameras()) {
      if (cam.deviceId === self || store.isDeviceRemoved(cam.deviceId)) continue;
      for (const uri of [cam.mainStreamUri, cam.subStreamUri]) {
        const kept = uri === null ? null : parseRtspUrl(uri);
        if (kept && 'url' in kept && wanted.has(kept.url))
          throw new ConflictError(
            `a camera with the stream ${rtspUrlForDisplay(kept.url)} is already known: device ${cam.deviceId}`,
          );
      }
    }
    for (const url of wanted) {
      const id = store.findDeviceByAlias([aliasOf.url(url)]);
      if (id !== null && id !== self && !store.isDeviceRemoved(id))
        throw new ConflictError(`a camera with the stream ${rtspUrlForDisplay(url)} is already known: device ${id}`);
    }
  }

  /**
   * The gateway stops using the camera and forgets its settings and account; its recordings and
   * alerts stay until their retention. Discovery finding it again leaves it alone; add() brings it
   * back. ConflictError for a camera the config file lists.
   */
  async remove(deviceId: string, by: string): Promise<void> {
    const device = this.opts.store.getDevice(deviceId);
    if (!device) throw new NotFoundError('device', deviceId);
    if (device.settings.source.name === 'file')
      throw new ConflictError('this camera is in the config file (cameras[]): remove it there');
    await this.opts.cameras.forget(deviceId);
    if (!this.opts.store.removeDevice(deviceId)) throw new NotFoundError('device', deviceId);
    this.opts.logger.info({ deviceId, by }, 'camera removed');
    const at = Date.now();
    if (device.status !== 'offline')
      this.opts.bus.emit('device.status', { deviceId, status: 'offline', previous: device.status, at });
    this.opts.bus.emit('device.removed', { deviceId, at });
  }
}

/** A setting's value as text, to tell whether a change changed it. */
function settingOf(d: Device, field: SettingField): string {
  const s = d.settings;
  switch (field) {
    case 'name':
      return d.name;
    case 'account':
      return `${s.username}:${s.hasPassword}`;
    case 'motion_mask':
      return JSON.stringify(s.motionMask);
    default:
      return JSON.stringify(s[field]);
  }
}

/**
 * The account a plain RTSP camera is opened with: the one given in the fields, else the one its
 * URLs carry (which must then agree). InvalidSettingError when both carry one, or the two URLs
 * carry different ones.
 */
function accountOf(
  urls: { main: ParsedRtspUrl | null; sub: ParsedRtspUrl | null },
  given: { username: string; password: string } | null,
): { username: string; password: string } | null {
  const inMain = urls.main?.account ?? null;
  const inSub = urls.sub?.account ?? null;
  if (given && (inMain || inSub))
    throw new InvalidSettingError(
      inMain ? 'rtsp_url' : 'sub_rtsp_url',
      'holds a username and password, and username and password are given too: give the account once (in the URL or in those fields)',
    );
  if (inMain && inSub && (inMain.username !== inSub.username || inMain.password !== inSub.password))
    throw new InvalidSettingError(
      'sub_rtsp_url',
      'holds another username or password than rtsp_url: both streams are opened with one account',
    );
  return given ?? inMain ?? inSub;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
