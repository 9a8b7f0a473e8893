import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { DATABASE_FILE, Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { onlineCamera } from '../support/devices.js';

// The recorder's journal of episodes being recorded (open_episodes) and the alert's recording
// status: every change of status reaches the outbox in the same transaction.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function open(): { store: Store; dir: string } {
  const dir = tempDir('eg-episodes-');
  dirs.push(dir);
  const store = Store.open(dir);
  store.enableOutbox(1000);
  store.upsertDevice({ ...onlineCamera('c1'), createdAt: 1 });
  return { store, dir };
}
const alert = (id: string) => ({ id, deviceId: 'c1', type: 'human' as const, message: 'Person', createdAt: 100 });
const episode = { segmentDir: '/run/x/c1', bootAt: 5, fromAt: 90 };
const clip = (id: string, final: boolean) => ({
  id,
  startedAt: 89,
  endedAt: 150,
  to: 150,
  eventType: 'human' as const,
  final,
});
const rec = (id: string, startedAt = 89) => ({
  id,
  deviceId: 'c1',
  eventType: 'human' as const,
  startedAt,
  endedAt: startedAt + 60,
  sizeBytes: 10,
  fileName: `c1/${id}.mp4`,
  alertId: 'a1',
});
/** The alert messages in the outbox, as the cloud will get them. */
const alertMessages = (store: Store) =>
  store
    .outboxBatch(0, 100)
    .filter((m) => m.kind === 'alert')
    .map(
      (m) =>
        JSON.parse(m.body) as {
          recordingStatus: string;
          recordingStatusReason: string | null;
          recordingId: string | null;
        },
    );

describe('open episodes and recording status', () => {
  it('journals an episode with its alert, its clip when assembly begins, and forgets it with the last part', () => {
    const { store } = open();
    expect(store.openEpisode(alert('a1'), episode)).toMatchObject({
      recordingStatus: 'pending',
      recordingStatusReason: null,
    });
    expect(store.listOpenEpisodes()).toEqual([{ alertId: 'a1', deviceId: 'c1', ...episode, clip: null }]);
    store.beginClip('a1', clip('r1', false));
    expect(store.listOpenEpisodes()[0]?.clip).toEqual(clip('r1', false));
    // A part that is not the last moves the episode on; the alert stays pending.
    store.saveRecording(rec('r1'), 200, { final: false, nextFrom: 150 });
    expect(store.listOpenEpisodes()).toEqual([{ alertId: 'a1', deviceId: 'c1', ...episode, fromAt: 150, clip: null }]);
    expect(store.getAlert('a1')).toMatchObject({ recordingId: 'r1', recordingStatus: 'pending' });
    store.beginClip('a1', { ...clip('r2', true), startedAt: 150, endedAt: 180, to: 180 });
    store.saveRecording(rec('r2', 150), 300, { final: true, nextFrom: 180 });
    expect(store.listOpenEpisodes()).toEqual([]);
    expect(store.getAlert('a1')).toMatchObject({
      recordingId: 'r1',
      recordingStatus: 'recorded',
      recordingStatusReason: null,
    });
    expect(alertMessages(store).map((m) => [m.recordingStatus, m.recordingId])).toEqual([
      ['pending', null],
      ['pending', 'r1'],
      ['recorded', 'r1'],
    ]);
    store.close();
  });

  it('keeps what the detector found on the alert and its recordings, tells the cloud, and upgrades a motion alert later', () => {
    const { store } = open();
    const found = [{ label: 'person', score: 0.71, box: { x: 0.4, y: 0.2, w: 0.1, h: 0.6 } }];
    expect(store.openEpisode({ ...alert('a1'), detections: found }, episode).detections).toEqual(found);
    store.saveRecording({ ...rec('r1'), detections: found }, 200, { final: true, nextFrom: 150 });
    expect(store.getRecording('r1')?.detections).toEqual(found);
    expect(store.getAlert('a1')?.detections).toEqual(found);
    expect(alertMessages(store)[0]).toMatchObject({ detections: found });
    // Without detections given: none, and an update that gives none leaves them alone.
    store.openEpisode({ ...alert('a2'), type: 'motion' }, episode);
    expect(store.getAlert('a2')?.detections).toEqual([]);
    store.setAlertType('a2', 'human', 'Person detected at c1', 300, found);
    expect(store.getAlert('a2')).toMatchObject({ type: 'human', message: 'Person detected at c1', detections: found });
    store.setAlertType('a2', 'human', 'Person detected at c1', 400);
    expect(store.getAlert('a2')?.detections).toEqual(found);
    store.close();
  });

  it('a last part without a clip makes the alert lost, with the reason, told to the cloud', () => {
    const { store } = open();
    store.openEpisode(alert('a1'), episode);
    store.settleEpisodePart('a1', { final: true, nextFrom: 150, note: 'power cut' });
    expect(store.getAlert('a1')).toMatchObject({
      recordingId: null,
      recordingStatus: 'lost',
      recordingStatusReason: 'power cut',
    });
    expect(store.listOpenEpisodes()).toEqual([]);
    expect(alertMessages(store).at(-1)).toMatchObject({ recordingStatus: 'lost', recordingStatusReason: 'power cut' });
    // Settled once: a later call changes nothing and tells nobody.
    const before = store.outboxSize;
    store.settleEpisodePart('a1', { final: true, nextFrom: 150, note: 'other' });
    expect(store.getAlert('a1')?.recordingStatusReason).toBe('power cut');
    expect(store.outboxSize).toBe(before);
    store.close();
  });

  it('footage missing from a recorded episode makes it partial, keeping the first reason', () => {
    const { store } = open();
    store.openEpisode(alert('a1'), episode);
    store.settleEpisodePart('a1', { final: false, nextFrom: 150, note: 'first part lost' });
    expect(store.getAlert('a1')).toMatchObject({
      recordingStatus: 'pending',
      recordingStatusReason: 'first part lost',
    });
    store.saveRecording(rec('r1', 150), 300, { final: true, nextFrom: 210, note: 'ends early' });
    expect(store.getAlert('a1')).toMatchObject({
      recordingId: 'r1',
      recordingStatus: 'partial',
      recordingStatusReason: 'first part lost',
    });
    store.close();
  });

  it('a failed status write rolls back with the recording row (one transaction)', () => {
    const { store } = open();
    store.openEpisode(alert('a1'), episode);
    store.saveRecording(rec('r1'), 200, { final: true, nextFrom: 150 });
    // The same id again fails on its primary key: nothing of it may land.
    expect(() => store.saveRecording(rec('r1'), 201, { final: true, nextFrom: 150 })).toThrow(/UNIQUE/);
    expect(store.getAlert('a1')?.recordingStatus).toBe('recorded');
    expect(store.listOpenEpisodes()).toEqual([]);
    store.close();
  });

  it('device_offline alerts have no recording; an episode without its alert cannot be journalled', () => {
    const { store } = open();
    expect(
      store.insertAlert({ id: 'off', deviceId: 'c1', type: 'device_offline', message: 'gone', createdAt: 1 })
        .recordingStatus,
    ).toBe('none');
    // openEpisode writes both or neither: a second alert with the same id fails, and no row stays.
    store.openEpisode(alert('a1'), episode);
    expect(() => store.openEpisode(alert('a1'), { ...episode, fromAt: 500 })).toThrow(/UNIQUE/);
    expect(store.listOpenEpisodes().map((e) => e.fromAt)).toEqual([90]);
    store.close();
  });

  it('migration 6 gives old alerts a status: linked ones recorded, others lost with a reason, device_offline none', () => {
    const dir = tempDir('eg-episodes-mig-');
    dirs.push(dir);
    const raw = new Database(path.join(dir, DATABASE_FILE));
    for (const m of MIGRATIONS.slice(0, 5)) raw.exec(m);
    raw.pragma('user_version = 5');
    raw.exec(`INSERT INTO devices (id, name, type, status, created_at, updated_at) VALUES ('c1', 'c1', 'camera', 'online', 1, 1);
      INSERT INTO recordings (id, device_id, event_type, started_at, ended_at, size_bytes, file_name, created_at) VALUES ('r1', 'c1', 'motion', 1, 2, 3, 'c1/r1.mp4', 4);
      INSERT INTO alerts (id, device_id, type, message, created_at, recording_id) VALUES ('a1', 'c1', 'motion', 'm', 1, 'r1'), ('a2', 'c1', 'human', 'p', 2, NULL), ('a3', 'c1', 'device_offline', 'o', 3, NULL);`);
    raw.close();
    const store = Store.open(dir);
    expect(
      ['a1', 'a2', 'a3'].map((id) => [
        store.getAlert(id)?.recordingStatus,
        store.getAlert(id)?.recordingStatusReason !== null,
      ]),
    ).toEqual([
      ['recorded', false],
      ['lost', true],
      ['none', false],
    ]);
    store.close();
  });
});

