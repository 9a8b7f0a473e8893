import Type, { type Static } from 'typebox';
import { DEFAULT_PUSH_HOSTS } from '../domain/push-hosts.js';

// The config file's shape. Key names are a contract with outside tools: rename nothing.
// Every object has a default of {} so a partial file gets the rest from the defaults here;
// config/default.yaml documents the same values with comments.

const Section = <T extends Parameters<typeof Type.Object>[0]>(properties: T) =>
  Type.Object(properties, { additionalProperties: false, default: {} });

const NullableString = (opts: { default?: string | null; minLength?: number; pattern?: string } = {}) =>
  Type.Union(
    [Type.Null(), Type.String({ minLength: opts.minLength ?? 1, ...(opts.pattern ? { pattern: opts.pattern } : {}) })],
    { default: opts.default ?? null },
  );

const Seconds = (def: number, min = 1, max = 31_536_000) => Type.Integer({ minimum: min, maximum: max, default: def });

// 0 asks the OS for a free port (tests); the bound port is logged.
const Port = (def: number) => Type.Integer({ minimum: 0, maximum: 65535, default: def });

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const Issuer = Type.Object(
  {
    issuer: Type.String({ minLength: 1 }),
    jwks_uri: Type.String({ minLength: 1 }),
    audience: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

const OnOffAuto = Type.Enum(['auto', 'on', 'off'], { default: 'auto' });
const Fraction = Type.Number({ minimum: 0, maximum: 1 });
// [x, y] corners in 0–1 coordinates of the picture; checked further (area, crossing edges) in load.ts.
const Polygon = Type.Array(Type.Tuple([Fraction, Fraction]), { minItems: 3, maxItems: 64 });

// The keys a camera's owner can also set in the app (detection, motion_mask, zones and
// required_zones, continuous) have no default here: a key the file leaves out is the app's to set
// (src/domain/camera-settings.ts), and the defaults are applied there, for both.
const Camera = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    onvif_url: Type.String({ minLength: 1 }),
    username: NullableString(),
    password: NullableString({ minLength: 0 }),
    detection: Type.Optional(Type.Enum(['auto', 'on', 'off'])),
    motion_mask: Type.Optional(Type.Array(Polygon, { maxItems: 32 })),
    zones: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), Polygon)),
    required_zones: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 32 })),
    // Zone names, as required_zones: a zone's alert_on_stationary and loitering_s of the app's zones.
    alert_on_stationary_zones: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 32 })),
    loitering_zones: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), Type.Integer({ minimum: 1, maximum: 3600 })),
    ),
    // recording.continuous for this camera: off keeps none of its footage; null profile: the global one.
    continuous: Type.Optional(Type.Enum(['on', 'off'])),
    continuous_profile: Type.Union([Type.Null(), Type.Enum(['sub', 'main'])], { default: null }),
  },
  { additionalProperties: false },
);

