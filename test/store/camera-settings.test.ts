import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { aliasOf } from '../../src/domain/device-alias.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { DATABASE_FILE, Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

// What the owner sets for a camera through the API, kept in camera_settings (migration 13), read
// into each Device's settings over the config file's base; cameras added and devices removed.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function open(): { store: Store; dir: string } {
  const dir = tempDir('eg-settings-');
  dirs.push(dir);
  const store = Store.open(dir);
  store.enableOutbox(1000);
  return { store, dir };
}
const URL_A = 'http://192.168.1.20/onvif/device_service';
const added = (id = 'dev_a', url = URL_A) => ({
  id,
  name: 'Porch',
  nameSet: true,
  onvifUrl: url,
  aliases: [aliasOf.url(url)],
  username: 'admin',
  passwordSealed: 'v1.sealed-not-really',
});
const square = [
  [0, 0],
  [0.5, 0],
  [0.5, 0.5],
] as [number, number][];
const deviceMessages = (store: Store) =>
  store
    .outboxBatch(0, 1000)
    .filter((m) => m.kind === 'device')
    .map((m) => JSON.parse(m.body) as Record<string, unknown> | null);

describe('camera settings in the store', () => {
  it('adds a camera offline with the app as the source of its name and account, password never in a message', () => {
    const { store } = open();
    const device = store.addCamera(added(), 'alice', 1000);
    expect(device).toMatchObject({ id: 'dev_a', name: 'Porch', status: 'offline', address: '192.168.1.20' });
    expect(device.settings).toMatchObject({ username: 'admin', hasPassword: true, enabled: true, recording: 'events' });
    expect(device.settings.source).toMatchObject({ name: 'app', account: 'app', enabled: 'default' });
    expect(store.addedCameras()).toEqual([{ deviceId: 'dev_a', onvifUrl: URL_A }]);
    expect(store.cameraSettings('dev_a')).toEqual({
      deviceId: 'dev_a',
      addedUrl: URL_A,
      username: 'admin',
      passwordSealed: 'v1.sealed-not-really',
      enabled: null,
    });
    expect(store.findDeviceByAlias([aliasOf.url(URL_A)])).toBe('dev_a');
    const messages = store.outboxBatch(0, 100).map((m) => m.body);
    expect(messages.join('\n')).not.toContain('sealed-not-really');
    expect(deviceMessages(store).at(-1)).toMatchObject({
      id: 'dev_a',
      settings: { username: 'admin', hasPassword: true },
    });
  });

  it('changes only the fields given, keeps the rest, and writes the device to the outbox', () => {
    const { store } = open();
    store.addCamera(added(), 'alice');
    store.changeCameraSettings('dev_a', { detection: 'on', motionMask: [square] }, 'alice');
    const after = store.changeCameraSettings(
      'dev_a',
      { recording: 'off', zones: [{ name: 'porch', polygon: square, required: true }], name: 'Back' },
      'bob',
    );
    expect(after?.name).toBe('Back');
    expect(after?.settings).toMatchObject({
      detection: 'on',
      recording: 'off',
      motionMask: [square],
      zones: [{ name: 'porch', polygon: square, required: true }],
      username: 'admin',
      hasPassword: true,
    });
    expect(store.getDevice('dev_a')).toEqual(after);
    expect(deviceMessages(store).at(-1)).toMatchObject({ name: 'Back', settings: { recording: 'off' } });
    // An account of an empty password: no password kept.
    store.changeCameraSettings('dev_a', { account: { username: 'viewer', passwordSealed: null } }, 'bob');
    expect(store.getDevice('dev_a')?.settings).toMatchObject({ username: 'viewer', hasPassword: false });
    expect(store.changeCameraSettings('dev_nope', { enabled: false }, 'bob')).toBeNull();
  });

  it("reads the config file's settings as the base: file fields are the file's, the app's fill the rest", () => {
    const { store } = open();
    store.setSettingsBase({
      fileFor: (url) => (url === URL_A ? { account: { username: 'root', hasPassword: true }, detection: 'off' } : null),
      defaults: { recording: 'continuous' },
    });
    store.addCamera(added(), 'alice');
    store.changeCameraSettings('dev_a', { detection: 'on', enabled: false }, 'alice');
    const s = store.getDevice('dev_a')?.settings;
    expect(s).toMatchObject({ detection: 'off', enabled: false, username: 'root', recording: 'continuous' });
    expect(s?.source).toMatchObject({ name: 'file', detection: 'file', account: 'file', enabled: 'app' });
    expect(store.listDevices({ limit: 10, after: null }).items[0]?.settings).toEqual(s);
  });

  it('removes a device: not listed, settings and account forgotten, its recordings kept, an empty message for the cloud', () => {
    const { store } = open();
    store.addCamera(added(), 'alice');
    store.upsertCamera({
      deviceId: 'dev_a',
      onvifUrl: URL_A,
      source: 'app',
      username: 'admin',
      passwordSealed: 'v1.x',
      serial: null,
      mainProfile: null,
      mainStreamUri: null,
      subProfile: null,
      subStreamUri: null,
      snapshotUri: null,
      clockOffsetMs: null,
      ptz: null,
    });
    store.insertRecording({
      id: 'rec_1',
      deviceId: 'dev_a',
      eventType: 'motion',
      startedAt: 1,
      endedAt: 2,
      sizeBytes: 3,
      fileName: 'a.mp4',
      alertId: null,
    });
    expect(store.removeDevice('dev_a', 5000)).toBe(true);
    expect(store.getDevice('dev_a')).toBeNull();
    expect(store.listDevices({ limit: 10, after: null }).items).toEqual([]);
    expect(store.isDeviceRemoved('dev_a')).toBe(true);
    expect(store.cameraSettings('dev_a')).toBeNull();
    expect(store.addedCameras()).toEqual([]);
    expect(store.getCamera('dev_a')).toMatchObject({ username: null, passwordSealed: null, onvifUrl: URL_A });
    expect(store.getRecording('rec_1')?.deviceId).toBe('dev_a');
    expect(deviceMessages(store).at(-1)).toBeNull();
    expect(store.removeDevice('dev_a')).toBe(false);

    // Added again: the same id, listed, its recordings with it, settings afresh.
    const back = store.addCamera({ ...added(), name: 'Porch again' }, 'alice');
    expect(back).toMatchObject({ id: 'dev_a', name: 'Porch again', status: 'offline' });
    expect(store.isDeviceRemoved('dev_a')).toBe(false);
    expect(store.listDevices({ limit: 10, after: null }).items.map((d) => d.id)).toEqual(['dev_a']);
  });

  it('migrates a database of schema 12: cameras and devices kept, settings empty', () => {
    const old = tempDir('eg-settings-old-');
    dirs.push(old);
    const raw = new Database(path.join(old, DATABASE_FILE));
    for (const m of MIGRATIONS.slice(0, 12)) raw.exec(m);
    raw.pragma('user_version = 12');
    raw.exec(`INSERT INTO devices VALUES ('dev_x', 'Gate', 'camera', 'online', 'M', 'V', '1', 5, 1, 1);
      INSERT INTO cameras (device_id, onvif_url, source, username, password_sealed, updated_at)
        VALUES ('dev_x', 'http://10.0.0.9/onvif/device_service', 'discovery', 'admin', 'v1.s', 1);`);
    raw.close();
    const store = Store.open(old);
    expect(store.schemaVersion).toBe(MIGRATIONS.length);
    expect(store.getDevice('dev_x')).toMatchObject({
      name: 'Gate',
      address: '10.0.0.9',
      settings: { username: 'admin', hasPassword: true, source: { account: 'default', name: 'default' } },
    });
    expect(store.getCamera('dev_x')).toMatchObject({ source: 'discovery', passwordSealed: 'v1.s' });
    store.close();
  });
});
