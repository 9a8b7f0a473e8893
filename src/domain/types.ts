// The gateway's records as the rest of the code sees them. Timestamps are milliseconds since the
// Unix epoch (UTC); the API formats them as ISO 8601 at its edge.

import type { CameraSettings } from './camera-settings.js';
import type { DevicePtz, PtzAction } from './ptz.js';

export const DEVICE_TYPES = ['camera'] as const;
export const DEVICE_STATUSES = ['online', 'offline', 'unauthorized'] as const;
export const EVENT_TYPES = ['motion', 'human', 'vehicle'] as const;
export const ALERT_TYPES = [...EVENT_TYPES, 'device_offline'] as const;
/**
 * What became of an alert's clip: none (device_offline: no clip ever), pending (being recorded),
 * recorded, partial (some footage of the event is missing: see the reason), lost (no clip at all).
 */
export const RECORDING_STATUSES = ['none', 'pending', 'recorded', 'partial', 'lost'] as const;
/**
 * Control actions kept as control requests, told to the cloud and taken from it. The PTZ actions
 * (ptz.ts) go through the same endpoint but are not kept: a held button sends several a second.
 */
export const CONTROL_ACTIONS = ['reboot', 'sync_time'] as const;
export const CONTROL_STATUSES = ['pending', 'succeeded', 'failed'] as const;
/** A camera's two streams: main = highest resolution, sub = lowest. */
export const STREAM_PROFILES = ['main', 'sub'] as const;
/** How a live stream is played: the RTSP relay, WebRTC (WHEP) or LL-HLS in a browser. */
export const STREAM_PROTOCOLS = ['rtsp', 'webrtc', 'hls'] as const;
/**
 * How the gateway reaches a camera: onvif (adopted over ONVIF: its streams, snapshot, events and
 * control from the camera's answers) or rtsp (a plain stream URL its owner gave: video only).
 */
export const DEVICE_SOURCES = ['onvif', 'rtsp'] as const;

export type DeviceType = (typeof DEVICE_TYPES)[number];
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];
export type EventType = (typeof EVENT_TYPES)[number];
export type AlertType = (typeof ALERT_TYPES)[number];
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];
export type ControlAction = (typeof CONTROL_ACTIONS)[number];
export type ControlStatus = (typeof CONTROL_STATUSES)[number];
export type StreamProfile = (typeof STREAM_PROFILES)[number];
export type StreamProtocol = (typeof STREAM_PROTOCOLS)[number];
export type DeviceSource = (typeof DEVICE_SOURCES)[number];

export interface Device {
  id: string;
  name: string;
  type: DeviceType;
  status: DeviceStatus;
  model: string | null;
  manufacturer: string | null;
  firmwareVersion: string | null;
  lastSeenAt: number | null;
  createdAt: number;
  /**
   * host[:port] of the camera's ONVIF service (of its RTSP URL for a plain RTSP camera); null for a
   * device that is not a camera.
   */
  address: string | null;
  source: DeviceSource;
  /** A plain RTSP camera's main and sub stream URLs as they may be shown (rtspUrlForDisplay); null otherwise. */
  rtspUrl: string | null;
  subRtspUrl: string | null;
  /** What the camera is set to do, and who set each field (src/domain/camera-settings.ts). */
  settings: CameraSettings;
  /** Pan, tilt, zoom and presets as adoption found them; null for a fixed camera (or one never adopted). */
  ptz: DevicePtz | null;
}

/** What a device is written with; the rest of a Device is read from its camera row and settings. */
export type DeviceFields = Omit<
  Device,
  'createdAt' | 'address' | 'source' | 'rtspUrl' | 'subRtspUrl' | 'settings' | 'ptz'
>;

/** What the object detector found: the model's class, its score 0–1, and where (0–1 of the frame). */
export interface DetectedObject {
  label: string;
  score: number;
  box: { x: number; y: number; w: number; h: number };
  /**
   * True when it was found where one of its kind was found before, not moved since: it alerts only
   * inside a zone that alerts for it, alert_on_stationary or loitering_s (docs/detection.md).
   * Absent otherwise.
   */
  stationary?: true;
}

export interface Recording {
  id: string;
  deviceId: string;
  eventType: EventType;
  startedAt: number;
  endedAt: number;
  sizeBytes: number;
  /** Path relative to the recording storage directory. */
  fileName: string;
  alertId: string | null;
  createdAt: number;
  /** What the detector found in the event (empty when nothing was checked or found). */
  detections: DetectedObject[];
}

export interface Alert {
  id: string;
  deviceId: string;
  type: AlertType;
  message: string;
  createdAt: number;
  readAt: number | null;
  recordingId: string | null;
  recordingStatus: RecordingStatus;
  /** Why footage is missing (partial, lost), else null. */
  recordingStatusReason: string | null;
  /** What the detector found (the thumbnail's boxes); empty when nothing was checked or found. */
  detections: DetectedObject[];
}

export interface ControlRequest {
  id: string;
  deviceId: string;
  /** A PTZ action's result is made for the answer only (kept and told to the cloud: CONTROL_ACTIONS). */
  action: ControlAction | PtzAction;
  status: ControlStatus;
  requestedAt: number;
  completedAt: number | null;
  error: string | null;
}

/** Position in a newest-first list: the sort time and id of the last item handed out. */
export interface PageKey {
  at: number;
  id: string;
}

export interface Page<T> {
  items: T[];
  next: PageKey | null;
}

/** How the gateway reaches a camera (never shown by the API: it holds addresses and credentials). */
export interface CameraRecord {
  deviceId: string;
  /** The camera's ONVIF device service URL; a plain RTSP camera's main stream URL (isRtspUrl). */
  onvifUrl: string;
  /** How the gateway knows the camera: the config file, WS-Discovery, or the app (POST /v1/devices). */
  source: 'config' | 'discovery' | 'app';
  username: string | null;
  /** Sealed with the data_dir key (SecretBox label `camera-password:<deviceId>`). */
  passwordSealed: string | null;
  serial: string | null;
  mainProfile: string | null;
  mainStreamUri: string | null;
  subProfile: string | null;
  subStreamUri: string | null;
  snapshotUri: string | null;
  clockOffsetMs: number | null;
  /** What adoption found the camera can do: the Device's `ptz`. */
  ptz: DevicePtz | null;
}
