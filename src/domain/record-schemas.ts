import Type, { type Static, type TSchema } from 'typebox';
import {
  ALERT_TYPES,
  CONTROL_ACTIONS,
  DEVICE_SOURCES,
  DEVICE_STATUSES,
  DEVICE_TYPES,
  EVENT_TYPES,
  RECORDING_STATUSES,
} from './types.js';
import { ID_PATTERN } from './ids.js';
import { PTZ_ACTIONS } from './ptz.js';
import {
  DETECTION_MODES,
  RECORDING_MODES,
  SETTING_FIELDS,
  SETTING_LIMITS,
  SETTING_SOURCES,
  ZONE_NAME_PATTERN,
} from './camera-settings.js';

// The records' JSON shapes (snake_case, ISO 8601 timestamps), the one source of what the API
// answers and sync publishes: the API validates, serialises and documents with them, and the
// presenters (present.ts) are typed by them.

/**
 * `type: [T, "null"]` rather than anyOf: the response serialiser writes it directly, where anyOf
 * would make it run a validator per field to pick a branch (measured: a tenth of a device list's cost).
 */
const Nullable = <T extends TSchema & { type: string }>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });

export const Timestamp = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds, e.g. 2026-11-22T08:15:30.120Z',
});
export const NullableTimestamp = Nullable(Timestamp);
export const NullableString = Nullable(Type.String());

export const Id = Type.String({ pattern: ID_PATTERN, description: 'Opaque URL-safe identifier' });
const NullableId = Nullable(Id);

const Fraction = Type.Number({ minimum: 0, maximum: 1 });
/** A zone or mask: corners [x, y] in 0–1 coordinates of the picture (0,0 top-left), in order around it. */
export const PolygonSchema = Type.Array(Type.Array(Fraction, { minItems: 2, maxItems: 2 }), {
  minItems: 3,
  maxItems: SETTING_LIMITS.corners,
  description:
    'Corners [x, y] in 0–1 coordinates of the picture (0,0 top-left), in order around the area: 3–64 of them, with an area, no two edges crossing',
});
export const ZoneSchema = Type.Object(
  {
    name: Type.String({ pattern: ZONE_NAME_PATTERN, description: '1–64 letters, digits, _ or -; unique per camera' }),
    polygon: PolygonSchema,
    required: Type.Boolean({
      description: 'A person or vehicle counts only inside one of the required zones, when a camera has any',
    }),
    alert_on_stationary: Type.Boolean({
      description:
        'An object inside it (the bottom centre of its box) that has not moved since it was last found there alerts all the same (elsewhere it does not)',
    }),
    loitering_s: Type.Union([Type.Integer({ minimum: 1, maximum: SETTING_LIMITS.loiteringS }), Type.Null()], {
      description:
        'A person inside it makes one alert once they have stayed this many seconds, and none before; null: no such rule',
    }),
  },
  { title: 'Zone' },
);
const SettingSource = Type.Enum([...SETTING_SOURCES]);

export const CameraSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'false: the gateway does not use the camera (it is listed offline)' }),
    recording: Type.Enum([...RECORDING_MODES], {
      description:
        'events: clips of events; continuous: clips and round-the-clock footage; off: nothing is recorded (no clips, no footage, no event alerts)',
    }),
    detection: Type.Enum([...DETECTION_MODES], {
      description:
        "The gateway's person/vehicle detector on this camera's motion: auto (unless the camera reports people or vehicles itself), on, off",
    }),
    motion_mask: Type.Array(PolygonSchema, {
      description: "Where the gateway's software motion detection ignores changes",
    }),
    zones: Type.Array(ZoneSchema),
    username: Type.Union([Type.String(), Type.Null()], {
      description: 'The account the gateway logs in to the camera with; null: none',
    }),
    has_password: Type.Boolean({ description: 'Whether a password is kept for it (never shown)' }),
    source: Type.Object(
      Object.fromEntries(SETTING_FIELDS.map((f) => [f, SettingSource])) as Record<
        (typeof SETTING_FIELDS)[number],
        typeof SettingSource
      >,
      {
        description:
          "Who set each field: file (the config file's cameras[] entry: change it there; the API refuses with 409), app (through this API), default (neither)",
      },
    ),
  },
  { title: 'CameraSettings' },
);

export const PtzPresetSchema = Type.Object(
  {
    token: Type.String({
      description: "The camera's token of the preset: what ptz_goto_preset and ptz_remove_preset take",
    }),
    name: Type.String({ description: 'Its name as the camera keeps it' }),
  },
  { title: 'PtzPreset' },
);

/** Untitled: the Device's field is this or null, written as one nullable object (see Nullable). */
export const DevicePtzSchema = Type.Object({
  presets: Type.Array(PtzPresetSchema, { description: 'The presets the camera keeps, in its order' }),
  can_center: Type.Boolean({
    description: 'Whether ptz_center (bring a point of the picture to its centre) is offered',
  }),
});