const Credential = Type.Object(
  { username: Type.String({ minLength: 1 }), password: Type.String() },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    gateway: Section({
      data_dir: Type.String({ minLength: 1, default: './data' }),
      id: Type.Union([Type.Null(), Type.String({ pattern: '^[A-Za-z0-9_-]{4,64}$' })], { default: null }),
    }),
    api: Section({
      host: Type.String({ minLength: 1, default: '0.0.0.0' }),
      port: Port(8443),
      public_host: NullableString(),
      body_limit_bytes: Type.Integer({ minimum: 1024, maximum: 10_485_760, default: 65_536 }),
      request_timeout_s: Type.Integer({ minimum: 1, maximum: 300, default: 30 }),
      idle_timeout_s: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
      max_connections_per_address: Type.Integer({ minimum: 1, maximum: 10_000, default: 64 }),
      tls: Section({
        cert_file: NullableString(),
        key_file: NullableString(),
      }),
    }),
    auth: Section({
      issuers: Type.Array(Issuer, { default: [] }),
      require_at_jwt: Type.Boolean({ default: true }),
      clock_tolerance_s: Type.Integer({ minimum: 0, maximum: 60, default: 30 }),
      jwks_max_stale_s: Seconds(604_800, 60),
      jwks_refresh_s: Seconds(3600, 30),
      jwks_cooldown_s: Seconds(30, 1, 3600),
      local: Section({
        enabled: Type.Boolean({ default: true }),
        issuer: NullableString(),
        audience: Type.String({ minLength: 1, default: 'edge-gateway' }),
        access_ttl_s: Seconds(3600, 60, 86_400),
        refresh_ttl_s: Seconds(2_592_000, 60),
        key_rotation_days: Type.Integer({ minimum: 1, maximum: 3650, default: 90 }),
      }),
    }),
    rtsp: Section({
      host: Type.String({ minLength: 1, default: '0.0.0.0' }),
      port: Port(8554),
      udp_port: Type.Integer({ minimum: 0, maximum: 65_534, default: 8000 }),
      public_host: NullableString(),
      ticket_ttl_s: Seconds(300, 10, 86_400),
      max_session_s: Seconds(3600, 10, 604_800),
      idle_close_s: Seconds(10, 0, 3600),
      max_connections_per_address: Type.Integer({ minimum: 1, maximum: 10_000, default: 16 }),
    }),
    hls: Section({
      max_muxers: Type.Integer({ minimum: 1, maximum: 256, default: 16 }),
      max_sessions: Type.Integer({ minimum: 1, maximum: 10_000, default: 64 }),
      max_blocked_requests: Type.Integer({ minimum: 1, maximum: 10_000, default: 128 }),
      part_target_ms: Type.Integer({ minimum: 100, maximum: 2000, default: 300 }),
      target_duration_s: Seconds(4, 1, 30),
      max_bytes_per_muxer: Type.Integer({ minimum: 1_048_576, maximum: 1_073_741_824, default: 16_777_216 }),
      idle_close_s: Seconds(15, 2, 3600),
    }),
    webrtc: Section({
      enabled: Type.Boolean({ default: true }),
      max_sessions: Type.Integer({ minimum: 1, maximum: 1000, default: 32 }),
      max_sessions_per_address: Type.Integer({ minimum: 1, maximum: 1000, default: 8 }),
      bind_address: NullableString(),
      ice_servers: Type.Array(Type.String({ pattern: '^(stun|turns?):' }), { maxItems: 8, default: [] }),
      udp_port_min: Type.Integer({ minimum: 0, maximum: 65_535, default: 0 }),
      udp_port_max: Type.Integer({ minimum: 0, maximum: 65_535, default: 0 }),
      connect_timeout_s: Seconds(10, 2, 120),
      nack_buffer_packets: Type.Integer({ minimum: 16, maximum: 4096, default: 512 }),
      audio_transcode: Type.Boolean({ default: false }),
      max_audio_transcoders: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
    }),
    cameras: Type.Array(Camera, { default: [] }),
    onvif: Section({
      discovery: Section({
        enabled: Type.Boolean({ default: true }),
        interval_s: Seconds(300, 10, 86_400),
        interfaces: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        unicast_targets: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
      }),
      credentials: Type.Array(Credential, { default: [] }),
      health_interval_s: Seconds(30, 1, 3600),
      max_backoff_s: Seconds(60, 1, 3600),
    }),
    recording: Section({
      storage_dir: NullableString(),
      segment_dir: NullableString(),
      pre_roll_s: Seconds(5, 0, 60),
      post_roll_s: Seconds(10, 0, 600),
      max_clip_s: Seconds(300, 10, 3600),
      retention: Section({
        max_age_days: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
        max_bytes: Type.Union([Type.Null(), Type.Integer({ minimum: 1 })], { default: null }),
        min_free_bytes: Type.Integer({ minimum: 0, default: 1_073_741_824 }),
      }),
      motion: Section({
        mode: Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')], { default: 'auto' }),
        threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.02 }),
        fps: Type.Number({ minimum: 0.2, maximum: 2, default: 2 }),
      }),
      playback_ttl_s: Seconds(900, 10, 86_400),
      continuous: Section({
        enabled: Type.Boolean({ default: false }),
        storage_dir: NullableString(),
        profile: Type.Enum(['sub', 'main'], { default: 'sub' }),
        retain_days: Type.Integer({ minimum: 1, maximum: 3650, default: 7 }),
        max_bytes: Type.Union([Type.Null(), Type.Integer({ minimum: 1 })], { default: null }),
        min_free_bytes: Type.Integer({ minimum: 0, default: 2_147_483_648 }),
        file_s: Seconds(60, 10, 600),
        flush_s: Seconds(60, 1, 3600),
        max_pending_bytes: Type.Integer({ minimum: 1_048_576, maximum: 268_435_456, default: 16_777_216 }),
        allow_on_system_disk: Type.Boolean({ default: false }),
      }),
    }),
    detection: Section({
      mode: OnOffAuto,
      min_score: Type.Number({ minimum: 0, maximum: 1, default: 0.35 }),
      threshold: Type.Number({ minimum: 0, maximum: 1, default: 0.45 }),
      unconfirmed: Type.Enum(['keep', 'drop'], { default: 'keep' }),
      // Boxes of one kind overlapping at least this much are the same object, not moved; null: off.
      stationary_iou: Type.Union([Type.Null(), Type.Number({ minimum: 0.1, maximum: 1 })], { default: 0.6 }),
      labels: Section({
        human: Type.Array(Type.String({ minLength: 1 }), { default: ['person'] }),
        vehicle: Type.Array(Type.String({ minLength: 1 }), {
          default: ['car', 'truck', 'bus', 'motorcycle', 'bicycle'],
        }),
      }),
      threads: Type.Integer({ minimum: 1, maximum: 16, default: 1 }),
      queue_size: Type.Integer({ minimum: 1, maximum: 1000, default: 16 }),
      max_wait_s: Type.Integer({ minimum: 1, maximum: 60, default: 10 }),
      model_dir: NullableString(),
    }),
    sync: Section({
      mqtt: Section({
        url: NullableString({ pattern: '^mqtts?://' }),
        topic_prefix: Type.String({ minLength: 1, pattern: '^[^#+]+$', default: 'edge-gateway' }),
        username: NullableString(),
        password: NullableString({ minLength: 0 }),
        ca_file: NullableString(),
        cert_file: NullableString(),
        key_file: NullableString(),
        home_assistant: Type.Boolean({ default: false }),
        home_assistant_prefix: Type.String({ minLength: 1, pattern: '^[^#+]+$', default: 'homeassistant' }),
      }),
      outbox: Section({
        max_rows: Type.Integer({ minimum: 100, maximum: 10_000_000, default: 100_000 }),
      }),
    }),
    ffmpeg: Section({
      path: Type.String({ minLength: 1, default: 'ffmpeg' }),
    }),
    metrics: Section({
      // host:port of the plain-HTTP Prometheus listener (src/config/listen.ts); null: none.
      listen: NullableString({ default: '127.0.0.1:9464' }),
    }),
    log: Section({
      level: Type.Enum([...LOG_LEVELS], { default: 'info' }),
    }),
    events: Section({
      max_subscribers: Type.Integer({ minimum: 1, maximum: 10_000, default: 64 }),
      heartbeat_s: Seconds(15, 1, 300),
      max_queue_bytes: Type.Integer({ minimum: 16_384, maximum: 16_777_216, default: 262_144 }),
      revocation_check_ms: Type.Integer({ minimum: 100, maximum: 60_000, default: 1000 }),
      window_max_events: Type.Integer({ minimum: 100, maximum: 1_000_000, default: 10_000 }),
      window_max_age_s: Seconds(86_400, 60, 2_592_000),
    }),
    notifications: Section({
      enabled: Type.Boolean({ default: true }),
      cooldown_s: Seconds(30, 0, 86_400),
      ttl_s: Seconds(3600, 1, 86_400),
      // host, host:port or *.domain[:port] (src/domain/push-hosts.ts; checked further in load.ts).
      push_hosts: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
        maxItems: 64,
        default: [...DEFAULT_PUSH_HOSTS],
      }),
      ca_file: NullableString(),
      vapid_subject: Type.String({ pattern: '^(mailto:|https://)\\S+$', default: 'mailto:owner@edge-gateway.invalid' }),
      request_timeout_s: Seconds(10, 1, 60),
      max_subscriptions_per_user: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
      max_subscriptions: Type.Integer({ minimum: 1, maximum: 100_000, default: 500 }),
    }),
    snapshot: Section({
      max_concurrent_decodes: Type.Integer({ minimum: 1, maximum: 16, default: 2 }),
      max_queued_decodes: Type.Integer({ minimum: 0, maximum: 1000, default: 32 }),
      decode_timeout_ms: Type.Integer({ minimum: 500, maximum: 60_000, default: 5000 }),
      cache_ms: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
      keyframe_wait_ms: Type.Integer({ minimum: 0, maximum: 30_000, default: 4000 }),
      camera_timeout_ms: Type.Integer({ minimum: 500, maximum: 60_000, default: 5000 }),
      sub_max_width: Type.Integer({ minimum: 0, maximum: 3840, default: 352 }),
      batch_window_ms: Type.Integer({ minimum: 0, maximum: 1000, default: 50 }),
      max_decoders: Type.Integer({ minimum: 0, maximum: 16, default: 4 }),
      decoder_idle_s: Seconds(60, 5, 3600),
    }),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type IssuerConfig = Static<typeof Issuer>;
