import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

// The outbox: messages for the cloud written in the same transaction as the change they tell of,
// kept across restarts, bounded, and given up least important first.

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(dir = tempDir('eg-outbox-'), maxRows = 1000): { store: Store; dir: string } {
  dirs.push(dir);
  const store = Store.open(dir);
  stores.push(store);
  store.enableOutbox(maxRows);
  return { store, dir };
}

const device = (id: string, status: 'online' | 'offline' = 'online', lastSeenAt = 1) =>
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
const kinds = (s: Store) => s.outboxBatch(0, 1e6).map((m) => `${m.kind}:${m.subjectId}`);

describe('outbox', () => {
  it('keeps nothing until sync enables it', () => {
    const dir = tempDir('eg-outbox-');
    dirs.push(dir);
    const store = Store.open(dir);
    stores.push(store);
    store.upsertDevice(device('cam1'));
    expect(store.outboxBatch(0, 10)).toEqual([]);
  });

  it('writes one message per change, in order, with the record as it was then', () => {
    const { store } = open();
    store.upsertDevice(device('cam1'));
    store.insertAlert({ id: 'alr1', deviceId: 'cam1', type: 'motion', message: 'Motion', createdAt: 10 });
    store.setAlertType('alr1', 'human', 'Person', 11);
    store.saveRecording(
      {
        id: 'rec1',
        deviceId: 'cam1',
        eventType: 'human',
        startedAt: 5,
        endedAt: 20,
        sizeBytes: 100,
        fileName: 'cam1/rec1.mp4',
        alertId: 'alr1',
      },
      21,
    );
    store.markAlertRead('alr1', 30);
    store.markAlertRead('alr1', 31); // already read: no change, no message
    store.insertControlRequest({ id: 'ctl1', deviceId: 'cam1', action: 'reboot', requestedAt: 40 });
    store.completeControlRequest('ctl1', { status: 'succeeded', error: null }, 41);
    expect(kinds(store)).toEqual([
      'device:cam1',
      'alert:alr1',
      'alert:alr1',
      'recording:rec1',
      'alert:alr1',
      'alert:alr1',
      'control_result:ctl1',
    ]);
    const messages = store.outboxBatch(0, 100);
    expect(new Set(messages.map((m) => m.messageId)).size).toBe(messages.length);
    expect(messages.map((m) => m.seq)).toEqual([...messages.map((m) => m.seq)].sort((a, b) => a - b));
    const alerts = messages
      .filter((m) => m.kind === 'alert')
      .map((m) => JSON.parse(m.body) as { type: string; recordingId: string | null; readAt: number | null });
    expect(alerts.map((a) => [a.type, a.recordingId, a.readAt])).toEqual([
      ['motion', null, null],
      ['human', null, null],
      ['human', 'rec1', null],
      ['human', 'rec1', 30],
    ]);
    expect(JSON.parse(messages.find((m) => m.kind === 'control_result')!.body)).toMatchObject({
      id: 'ctl1',
      status: 'succeeded',
    });
  });

  it('writes nothing when the change rolls back', () => {
    const { store } = open();
    expect(() =>
      store.transaction(() => {
        store.upsertDevice(device('cam1'));
        store.insertAlert({ id: 'alr1', deviceId: 'cam1', type: 'motion', message: 'Motion', createdAt: 10 });
        throw new Error('power cut');
      }),
    ).toThrow('power cut');
    expect(store.outboxBatch(0, 10)).toEqual([]);
    expect(store.outboxSize).toBe(0);
  });

  it('keeps only the latest unsent state of a device, and ignores last_seen_at alone', () => {
    const { store } = open();
    store.upsertDevice(device('cam1', 'online', 1));
    store.upsertDevice(device('cam1', 'online', 2)); // only seen again
    store.setDeviceStatus('cam1', 'online', 3); // no change
    expect(kinds(store)).toEqual(['device:cam1']);
    store.setDeviceStatus('cam1', 'offline', 4);
    store.upsertDevice(device('cam2'));
    expect(kinds(store)).toEqual(['device:cam1', 'device:cam2']);
    expect((JSON.parse(store.outboxBatch(0, 1)[0]!.body) as { status: string }).status).toBe('offline');
  });

  it('deletes what the broker acknowledged and keeps the rest across a restart', () => {
    const { store, dir } = open();
    store.upsertDevice(device('cam1'));
    store.deleteOutboxMessage(store.outboxBatch(0, 1)[0]!.seq);
    for (let i = 0; i < 5; i++)
      store.insertAlert({ id: `alr${i}`, deviceId: 'cam1', type: 'motion', message: 'm', createdAt: i });
    const [first, second] = store.outboxBatch(0, 2);
    store.deleteOutboxMessage(first!.seq);
    expect(store.outboxBatch(0, 10).map((m) => m.subjectId)).toEqual(['alr1', 'alr2', 'alr3', 'alr4']);
    expect(store.outboxBatch(second!.seq, 10).map((m) => m.subjectId)).toEqual(['alr2', 'alr3', 'alr4']);
    const left = store.outboxBatch(0, 10).map((m) => m.messageId);
    store.close();
    const again = Store.open(dir);
    stores.push(again);
    again.enableOutbox(1000);
    expect(again.outboxSize).toBe(4);
    expect(again.outboxBatch(0, 10).map((m) => m.messageId)).toEqual(left); // the same ids: the cloud can drop duplicates
  });

  it('stays bounded, giving up device states, then recordings, then alerts, oldest first', () => {
    const { store } = open(undefined, 100);
    store.upsertDevice(device('cam1'));
    for (let i = 0; i < 30; i++)
      store.insertRecording(
        {
          id: `rec${i}`,
          deviceId: 'cam1',
          eventType: 'motion',
          startedAt: i,
          endedAt: i + 1,
          sizeBytes: 1,
          fileName: `r${i}`,
          alertId: null,
        },
        i,
      );
    for (let i = 0; i < 69; i++)
      store.insertAlert({ id: `alr${i}`, deviceId: 'cam1', type: 'motion', message: 'm', createdAt: i });
    expect(store.outboxSize).toBe(100);
    store.insertAlert({ id: 'alr-last', deviceId: 'cam1', type: 'motion', message: 'm', createdAt: 99 }); // 101 > 100
    // Trimmed to 99: the device state and the oldest recording went.
    expect(store.outboxSize).toBe(99);
    expect(store.outboxEvicted).toEqual({ device: 1, recording: 1, alert: 0, control_result: 0 });
    expect(kinds(store).slice(0, 2)).toEqual(['recording:rec1', 'recording:rec2']);
    for (let i = 0; i < 40; i++)
      store.insertAlert({ id: `alr-more${i}`, deviceId: 'cam1', type: 'motion', message: 'm', createdAt: 100 + i });
    expect(store.outboxSize).toBeLessThanOrEqual(100);
    expect(store.outboxEvicted.recording).toBe(29 + 1); // every recording before any alert
    expect(kinds(store).filter((k) => k.startsWith('recording'))).toEqual([]);
    expect(kinds(store).at(-1)).toBe('alert:alr-more39');
    expect(store.outboxSize).toBe(store.outboxBatch(0, 1e6).length);
  });
});

