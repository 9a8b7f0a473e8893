import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/domain/types.js';
import { Store, type NewPushSubscription, type PushQueueChange } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { onlineCamera } from '../support/devices.js';

// Push subscriptions and the push queue: pushes written in the alert's transaction, one waiting
// per subscription and camera (a newer alert replaces it), settled by version, and subscriptions
// removed with the grant or the account they were made under.

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(dir = tempDir('eg-push-')): Store {
  dirs.push(dir);
  const store = Store.open(dir);
  stores.push(store);
  for (const id of ['cam-a', 'cam-b']) store.upsertDevice(onlineCamera(id));
  return store;
}

const BOUNDS = { perOwner: 3, total: 5 };
const sub = (owner: string, endpoint: string, more: Partial<NewPushSubscription> = {}): NewPushSubscription => ({
  owner,
  grantId: null,
  endpoint,
  p256dh: 'p',
  auth: 'a',
  devices: null,
  types: ['human', 'vehicle'],
  quietHours: null,
  ...more,
});
function subscribe(store: Store, owner: string, endpoint: string, more: Partial<NewPushSubscription> = {}) {
  const saved = store.savePushSubscription(sub(owner, endpoint, more), BOUNDS, 1000);
  if (saved.kind === 'full') throw new Error('full');
  return saved.subscription;
}
let n = 0;
const alert = (store: Store, deviceId: string, type: Alert['type'] = 'human') =>
  store.insertAlert({ id: `alr_${++n}`, deviceId, type, message: `${type} at ${deviceId}`, createdAt: 5000 + n });

function enable(store: Store, maxRows = 100): PushQueueChange[] {
  const changes: PushQueueChange[] = [];
  store.enablePushQueue({
    wants: (s, a) => s.types.includes(a.type) && (s.devices === null || s.devices.includes(a.deviceId)),
    maxRows,
    onChange: (c) => changes.push(c),
  });
  return changes;
}

describe('push subscriptions', () => {
  it('makes one per owner and endpoint: the same endpoint again changes it', () => {
    const store = open();
    const first = store.savePushSubscription(sub('ann', 'https://p/1'), BOUNDS, 1000);
    expect(first).toMatchObject({ kind: 'created', subscription: { owner: 'ann', types: ['human', 'vehicle'] } });
    const again = store.savePushSubscription(sub('ann', 'https://p/1', { types: ['motion'] }), BOUNDS, 2000);
    expect(again.kind).toBe('updated');
    if (first.kind === 'full' || again.kind === 'full') throw new Error('full');
    expect(again.subscription).toMatchObject({ id: first.subscription.id, types: ['motion'], createdAt: 1000 });
    // Another owner's browser with the same endpoint is another subscription.
    expect(store.savePushSubscription(sub('bob', 'https://p/1'), BOUNDS).kind).toBe('created');
    expect(store.pushSubscriptionsOf('ann')).toHaveLength(1);
    expect(store.pushSubscriptionCount).toBe(2);
  });

  it('bounds them per owner and in all', () => {
    const store = open();
    for (let i = 0; i < 3; i++) subscribe(store, 'ann', `https://p/${i}`);
    expect(store.savePushSubscription(sub('ann', 'https://p/9'), BOUNDS)).toEqual({ kind: 'full', bound: 'owner' });
    // An endpoint the owner has is changed, full or not.
    expect(store.savePushSubscription(sub('ann', 'https://p/0'), BOUNDS).kind).toBe('updated');
    subscribe(store, 'bob', 'https://p/b1');
    subscribe(store, 'bob', 'https://p/b2');
    expect(store.savePushSubscription(sub('cid', 'https://p/c'), BOUNDS)).toEqual({ kind: 'full', bound: 'gateway' });
  });

  it("changes and removes only the owner's", () => {
    const store = open();
    const s = subscribe(store, 'ann', 'https://p/1');
    expect(store.changePushSubscription(s.id, 'bob', { types: ['motion'] })).toBeNull();
    expect(store.deletePushSubscription(s.id, 'bob')).toBe(false);
    const changed = store.changePushSubscription(s.id, 'ann', {
      devices: ['cam-a'],
      quietHours: { start: 1320, end: 420 },
    });
    expect(changed).toMatchObject({
      devices: ['cam-a'],
      types: ['human', 'vehicle'],
      quietHours: { start: 1320, end: 420 },
    });
    expect(store.changePushSubscription(s.id, 'ann', { quietHours: null })?.quietHours).toBeNull();
    expect(store.deletePushSubscription(s.id, 'ann')).toBe(true);
    expect(store.getPushSubscription(s.id)).toBeNull();
  });

  it('removes those made under a revoked grant, a removed client, or by a removed account', () => {
    const store = open();
    store.insertOAuthClient({
      id: 'cli',
      name: 'app',
      secretHash: null,
      redirectUris: ['https://x/cb'],
      grantTypes: ['authorization_code'],
      createdAt: 1,
    });
    store.insertLocalUser({ username: 'ann', passwordHash: 'x', role: 'viewer', createdAt: 1 });
    store.insertLocalUser({ username: 'bob', passwordHash: 'x', role: 'admin', createdAt: 1 });
    const grant = (id: string, user: string) =>
      store.insertOAuthGrant(
        { id, clientId: 'cli', user, scope: 'alerts:read', createdAt: 1, revokedAt: null },
        { accessJti: `jti-${id}`, accessExpiresAt: Date.now() + 60_000, refresh: null },
      );
    grant('g1', 'ann');
    grant('g2', 'ann');
    grant('g3', 'bob');
    const viaG1 = subscribe(store, 'ann', 'https://p/1', { grantId: 'g1' });
    const viaG2 = subscribe(store, 'ann', 'https://p/2', { grantId: 'g2' });
    const cliToken = subscribe(store, 'ann', 'https://p/3');
    const bobs = subscribe(store, 'bob', 'https://p/4', { grantId: 'g3' });
    enable(store);
    alert(store, 'cam-a');
    expect(store.pushQueueSize).toBe(4);

    store.revokeOAuthGrant('g1');
    expect(store.getPushSubscription(viaG1.id)).toBeNull();
    expect(store.getPushSubscription(viaG2.id)).not.toBeNull();
    // The queued pushes went with it.
    expect(store.pushQueueSize).toBe(3);

    store.setLocalUserRole('bob', 'viewer', () => true);
    expect(store.getPushSubscription(bobs.id)).toBeNull();

    expect(store.deleteLocalUser('ann')).toBe(true);
    expect(store.getPushSubscription(viaG2.id)).toBeNull();
    expect(store.getPushSubscription(cliToken.id)).toBeNull();
    expect(store.pushQueueSize).toBe(0);
    expect(store.pushQueue()).toEqual([]);

    grant('g4', 'bob');
    const again = subscribe(store, 'bob', 'https://p/5', { grantId: 'g4' });
    expect(store.deleteOAuthClient('cli')).toBe(true);
    expect(store.getPushSubscription(again.id)).toBeNull();
  });
});

