// Versioned schema changes, applied in order at start; PRAGMA user_version holds the last applied.
// Never edit a released migration: add a new one.

export const MIGRATIONS: readonly string[] = [
  /* 1: devices, recordings, alerts, control requests */ `
  CREATE TABLE devices (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    type             TEXT NOT NULL CHECK (type IN ('camera')),
    status           TEXT NOT NULL CHECK (status IN ('online', 'offline', 'unauthorized')),
    model            TEXT,
    manufacturer     TEXT,
    firmware_version TEXT,
    last_seen_at     INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX devices_newest ON devices (created_at DESC, id DESC);

  CREATE TABLE alerts (
    id           TEXT PRIMARY KEY,
    device_id    TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    type         TEXT NOT NULL CHECK (type IN ('motion', 'human', 'vehicle', 'device_offline')),
    message      TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    read_at      INTEGER,
    recording_id TEXT REFERENCES recordings (id) ON DELETE SET NULL
  ) STRICT;
  CREATE INDEX alerts_newest ON alerts (created_at DESC, id DESC);
  CREATE INDEX alerts_device_newest ON alerts (device_id, created_at DESC, id DESC);
  CREATE INDEX alerts_unread_newest ON alerts (created_at DESC, id DESC) WHERE read_at IS NULL;

  CREATE TABLE recordings (
    id          TEXT PRIMARY KEY,
    device_id   TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    event_type  TEXT NOT NULL CHECK (event_type IN ('motion', 'human', 'vehicle')),
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER NOT NULL CHECK (ended_at >= started_at),
    size_bytes  INTEGER NOT NULL CHECK (size_bytes >= 0),
    file_name   TEXT NOT NULL UNIQUE,
    alert_id    TEXT REFERENCES alerts (id) ON DELETE SET NULL,
    created_at  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX recordings_device_newest ON recordings (device_id, started_at DESC, id DESC);
  CREATE INDEX recordings_alert ON recordings (alert_id);
  CREATE INDEX alerts_recording ON alerts (recording_id);

  CREATE TABLE control_requests (
    id           TEXT PRIMARY KEY,
    device_id    TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    action       TEXT NOT NULL CHECK (action IN ('reboot', 'sync_time')),
    status       TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    requested_at INTEGER NOT NULL,
    completed_at INTEGER,
    error        TEXT
  ) STRICT;
  CREATE INDEX control_requests_device ON control_requests (device_id, requested_at DESC);
  `,
  /* 2: how to reach each camera, and every identity a camera has been seen under */ `
  CREATE TABLE cameras (
    device_id        TEXT PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    onvif_url        TEXT NOT NULL,
    source           TEXT NOT NULL CHECK (source IN ('config', 'discovery')),
    username         TEXT,
    password_sealed  TEXT,
    serial           TEXT,
    main_profile     TEXT,
    main_stream_uri  TEXT,
    sub_profile      TEXT,
    sub_stream_uri   TEXT,
    snapshot_uri     TEXT,
    clock_offset_ms  INTEGER,
    updated_at       INTEGER NOT NULL
  ) STRICT;

  -- A camera is known by its WS-Discovery endpoint reference, its manufacturer and serial, and the
  -- address it was configured with; whichever is seen first names it, all lead back to one device.
  CREATE TABLE device_aliases (
    alias     TEXT PRIMARY KEY,
    device_id TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX device_aliases_device ON device_aliases (device_id);
  `,
  /* 3: the outbox of messages for the cloud, written in the same transaction as each change */ `
  CREATE TABLE outbox (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL CHECK (kind IN ('device', 'alert', 'recording', 'control_result')),
    subject_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX outbox_kind ON outbox (kind, seq);
  CREATE INDEX outbox_subject ON outbox (kind, subject_id);
  `,
  /* 4: the local authorization server's clients and users (managed with the CLI) */ `
  CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    -- SHA-256 of the secret (a random 256-bit value, so no slow hash is needed); NULL: public client.
    secret_hash   TEXT,
    redirect_uris TEXT NOT NULL,
    grant_types   TEXT NOT NULL,
    created_at    INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE local_users (
    username      TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    created_at    INTEGER NOT NULL
  ) STRICT;
  `,
  /* 5: what the local authorization server issued (codes, grants, refresh and access tokens) */ `
  -- One authorization: a user's consent to a client (user set), or a confidential client acting for
  -- itself (user NULL). Revoking it ends every refresh and access token issued under it.
  CREATE TABLE oauth_grants (
    id         TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user       TEXT,
    scope      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT;
  CREATE INDEX oauth_grants_user ON oauth_grants (user);

  -- Codes and refresh tokens are kept as keyed hashes (HMAC-SHA-256 under a key sealed in
  -- data_dir), never as themselves. A code stays after its use, until it expires, so that a
  -- replay is recognised (and revokes what it gave).
  CREATE TABLE oauth_codes (
    code_hash      TEXT PRIMARY KEY,
    client_id      TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    redirect_uri   TEXT NOT NULL,
    user           TEXT NOT NULL,
    scope          TEXT NOT NULL,
    code_challenge TEXT,
    expires_at     INTEGER NOT NULL,
    grant_id       TEXT REFERENCES oauth_grants (id) ON DELETE CASCADE
  ) STRICT;

  CREATE TABLE oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    scope      TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
  ) STRICT;
  CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);

  -- Access tokens issued under a grant, until they expire: the API refuses one whose grant is
  -- revoked or gone. No foreign key on purpose: a deleted client's grants vanish, and its tokens
  -- must then read as revoked, not as unknown.
  CREATE TABLE oauth_access_tokens (
    jti        TEXT PRIMARY KEY,
    grant_id   TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens (grant_id);
  `,
  /* 6: what became of each alert's clip, and the episodes being recorded (crash recovery) */ `
  ALTER TABLE alerts ADD COLUMN recording_status TEXT NOT NULL DEFAULT 'none'
    CHECK (recording_status IN ('none', 'pending', 'recorded', 'partial', 'lost'));
  ALTER TABLE alerts ADD COLUMN recording_status_reason TEXT;
  UPDATE alerts SET
    recording_status = CASE WHEN recording_id IS NOT NULL THEN 'recorded' WHEN type = 'device_offline' THEN 'none' ELSE 'lost' END,
    recording_status_reason = CASE WHEN recording_id IS NULL AND type != 'device_offline'
      THEN 'no clip linked when the gateway began to keep a recording status (lost, or removed by retention)' END;

  -- One row per episode being recorded (its alert), so a restart after a crash knows what was in
  -- flight: written with the alert, once when a part's assembly begins, and removed with the last
  -- part's row. Not per segment: the segments' times live in RAM beside them (index.csv).
  CREATE TABLE open_episodes (
    alert_id        TEXT PRIMARY KEY REFERENCES alerts (id) ON DELETE CASCADE,
    device_id       TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    -- the camera's RAM segment directory of the run that recorded it
    segment_dir     TEXT NOT NULL,
    -- when the machine booted (ms, from the kernel's uptime): another boot means RAM was lost
    boot_at         INTEGER NOT NULL,
    -- start of the footage not yet in a recording
    from_at         INTEGER NOT NULL,
    -- the part being assembled (NULL until its footage is chosen)
    clip_id         TEXT,
    clip_started_at INTEGER,
    clip_ended_at   INTEGER,
    clip_to         INTEGER,
    clip_event_type TEXT CHECK (clip_event_type IN ('motion', 'human', 'vehicle')),
    clip_final      INTEGER,
    updated_at      INTEGER NOT NULL
  ) STRICT;
  `,
  // 7: a device's camera address for the API (an unauthorized camera is told apart from a dead one
  // by its address): the adopted camera's URL, else the configured URL it is known by (a camera never
  // adopted has no camera row). A view, so every device query reads the same row shape.
  `
  CREATE VIEW device_rows AS
    SELECT d.*, COALESCE(
      (SELECT c.onvif_url FROM cameras c WHERE c.device_id = d.id),
      (SELECT substr(a.alias, 5) FROM device_aliases a WHERE a.device_id = d.id AND a.alias LIKE 'url:%' ORDER BY a.alias LIMIT 1)
    ) AS onvif_url FROM devices d;
  `,
  // 8: what the object detector found in an event: JSON [{label, score, box}], on the
  // alert and on each of its recordings.
  `
  ALTER TABLE alerts ADD COLUMN detections TEXT NOT NULL DEFAULT '[]';
  ALTER TABLE recordings ADD COLUMN detections TEXT NOT NULL DEFAULT '[]';
  `,
  // 9: roles of the local accounts, and the gateway's own web app as a client of the
  // local authorization server. Accounts made before roles could be granted every scope: admin.
  // The client is public (no secret); its redirect URIs follow the browser's Host (first-party.ts).
  `
  ALTER TABLE local_users ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('viewer', 'admin'));
  INSERT OR IGNORE INTO oauth_clients (id, name, secret_hash, redirect_uris, grant_types, created_at)
    VALUES ('gateway-web', 'This gateway''s web app', NULL, '[]', '["authorization_code","refresh_token"]', 0);
  `,
  // 10: the API's event stream (GET /v1/events) keeps its recent events here, each written in the
  // transaction of its change, so a client resumes with Last-Event-ID across a restart. seq is the
  // event id: AUTOINCREMENT never hands out an id again, even after the oldest rows are pruned.
  `
  CREATE TABLE event_log (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    type       TEXT NOT NULL CHECK (type IN ('alert.created', 'alert.read', 'device.status', 'recording.created')),
    subject_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX event_log_created ON event_log (created_at);
  `,
  // 11: alert.updated (an alert's other changes: type refined, clip linked, recording settled).
  eventLogOfTypes(['alert.created', 'alert.read', 'alert.updated', 'device.status', 'recording.created']),
  // 12: the index of continuous footage, one row per file on the footage disk (src/store/footage.ts).
  // zero_ms is the wall clock (ms, fractional) of decode time 0 of the file's fragments; fragments is
  // the file's fragment table (src/media/footage/fragment-table.ts). Rows are written in batches.
  `
  CREATE TABLE footage_files (
    id          INTEGER PRIMARY KEY,
    device_id   TEXT NOT NULL,
    profile     TEXT NOT NULL CHECK (profile IN ('main', 'sub')),
    name        TEXT NOT NULL UNIQUE,
    start_ms    INTEGER NOT NULL,
    end_ms      INTEGER NOT NULL CHECK (end_ms >= start_ms),
    zero_ms     REAL NOT NULL,
    bytes       INTEGER NOT NULL CHECK (bytes > 0),
    init_bytes  INTEGER NOT NULL CHECK (init_bytes > 0),
    fragments   BLOB NOT NULL
  ) STRICT;
  CREATE INDEX footage_files_device_start ON footage_files (device_id, start_ms);
  CREATE INDEX footage_files_start ON footage_files (start_ms);
  `,
  // 13: cameras set up from the app (the API's POST, PATCH and DELETE /v1/devices). camera_settings
  // keeps what the owner set, NULL where nothing (the config file's cameras[] entry is the base,
  // read at start: src/domain/camera-settings.ts); the password sealed as cameras' is. A removed
  // device keeps its row (its recordings and alerts stay until their retention) with removed_at,
  // and device_rows no longer shows it. cameras.source gains 'app': made again with its rows (SQLite
  // cannot change a CHECK constraint), the view that reads it dropped and made again around it.
  `
  DROP VIEW device_rows;
  CREATE TABLE cameras_next (
    device_id        TEXT PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    onvif_url        TEXT NOT NULL,
    source           TEXT NOT NULL CHECK (source IN ('config', 'discovery', 'app')),
    username         TEXT,
    password_sealed  TEXT,
    serial           TEXT,
    main_profile     TEXT,
    main_stream_uri  TEXT,
    sub_profile      TEXT,
    sub_stream_uri   TEXT,
    snapshot_uri     TEXT,
    clock_offset_ms  INTEGER,
    updated_at       INTEGER NOT NULL
  ) STRICT;
  INSERT INTO cameras_next SELECT device_id, onvif_url, source, username, password_sealed, serial, main_profile,
    main_stream_uri, sub_profile, sub_stream_uri, snapshot_uri, clock_offset_ms, updated_at FROM cameras;
  DROP TABLE cameras;
  ALTER TABLE cameras_next RENAME TO cameras;

  ALTER TABLE devices ADD COLUMN removed_at INTEGER;

  CREATE TABLE camera_settings (
    device_id        TEXT PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    -- the device service URL of a camera added through the API; NULL for a configured or discovered one
    added_url        TEXT,
    name_set         INTEGER NOT NULL DEFAULT 0 CHECK (name_set IN (0, 1)),
    username         TEXT,
    password_sealed  TEXT,
    enabled          INTEGER CHECK (enabled IN (0, 1)),
    recording        TEXT CHECK (recording IN ('events', 'continuous', 'off')),
    detection        TEXT CHECK (detection IN ('auto', 'on', 'off')),
    -- JSON: [[[x, y], …], …]
    motion_mask      TEXT,
    -- JSON: [{"name", "polygon", "required"}, …]
    zones            TEXT,
    updated_at       INTEGER NOT NULL,
    -- the token subject of the last change
    updated_by       TEXT
  ) STRICT;

  CREATE VIEW device_rows AS
    SELECT d.*, COALESCE(
      c.onvif_url,
      (SELECT substr(a.alias, 5) FROM device_aliases a WHERE a.device_id = d.id AND a.alias LIKE 'url:%' ORDER BY a.alias LIMIT 1)
    ) AS onvif_url,
    c.username AS camera_username, c.password_sealed IS NOT NULL AS camera_has_password,
    s.name_set AS app_name_set, s.username AS app_username, s.password_sealed IS NOT NULL AS app_has_password,
    s.enabled AS app_enabled, s.recording AS app_recording, s.detection AS app_detection,
    s.motion_mask AS app_motion_mask, s.zones AS app_zones
    FROM devices d LEFT JOIN cameras c ON c.device_id = d.id LEFT JOIN camera_settings s ON s.device_id = d.id
    WHERE d.removed_at IS NULL;
  `,
  // 14: what a camera offers of pan, tilt and zoom, as adoption found it and preset changes left
  // it: JSON {"presets": [{"token", "name"}], "canCenter"}, NULL for a fixed camera. Kept with the
  // camera's other findings (stream URIs) so a Device shows it while the camera is offline too; the
  // view is made again to read it.
  `
  DROP VIEW device_rows;
  ALTER TABLE cameras ADD COLUMN ptz TEXT;
  CREATE VIEW device_rows AS
    SELECT d.*, COALESCE(
      c.onvif_url,
      (SELECT substr(a.alias, 5) FROM device_aliases a WHERE a.device_id = d.id AND a.alias LIKE 'url:%' ORDER BY a.alias LIMIT 1)
    ) AS onvif_url,
    c.username AS camera_username, c.password_sealed IS NOT NULL AS camera_has_password, c.ptz AS camera_ptz,
    s.name_set AS app_name_set, s.username AS app_username, s.password_sealed IS NOT NULL AS app_has_password,
    s.enabled AS app_enabled, s.recording AS app_recording, s.detection AS app_detection,
    s.motion_mask AS app_motion_mask, s.zones AS app_zones
    FROM devices d LEFT JOIN cameras c ON c.device_id = d.id LEFT JOIN camera_settings s ON s.device_id = d.id
    WHERE d.removed_at IS NULL;
  `,
  // 15: what the detector remembers having found on each camera (src/detect/object-memory.ts): an
  // object found again in the same place has not moved and makes no alert of its own (a parked car),
  // also after a restart. Replaced as a whole per camera after a check; a removed device's go with it.
  `
  CREATE TABLE remembered_objects (
    device_id     TEXT NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    category      TEXT NOT NULL CHECK (category IN ('human', 'vehicle')),
    -- the box in 0–1 coordinates of the picture where it was first found
    x             REAL NOT NULL,
    y             REAL NOT NULL,
    w             REAL NOT NULL,
    h             REAL NOT NULL,
    first_seen_at INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL,
    -- checks in a row that looked there and did not find it
    misses        INTEGER NOT NULL CHECK (misses >= 0)
  ) STRICT;
  CREATE INDEX remembered_objects_device ON remembered_objects (device_id);
  `,
  // 16: Web Push (src/notify, docs/notifications.md). A subscription is its owner's (the token's
  // sub) and, when a local token made it, its grant's: revoking the grant or removing the account
  // removes it (src/store/oauth.ts). The queue holds at most one push per subscription and camera,
  // written in the transaction of the alert that asks for it: a newer alert replaces the waiting one
  // (version tells a send which of them it settles).
  `
  CREATE TABLE push_subscriptions (
    id          TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    grant_id    TEXT,
    endpoint    TEXT NOT NULL,
    p256dh      TEXT NOT NULL,
    auth        TEXT NOT NULL,
    -- JSON array of device ids; NULL: every camera
    devices     TEXT,
    -- JSON array of alert types
    types       TEXT NOT NULL,
    -- minutes of the day, local time of the gateway; both NULL: no quiet hours
    quiet_start INTEGER CHECK (quiet_start BETWEEN 0 AND 1439),
    quiet_end   INTEGER CHECK (quiet_end BETWEEN 0 AND 1439),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (owner, endpoint)
  ) STRICT;
  CREATE INDEX push_subscriptions_grant ON push_subscriptions (grant_id) WHERE grant_id IS NOT NULL;

  CREATE TABLE push_queue (
    subscription_id TEXT NOT NULL REFERENCES push_subscriptions (id) ON DELETE CASCADE,
    device_id       TEXT NOT NULL,
    alert_id        TEXT NOT NULL,
    version         INTEGER NOT NULL,
    queued_at       INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, device_id)
  ) STRICT, WITHOUT ROWID;
  `,
  // 17: device.updated (a device's record changed apart from its status: its settings, a name or
  // firmware learned) and device.removed.
  eventLogOfTypes([
    'alert.created',
    'alert.read',
    'alert.updated',
    'device.status',
    'device.updated',
    'device.removed',
    'recording.created',
  ]),
];

/**
 * The event log made again allowing these types: SQLite cannot change a CHECK constraint, so the
 * table is made anew with its rows, and the AUTOINCREMENT counter carried over, so no id is ever
 * handed out twice (also when every row had been pruned).
 */
function eventLogOfTypes(types: readonly string[]): string {
  const list = types.map((t) => `'${t}'`).join(', ');
  return `
  CREATE TABLE event_log_next (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    type       TEXT NOT NULL CHECK (type IN (${list})),
    subject_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  INSERT INTO event_log_next (seq, type, subject_id, body, created_at) SELECT seq, type, subject_id, body, created_at FROM event_log;
  DELETE FROM sqlite_sequence WHERE name = 'event_log_next';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'event_log_next', seq FROM sqlite_sequence WHERE name = 'event_log';
  DROP TABLE event_log;
  ALTER TABLE event_log_next RENAME TO event_log;
  CREATE INDEX event_log_created ON event_log (created_at);
  `;
}