describe('last_seen_at', () => {
  it('is written at most every LAST_SEEN_WRITE_MS while a device stays online (health checks must not wear the card)', async () => {
    const { LAST_SEEN_WRITE_MS } = await import('../../src/store/store.js');
    const { store } = open();
    store.upsertDevice(device('cam1', 'online', 1_000));
    const before = store.outboxSize;
    expect(store.setDeviceStatus('cam1', 'online', 2_000)?.device.lastSeenAt).toBe(1_000); // too soon: not written
    expect(store.getDevice('cam1')?.lastSeenAt).toBe(1_000);
    expect(store.setDeviceStatus('cam1', 'online', 1_000 + LAST_SEEN_WRITE_MS)?.device.lastSeenAt).toBe(
      1_000 + LAST_SEEN_WRITE_MS,
    );
    expect(store.setDeviceStatus('cam1', 'offline', 1_000 + LAST_SEEN_WRITE_MS + 1)).toMatchObject({
      changed: true,
      device: { status: 'offline' },
    });
    expect(store.setDeviceStatus('cam1', 'online', 1_000 + LAST_SEEN_WRITE_MS + 2)).toMatchObject({
      changed: true,
      device: { status: 'online', lastSeenAt: 1_000 + LAST_SEEN_WRITE_MS + 2 },
    });
    expect(store.outboxSize).toBe(before); // the device's one pending message is replaced, not added to
  });
});
