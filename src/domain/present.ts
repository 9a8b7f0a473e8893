import type { Static } from 'typebox';
import type { AlertSchema, ControlResultSchema, DeviceSchema, RecordingSchema } from './record-schemas.js';
import type { CameraSettings } from './camera-settings.js';
import type { Alert, ControlRequest, Device, Recording } from './types.js';

// Domain records → their JSON shapes (snake_case, ISO 8601 UTC timestamps with milliseconds), as
// the API answers them and sync publishes them; the shapes are the schemas' (record-schemas.ts).

export type DeviceJson = Static<typeof DeviceSchema>;
export type RecordingJson = Static<typeof RecordingSchema>;
export type AlertJson = Static<typeof AlertSchema>;
export type ControlResultJson = Static<typeof ControlResultSchema>;

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

export const presentDevice = (d: Device): DeviceJson => ({
  id: d.id,
  name: d.name,
  type: d.type,
  status: d.status,
  model: d.model,
  manufacturer: d.manufacturer,
  firmware_version: d.firmwareVersion,
  last_seen_at: isoOrNull(d.lastSeenAt),
  address: d.address,
  source: d.source,
  rtsp_url: d.rtspUrl,
  sub_rtsp_url: d.subRtspUrl,
  settings: presentSettings(d.settings),
  ptz: d.ptz && {
    presets: d.ptz.presets.map((p) => ({ token: p.token, name: p.name })),
    can_center: d.ptz.canCenter,
  },
});

const presentSettings = (s: CameraSettings): DeviceJson['settings'] => ({
  enabled: s.enabled,
  recording: s.recording,
  detection: s.detection,
  motion_mask: s.motionMask.map((p) => p.map(([x, y]) => [x, y])),
  zones: s.zones.map((z) => ({
    name: z.name,
    polygon: z.polygon.map(([x, y]) => [x, y]),
    required: z.required,
    alert_on_stationary: z.alertOnStationary ?? false,
    loitering_s: z.loiteringS ?? null,
  })),
  username: s.username,
  has_password: s.hasPassword,
  source: { ...s.source },
});

/** A playback ticket for one recording and when it expires (ms); minted by the caller, so presenting stays pure. */
export type MintPlayback = (recordingId: string) => { ticket: string; expiresAt: number };

/** `mint` absent (MQTT, a reader without recordings:read): no playback address. */
export const presentRecording = (r: Recording, mint?: MintPlayback): RecordingJson => ({
  id: r.id,
  device_id: r.deviceId,
  event_type: r.eventType,
  started_at: iso(r.startedAt),
  ended_at: iso(r.endedAt),
  duration_s: (r.endedAt - r.startedAt) / 1000,
  size_bytes: r.sizeBytes,
  content_type: 'video/mp4' as const,
  alert_id: r.alertId,
  download_url: `/v1/recordings/${encodeURIComponent(r.id)}/download`,
  detections: r.detections,
  ...playbackFields(r.id, mint),
});

function playbackFields(
  recordingId: string,
  mint: MintPlayback | undefined,
): Pick<RecordingJson, 'playback_url' | 'playback_expires_at'> {
  if (!mint) return { playback_url: null, playback_expires_at: null };
  const { ticket, expiresAt } = mint(recordingId);
  return {
    playback_url: `/v1/recordings/${encodeURIComponent(recordingId)}/play?ticket=${ticket}`,
    playback_expires_at: iso(expiresAt),
  };
}

export const presentAlert = (a: Alert): AlertJson => ({
  id: a.id,
  device_id: a.deviceId,
  type: a.type,
  message: a.message,
  created_at: iso(a.createdAt),
  read: a.readAt !== null,
  read_at: isoOrNull(a.readAt),
  recording_id: a.recordingId,
  recording_status: a.recordingStatus,
  recording_status_reason: a.recordingStatusReason,
  detections: a.detections,
});

export const presentControl = (c: ControlRequest): ControlResultJson => ({
  id: c.id,
  device_id: c.deviceId,
  action: c.action,
  // A pending request is never answered: the API waits for the camera (bounded by its timeout).
  status: c.status === 'succeeded' ? ('succeeded' as const) : ('failed' as const),
  requested_at: iso(c.requestedAt),
  completed_at: isoOrNull(c.completedAt),
  error: c.error,
});

/**
 * Memoises a presenter per record object. The store hands out the same objects for unchanged list
 * pages, so a polled list is formatted once, not on every request; a changed record is a new object.
 */
export function memoized<T extends object, R>(present: (t: T) => R): (t: T) => R {
  const seen = new WeakMap<T, R>();
  return (t) => {
    let out = seen.get(t);
    if (out === undefined) {
      out = present(t);
      seen.set(t, out);
    }
    return out;
  };
}
