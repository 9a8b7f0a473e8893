import type { SettingsPatch } from '../domain/camera-settings.js';
import type { PtzCommand } from '../domain/ptz.js';
import type { CameraFacts, DiskFacts, HostFacts, ProcessFacts } from '../domain/system-facts.js';
import type { ControlAction, ControlRequest, Device, StreamProfile, StreamProtocol } from '../domain/types.js';

// What the API asks other parts to do. Implementations are passed in by main.ts.

export interface DeviceControl {
  /**
   * Carries out the action on the camera and returns the finished, stored request. Throws
   * DeviceUnavailableError (409) when the camera cannot take it, DeviceCommandError (502) when it refused.
   * `requestId` names the stored request (the cloud's command id over MQTT; a fresh id otherwise);
   * `by` is who asked, for the log (the token's subject).
   */
  run(deviceId: string, action: ControlAction, requestId?: string, by?: string): Promise<ControlRequest>;
  /**
   * Pans, tilts, zooms or handles presets, answering when the camera has; the result is not
   * stored. Throws as run does, and NotSupportedError (409) for a camera without it,
   * UnknownPresetError (400) for a preset it does not list; every failure of the camera is a
   * DeviceCommandError (502).
   */
  ptzCommand(deviceId: string, command: PtzCommand, by: string): Promise<ControlRequest>;
}

export interface StreamAddresses {
  /**
   * A time-limited address for the device's live stream through the gateway (DeviceUnavailableError
   * when none): rtsp:// on the relay (the default), or the WebRTC (WHEP) / LL-HLS https:// address
   * on the API's port at `requestHost` when that is this box.
   */
  issue(
    deviceId: string,
    profile: StreamProfile,
    options?: { protocol?: StreamProtocol; requestHost?: string | null },
  ): Promise<{ url: string; expiresAt: number }>;
}

export interface DeviceSnapshots {
  /**
   * The device's current picture as a JPEG `width` pixels wide (null: the camera's size), with a
   * strong ETag. Throws DeviceUnavailableError (409) when the device has nothing to make one from,
   * StillError (503) when no picture could be had, StillBusyError (503) when too many are being made.
   */
  get(deviceId: string, width: number | null): Promise<{ jpeg: Buffer; etag: string }>;
}

/** Cameras set up by their owner (POST, PATCH and DELETE /v1/devices…); `by` is who, for the log. */
export interface DeviceSetup {
  /**
   * Adds the ONVIF camera at host[:port] (checked by parseCameraAddress), listed offline until it is
   * reached. ConflictError (409) when a camera at that address is known or the config file lists it.
   */
  add(camera: { host: string; username: string; password: string; name: string | null }, by: string): Device;
  /**
   * Adds a plain RTSP camera by its stream URLs (as given: checked there), listed offline until its
   * stream answers. InvalidSettingError (400) naming the field; ConflictError (409) when a camera
   * with that stream is known.
   */
  addRtsp(
    camera: { url: string; subUrl: string | null; username: string | null; password: string | null; name: string },
    by: string,
  ): Device;
  /** Changes and applies the settings. NotFoundError; ConflictError for a field the config file sets. */
  change(deviceId: string, patch: SettingsPatch, by: string): Device;
  /** Stops using the camera. NotFoundError; ConflictError for a camera the config file lists. */
  remove(deviceId: string, by: string): Promise<void>;
}

/** GET /v1/system: what the gateway knows of its machine, disks and cameras' streams, read at each call. */
export interface SystemFacts {
  /** The machine and the daemon's process; CPU shares since the previous call. */
  machine(): Promise<{ host: HostFacts; process: ProcessFacts }>;
  /** The disks the gateway writes: data_dir, the clips' directory where it is elsewhere, the footage disk. */
  storage(): Promise<DiskFacts[]>;
  /** What the media side measures of a camera now. */
  camera(deviceId: string): CameraFacts;
}

/** A subscription as the push notifier sends to it. */
export interface PushTargetPort {
  id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** Web Push (src/notify): the gateway's key, where pushes may go, and the test notification. */
export interface PushNotifications {
  /** The VAPID public key: base64url of the uncompressed P-256 point (the browser's applicationServerKey). */
  readonly publicKey: string;
  /** notifications.enabled: whether alerts are pushed at all. */
  readonly enabled: boolean;
  /** Most subscriptions per owner (token subject) and in all (notifications.max_subscriptions_per_user, max_subscriptions). */
  readonly bounds: { perOwner: number; total: number };
  /** Why pushes cannot go to this endpoint (a sentence starting with "endpoint"), or null when they may. */
  endpointProblem(endpoint: string): string | null;
  /** The keys as kept (unpadded base64url), or why they cannot encrypt a push (a sentence starting with "keys."). */
  checkKeys(p256dh: string, auth: string): { ok: true; p256dh: string; auth: string } | { ok: false; problem: string };
  /** The local authorization server's grant behind a token, whose revocation removes what it subscribed; null: none. */
  grantOf(token: { issuer: string; tokenId: string | null }): string | null;
  /**
   * Sends a test notification to the subscription now: delivered, or the push service's refusal (or why it could not
   * be reached) in words, with its HTTP status when it answered.
   */
  sendTest(target: PushTargetPort): Promise<{ delivered: boolean; status: number | null; outcome: string }>;
}