describe('the push queue', () => {
  it('queues nothing until enabled', () => {
    const store = open();
    subscribe(store, 'ann', 'https://p/1');
    alert(store, 'cam-a');
    expect(store.pushQueue()).toEqual([]);
  });

  it('queues what each subscription wants, in the alert transaction, one per camera: the newest replaces', () => {
    const store = open();
    const everything = subscribe(store, 'ann', 'https://p/1', { types: ['human', 'motion'] });
    const onlyB = subscribe(store, 'bob', 'https://p/2', { devices: ['cam-b'] });
    const changes = enable(store);
    const a1 = alert(store, 'cam-a');
    alert(store, 'cam-a', 'vehicle'); // nobody wants vehicles of cam-a
    const b1 = alert(store, 'cam-b');
    expect(store.pushQueue().map((q) => [q.subscriptionId, q.deviceId, q.alertId])).toEqual([
      [everything.id, 'cam-a', a1.id],
      [everything.id, 'cam-b', b1.id],
      [onlyB.id, 'cam-b', b1.id],
    ]);
    const a3 = alert(store, 'cam-a', 'motion');
    const queued = store.pushQueue();
    expect(queued).toHaveLength(3);
    const aRow = queued.find((q) => q.deviceId === 'cam-a');
    expect(aRow?.alertId).toBe(a3.id);
    expect(changes.at(-1)?.replaced).toEqual([{ subscriptionId: everything.id, deviceId: 'cam-a', version: 1 }]);
    expect(store.pushQueueSize).toBe(3);

    // Settling an older version leaves the newer push waiting.
    store.settlePushes([{ subscriptionId: everything.id, deviceId: 'cam-a', version: 1 }]);
    expect(store.pushQueueSize).toBe(3);
    store.settlePushes([{ subscriptionId: everything.id, deviceId: 'cam-a', version: aRow!.version }]);
    expect(store.pushQueueSize).toBe(2);
  });

  it('queues again when an alert becomes more specific, not when only its detections change', () => {
    const store = open();
    subscribe(store, 'ann', 'https://p/1');
    const changes = enable(store);
    const a = alert(store, 'cam-a', 'motion');
    expect(store.pushQueue()).toEqual([]);
    store.setAlertType(a.id, 'human', 'Person detected at cam-a');
    expect(store.pushQueue().map((q) => q.alertId)).toEqual([a.id]);
    store.setAlertType(a.id, 'human', 'Person detected at cam-a', undefined, []);
    expect(changes).toHaveLength(1);
  });

  it('rolls back with its alert, and refuses new rows past its bound', () => {
    const store = open();
    subscribe(store, 'ann', 'https://p/1');
    const changes = enable(store, 1);
    expect(() =>
      store.transaction(() => {
        alert(store, 'cam-a');
        throw new Error('the alert fails');
      }),
    ).toThrow('the alert fails');
    expect(store.pushQueue()).toEqual([]);
    expect(store.pushQueueSize).toBe(0);
    alert(store, 'cam-a');
    alert(store, 'cam-b');
    expect(store.pushQueueSize).toBe(1);
    expect(changes.at(-1)).toMatchObject({ queued: [], refused: 1 });
    // Replacing the waiting one is no new row.
    alert(store, 'cam-a');
    expect(changes.at(-1)).toMatchObject({ refused: 0 });
  });

  it('keeps the queue across a restart, versions going on from the last', () => {
    const dir = tempDir('eg-push-');
    const store = open(dir);
    subscribe(store, 'ann', 'https://p/1');
    enable(store);
    alert(store, 'cam-a');
    store.close();
    stores.splice(stores.indexOf(store), 1);
    const again = Store.open(dir);
    stores.push(again);
    enable(again);
    expect(again.pushQueueSize).toBe(1);
    const before = again.pushQueue()[0]!.version;
    alert(again, 'cam-a');
    expect(again.pushQueue()[0]!.version).toBeGreaterThan(before);
  });
});