export const DeviceSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    type: Type.Enum([...DEVICE_TYPES]),
    status: Type.Enum([...DEVICE_STATUSES]),
    model: NullableString,
    manufacturer: NullableString,
    firmware_version: NullableString,
    last_seen_at: NullableTimestamp,
    address: Type.Union([Type.String(), Type.Null()], {
      description:
        "host[:port] of the camera's ONVIF service on the LAN (of its RTSP URL for source rtsp; never credentials), so an unauthorized camera can be told apart from a dead one; null for other devices",
    }),
    source: Type.Enum([...DEVICE_SOURCES], {
      description:
        'How the gateway reaches the camera: onvif (adopted over ONVIF: streams, snapshot, events and control from the camera) or rtsp (added by its RTSP URL: video only, no events, snapshot fallback or control)',
    }),
    rtsp_url: Nullable(
      Type.String({
        description:
          'source rtsp: the main stream URL it was added with, never with credentials (a parameter that looks like a password shows as ***); null for ONVIF cameras',
      }),
    ),
    sub_rtsp_url: Nullable(
      Type.String({ description: 'source rtsp: the sub stream URL, if one was given; null otherwise' }),
    ),
    settings: CameraSettingsSchema,
    ptz: Type.Unsafe<Static<typeof DevicePtzSchema> | null>({
      ...DevicePtzSchema,
      type: ['object', 'null'],
      description:
        'Pan, tilt and zoom (the ptz_* control actions): null for a fixed camera, or one the gateway has not adopted yet',
    }),
  },
  { title: 'Device' },
);

/** One object the gateway's detector found. */
export const DetectionSchema = Type.Object(
  {
    label: Type.String({
      description: "The model's class, a COCO name: person, car, truck, bus, motorcycle, bicycle…",
    }),
    score: Type.Number({ minimum: 0, maximum: 1 }),
    box: Type.Object(
      { x: Type.Number(), y: Type.Number(), w: Type.Number(), h: Type.Number() },
      { description: 'Where, in 0–1 coordinates of the frame: x, y its top-left corner, w, h its size' },
    ),
    stationary: Type.Optional(
      Type.Literal(true, {
        description:
          'Present when it was found where one of its kind was found before and has not moved since: it made no alert of its own, except inside a zone that alerts for it (alert_on_stationary, loitering_s)',
      }),
    ),
  },
  { title: 'Detection' },
);
const Detections = Type.Array(DetectionSchema, {
  description:
    "What the gateway's person/vehicle detector found in the event (the thumbnail shows these boxes); empty when it found nothing or did not look",
});

export const RecordingSchema = Type.Object(
  {
    id: Id,
    device_id: Id,
    event_type: Type.Enum([...EVENT_TYPES]),
    started_at: Timestamp,
    ended_at: Timestamp,
    duration_s: Type.Number({ description: 'ended_at − started_at in seconds (milliseconds kept)' }),
    size_bytes: Type.Integer(),
    content_type: Type.Literal('video/mp4'),
    alert_id: NullableId,
    download_url: Type.String({ description: 'Path of the download on this gateway, relative to the API origin' }),
    detections: Detections,
    playback_url: Nullable(
      Type.String({
        description:
          'Path, relative to the API origin, that plays the clip in a <video> element without an Authorization header: it carries a short-lived ticket for this recording only (docs/api.md, "Playing a clip"). Null where no ticket is minted (MQTT)',
      }),
    ),
    playback_expires_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When playback_url stops being accepted (ISO 8601 UTC); null with it',
      }),
    ),
  },
  { title: 'Recording' },
);

export const AlertSchema = Type.Object(
  {
    id: Id,
    device_id: Id,
    type: Type.Enum([...ALERT_TYPES]),
    message: Type.String(),
    created_at: Timestamp,
    read: Type.Boolean(),
    read_at: NullableTimestamp,
    recording_id: NullableId,
    recording_status: Type.Enum([...RECORDING_STATUSES], {
      description:
        'What became of the clip: none (device_offline), pending (being recorded), recorded, partial (footage of the event is missing), lost (no clip)',
    }),
    recording_status_reason: Nullable(
      Type.String({ description: 'Why footage is missing (partial, lost), else null' }),
    ),
    detections: Detections,
  },
  { title: 'Alert' },
);

export const ControlResultSchema = Type.Object(
  {
    id: Id,
    device_id: Id,
    action: Type.Enum([...CONTROL_ACTIONS, ...PTZ_ACTIONS]),
    status: Type.Enum(['succeeded', 'failed']),
    requested_at: Timestamp,
    completed_at: NullableTimestamp,
    error: NullableString,
  },
  { title: 'ControlResult' },
);
