import type { BaseLogger } from 'pino';
import type { EventBus } from '../domain/bus.js';
import { patchedFields, type SettingField, type SettingsPatch } from '../domain/camera-settings.js';
import { aliasOf, deviceIdFrom, type DeviceAlias } from '../domain/device-alias.js';
import { ConflictError, NotFoundError } from '../domain/errors.js';
import type { Device } from '../domain/types.js';
import { sealCameraPassword, type SecretBox } from '../platform/secret-box.js';
import type { NewAppCamera, SettingsChange } from '../store/store.js';
import type { CameraTarget } from './manager.js';

// Cameras set up by their owner through the API: added by address, their settings changed,
// removed. The store keeps what is set (the file's cameras[] entry is the base and wins where it
// sets a field: src/domain/camera-settings.ts); this applies it at once: a new account is tried now,
// the recorder and detector read the new settings at their next look (the bus tells them), a
// removed camera's session ends. Every change is logged with who made it, never with a password.

/** What setting cameras up reads and writes of the store. Declared here; main.ts passes the Store. */
export interface SetupStore {
  getDevice(id: string): Device | null;
  findDeviceByAlias(aliases: readonly DeviceAlias[]): string | null;
  listCameras(): Array<{ deviceId: string; onvifUrl: string }>;
  isDeviceRemoved(deviceId: string): boolean;
  addCamera(c: NewAppCamera, by: string): Device;
  changeCameraSettings(deviceId: string, change: SettingsChange, by: string): Device | null;
  removeDevice(deviceId: string): boolean;
}

/** What it asks of the camera manager. */
export interface SetupCameras {
  addTarget(target: CameraTarget): void;
  reconnect(deviceId: string): void;
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
        .filter((cam) => hostOf(cam.onvifUrl) === c.host)
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
   * Changes what `patch` names, all or nothing, and applies it at once. NotFoundError; ConflictError
   * for a field the config file sets, or continuous recording on a gateway that keeps none.
   */
  change(deviceId: string, patch: SettingsPatch, by: string): Device {
    const { store } = this.opts;
    const before = store.getDevice(deviceId);
    if (!before) throw new NotFoundError('device', deviceId);
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
    const { account, ...rest } = patch;
    const sealed = account && {
      username: account.username,
      passwordSealed: sealCameraPassword(this.opts.secretBox, deviceId, account.password),
    };
    const after = store.changeCameraSettings(deviceId, { ...rest, ...(sealed ? { account: sealed } : {}) }, by);
    if (!after) throw new NotFoundError('device', deviceId);
    const changed = fields.filter((f) => f === 'account' || settingOf(before, f) !== settingOf(after, f));
    this.opts.logger.info({ deviceId, by, fields, changed }, 'camera settings changed');
    this.opts.bus.emit('camera.settings', { deviceId, fields: changed, at: Date.now() });
    if (changed.includes('account') || changed.includes('enabled')) this.opts.cameras.reconnect(deviceId);
    return store.getDevice(deviceId) ?? after;
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

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
