import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { DATABASE_FILE, Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

// The event stream's log: an event per change the API's stream tells of, written in the change's
// transaction, kept within a window by count and age, with ids never issued twice (restarts included).

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(
  dir = tempDir('eg-events-'),
  limits = { maxEvents: 1000, maxAgeMs: 86_400_000 },
): { store: Store; dir: string } {
  if (!dirs.includes(dir)) dirs.push(dir);
  const store = Store.open(dir);
  stores.push(store);
  store.enableEventLog(limits);
  return { store, dir };
}

const device = (id: string, status: 'online' | 'offline' = 'online', lastSeenAt = Date.now()) =>
  ({
    id,
    name: `Cam ${id}`,
    type: 'camera',
    status,
    model: 'M',
    manufacturer: 'V',
    firmwareVersion: '1',
    lastSeenAt,
  }) as const;
const alert = (id: string, createdAt = Date.now()) =>
  ({ id, deviceId: 'cam1', type: 'motion', message: 'Motion', createdAt }) as const;
const listed = (s: Store) => s.eventsAfter(0, 1e6).map((e) => `${e.seq} ${e.type} ${e.record.id}`);

/** A database in `dir` migrated up to `version`, then `sql` run on it (as an older gateway left it). */
function migratedTo(dir: string, version: number, sql: string): void {
  dirs.push(dir);
  const raw = new Database(path.join(dir, DATABASE_FILE));
  for (const m of MIGRATIONS.slice(0, version)) raw.exec(m);
  raw.pragma(`user_version = ${version}`);
  raw.exec(sql);
  raw.close();
}

describe('event log', () => {
  it('keeps nothing until the gateway enables it', () => {
    const dir = tempDir('eg-events-');
    dirs.push(dir);
    const store = Store.open(dir);
    stores.push(store);
    store.upsertDevice(device('cam1'));
    expect(store.eventsAfter(0, 10)).toEqual([]);
    expect(store.eventWindow()).toEqual({ after: 0, latest: 0 });
  });

  it('writes each kind of change with the record as it was then, and nothing for other changes', () => {
    const { store } = open();
    const now = Date.now();
    store.upsertDevice(device('cam1', 'online', now)); // new: device.status
    store.upsertDevice({ ...device('cam1', 'online', now), name: 'Renamed' }); // same status, another name: device.updated
    store.insertAlert(alert('alr1', now));
    store.setAlertType('alr1', 'human', 'Person', now); // refined: alert.updated
    store.saveRecording(
      {
        id: 'rec1',
        deviceId: 'cam1',
        eventType: 'human',
        startedAt: now - 10,
        endedAt: now,
        sizeBytes: 100,
        fileName: 'cam1/rec1.mp4',
        alertId: 'alr1',
      },
      now,
    ); // and its alert's clip linked
    store.markAlertRead('alr1', now + 1);
    store.markAlertRead('alr1', now + 2); // already read: none
    store.setDeviceStatus('cam1', 'online', now + 3); // unchanged: none
    store.setDeviceStatus('cam1', 'offline', now + 4, {
      id: 'alr2',
      deviceId: 'cam1',
      type: 'device_offline',
      message: 'Renamed went offline',
      createdAt: now + 4,
    });
    expect(listed(store)).toEqual([
      '1 device.status cam1',
      '2 device.updated cam1',
      '3 alert.created alr1',
      '4 alert.updated alr1',
      '5 recording.created rec1',
      '6 alert.updated alr1',
      '7 alert.read alr1',
      '8 alert.created alr2',
      '9 device.status cam1',
    ]);
    const events = store.eventsAfter(0, 100);
    expect(events[2]).toMatchObject({ type: 'alert.created', record: { id: 'alr1', type: 'motion', readAt: null } });
    expect(events[3]).toMatchObject({
      type: 'alert.updated',
      record: { id: 'alr1', type: 'human', message: 'Person', recordingId: null },
    });
    expect(events[5]).toMatchObject({
      type: 'alert.updated',
      record: { id: 'alr1', type: 'human', recordingId: 'rec1', readAt: null },
    });
    expect(events[6]).toMatchObject({
      type: 'alert.read',
      record: { id: 'alr1', type: 'human', readAt: now + 1, recordingId: 'rec1' },
    });
    expect(events[8]).toMatchObject({
      type: 'device.status',
      createdAt: now + 4,
      record: { id: 'cam1', name: 'Renamed', status: 'offline' },
    });
    expect(events[1]).toMatchObject({
      type: 'device.updated',
      record: { id: 'cam1', name: 'Renamed', status: 'online' },
    });
    expect(store.eventsAfter(7, 1).map((e) => e.seq)).toEqual([8]);
    expect(store.eventWindow()).toEqual({ after: 0, latest: 9 });
  });

  it("tells of a camera's settings changed, of its removal and of its return, each with the record", () => {
    const { store } = open();
    const now = Date.now();
    const camera = {
      id: 'dev_a',
      name: 'Porch',
      nameSet: true,
      onvifUrl: 'http://192.168.1.20/onvif/device_service',
      aliases: [],
      username: 'admin',
      passwordSealed: null,
    };
    store.addCamera(camera, 'alice', now);
    store.changeCameraSettings('dev_a', { name: 'Front door', detection: 'off' }, 'alice', now + 1);
    store.upsertDevice({ ...device('dev_a', 'offline', now), name: 'Front door' }, now + 2); // its model learned
    store.upsertDevice({ ...device('dev_a', 'offline', now), name: 'Front door' }, now + 2); // nothing new: none
    store.removeDevice('dev_a', now + 3);
    store.addCamera(camera, 'bob', now + 4);
    // Added: its status, then the record once whole (the camera's stream addresses written after
    // the device's row); so again when it comes back, the last event of each being the whole record.
    expect(listed(store)).toEqual([
      '1 device.status dev_a',
      '2 device.updated dev_a',
      '3 device.updated dev_a',
      '4 device.updated dev_a',
      '5 device.removed dev_a',
      '6 device.updated dev_a',
      '7 device.updated dev_a',
    ]);
    const events = store.eventsAfter(0, 100);
    expect(events[2]).toMatchObject({ record: { name: 'Front door', settings: { detection: 'off' } } });
    expect(events[3]).toMatchObject({ record: { model: 'M', settings: { detection: 'off' } } });
    expect(events[4]).toMatchObject({ type: 'device.removed', createdAt: now + 3, record: { name: 'Front door' } });
    expect(events[6]).toEqual(expect.objectContaining({ record: store.getDevice('dev_a') }));
    expect(events[6]).toMatchObject({ record: { name: 'Porch', settings: { detection: 'auto' } } });
  });

  it('migration 17 keeps the events and the last id issued', () => {
    const dir = tempDir('eg-events-mig-');
    migratedTo(
      dir,
      16,
      `INSERT INTO event_log (type, subject_id, body, created_at) VALUES ('alert.read', 'a', '{"id":"a"}', ${Date.now()}), ('device.status', 'b', '{"id":"b"}', ${Date.now()});
      DELETE FROM event_log WHERE seq < 2;`,
    );
    const { store } = open(dir);
    expect(store.eventWindow()).toEqual({ after: 1, latest: 2 });
    store.upsertDevice(device('b'));
    store.removeDevice('b');
    expect(listed(store)).toEqual(['2 device.status b', '3 device.status b', '4 device.removed b']);
  });

  it('migration 11 keeps the events and the last id issued, also when every event had been pruned', () => {
    const dir = tempDir('eg-events-mig-');
    migratedTo(
      dir,
      10,
      `INSERT INTO event_log (type, subject_id, body, created_at) VALUES ('alert.read', 'a', '{"id":"a"}', ${Date.now()}), ('alert.read', 'b', '{"id":"b"}', ${Date.now()}), ('alert.read', 'c', '{"id":"c"}', ${Date.now()});
      DELETE FROM event_log WHERE seq < 3;`,
    );
    const { store } = open(dir);
    expect(store.eventWindow()).toEqual({ after: 2, latest: 3 });
    store.upsertDevice(device('cam1'));
    expect(listed(store)).toEqual(['3 alert.read c', '4 device.status cam1']);
    stores.splice(0).forEach((s) => s.close());

    const empty = tempDir('eg-events-mig-');
    migratedTo(
      empty,
      10,
      `INSERT INTO event_log (type, subject_id, body, created_at) VALUES ('alert.read', 'a', '{}', 1), ('alert.read', 'b', '{}', 1); DELETE FROM event_log;`,
    );
    const again = open(empty).store;
    expect(again.eventWindow().latest).toBe(2);
    again.upsertDevice(device('cam1'));
    expect(listed(again)).toEqual(['3 device.status cam1']);
  });

  it('writes no event for a change that rolled back', () => {
    const { store } = open();
    store.upsertDevice(device('cam1'));
    expect(() =>
      store.transaction(() => {
        store.insertAlert(alert('alr1'));
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    store.insertAlert(alert('alr2'));
    expect(listed(store)).toEqual(['1 device.status cam1', '2 alert.created alr2']);
  });

  it('keeps the newest maxEvents, and says from which id a resumption loses nothing', () => {
    const { store } = open(undefined, { maxEvents: 3, maxAgeMs: 86_400_000 });
    store.upsertDevice(device('cam1'));
    for (let i = 1; i <= 5; i++) store.insertAlert(alert(`alr${i}`));
    expect(listed(store)).toEqual(['4 alert.created alr3', '5 alert.created alr4', '6 alert.created alr5']);
    expect(store.eventWindow()).toEqual({ after: 3, latest: 6 });
  });

  it('drops events older than maxAgeMs, also when the gateway starts again', () => {
    const dir = tempDir('eg-events-');
    const { store } = open(dir, { maxEvents: 1000, maxAgeMs: 60_000 });
    store.upsertDevice(device('cam1'), Date.now() - 200_000);
    store.insertAlert(alert('old', Date.now() - 61_000)); // its own append prunes the older device event
    expect(listed(store)).toEqual(['2 alert.created old']);
    store.insertAlert(alert('new'));
    expect(listed(store)).toEqual(['3 alert.created new']);
    store.close();
    // Days later: nothing is left, and the next id is still a new one.
    const again = open(dir, { maxEvents: 1000, maxAgeMs: 0 }).store;
    expect(listed(again)).toEqual([]);
    expect(again.eventWindow()).toEqual({ after: 3, latest: 3 });
    again.enableEventLog({ maxEvents: 1000, maxAgeMs: 60_000 });
    again.insertAlert(alert('after-restart'));
    expect(listed(again)).toEqual(['4 alert.created after-restart']);
    expect(again.eventWindow()).toEqual({ after: 3, latest: 4 });
  });
});