describe('list pages after a clip is written', () => {
  // The sequence a person's app makes: the camera's alerts and recordings listed with the same
  // filters while an event is being recorded, then the recordings again once its clip is written.
  // Two lists read with the same filters keep pages of their own, and a write forgets both.
  it('lists a new clip at once, whatever other list was read with the same filters', () => {
    const { store } = open();
    const page = { deviceId: 'c1', limit: 100, after: null };
    expect(store.listRecordings(page).items).toEqual([]);
    expect(store.listAlerts(page).items).toEqual([]);
    store.openEpisode(alert('a1'), episode);
    expect(store.listAlerts(page).items.map((a) => a.id)).toEqual(['a1']);
    expect(store.listRecordings(page).items).toEqual([]);
    store.beginClip('a1', clip('r1', true));
    store.saveRecording(rec('r1'), 200);
    expect(store.listRecordings(page).items.map((r) => r.id)).toEqual(['r1']);
    expect(store.listAlerts(page).items[0]).toMatchObject({ id: 'a1', recordingId: 'r1' });
    store.close();
  });

  it("forgets every list's pages on a write, also when the lists were read in every order", () => {
    const { store } = open();
    const page = { deviceId: 'c1', limit: 100, after: null };
    store.listAlerts(page);
    store.listRecordings(page);
    store.openEpisode(alert('a1'), episode);
    store.listRecordings(page);
    store.listAlerts(page);
    store.saveRecording(rec('r1'), 200);
    expect(store.listRecordings(page).items.map((r) => r.id)).toEqual(['r1']);
    expect(store.listAlerts(page).items[0]).toMatchObject({ id: 'a1', recordingId: 'r1' });
    store.close();
  });
});
