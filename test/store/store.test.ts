import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { StoreError } from '../../src/store/errors.js';
import { DATABASE_FILE, Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { onlineCamera } from '../support/devices.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function open(): { store: Store; dir: string } {
  const dir = tempDir('eg-store-');
  dirs.push(dir);
  return { store: Store.open(dir), dir };
}
const cam = (id: string, createdAt = 1000) => ({ ...onlineCamera(id), createdAt });

describe('Store', () => {
  it('opens a WAL database with foreign keys and the latest schema, and reopens it unchanged', () => {
    const { store, dir } = open();
    expect(store.schemaVersion).toBe(MIGRATIONS.length);
    store.upsertDevice(cam('c1'));
    store.close();
    const raw = new Database(path.join(dir, DATABASE_FILE));
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    const again = Store.open(dir);
    expect(again.getDevice('c1')?.name).toBe('c1');
    again.close();
  });

  it('refuses a database from a newer gateway instead of damaging it', () => {
    const { store, dir } = open();
    store.close();
    const raw = new Database(path.join(dir, DATABASE_FILE));
    raw.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    raw.close();
    expect(() => Store.open(dir)).toThrow(StoreError);
  });

  it('enforces the schema: enums, foreign keys, unique files', () => {
    const { store } = open();
    store.upsertDevice(cam('c1'));
    expect(() => store.upsertDevice({ ...cam('c2'), status: 'exploded' as never })).toThrow(/CHECK/);
    expect(() => store.insertAlert({ id: 'a', deviceId: 'nope', type: 'motion', message: 'm', createdAt: 1 })).toThrow(
      /FOREIGN KEY/,
    );
    const rec = {
      id: 'r1',
      deviceId: 'c1',
      eventType: 'motion',
      startedAt: 1,
      endedAt: 2,
      sizeBytes: 3,
      fileName: 'f.mp4',
      alertId: null,
    } as const;
    store.insertRecording(rec);
    expect(() => store.insertRecording({ ...rec, id: 'r2' })).toThrow(/UNIQUE/);
    expect(() => store.insertRecording({ ...rec, id: 'r3', fileName: 'g.mp4', endedAt: 0 })).toThrow(/CHECK/);
    store.close();
  });

  it('updates a device in place when it is seen again (same id, new fields), keeping created_at', () => {
    const { store } = open();
    store.upsertDevice(cam('c1', 5));
    const updated = store.upsertDevice({ ...cam('c1', 999), status: 'offline', model: 'New' });
    expect(updated).toMatchObject({ status: 'offline', model: 'New', createdAt: 5 });
    expect(store.listDevices({ limit: 10, after: null }).items).toHaveLength(1);
    store.close();
  });

  it("gives a camera device its ONVIF service's host[:port] as address, never the URL's credentials or path", () => {
    const { store } = open();
    store.upsertDevice(cam('c1'));
    store.upsertDevice(cam('c2'));
    const camera = {
      onvifUrl: '',
      source: 'config',
      username: 'admin',
      passwordSealed: null,
      serial: null,
      mainProfile: null,
      mainStreamUri: null,
      subProfile: null,
      subStreamUri: null,
      snapshotUri: null,
      clockOffsetMs: null,
      ptz: null,
    } as const;
    store.upsertCamera({
      ...camera,
      deviceId: 'c1',
      onvifUrl: 'http://admin:secret@192.168.1.20:8080/onvif/device_service',
    });
    store.upsertCamera({ ...camera, deviceId: 'c2', onvifUrl: 'http://[fe80::1]/onvif/device_service' });
    store.upsertDevice(cam('c3'));
    expect(store.getDevice('c1')?.address).toBe('192.168.1.20:8080');
    expect(store.getDevice('c2')?.address).toBe('[fe80::1]');
    expect(store.getDevice('c3')?.address).toBeNull();
    expect(store.listDevices({ limit: 10, after: null }).items.map((d) => [d.id, d.address])).toEqual([
      ['c3', null],
      ['c2', '[fe80::1]'],
      ['c1', '192.168.1.20:8080'],
    ]);
  });

  it('keeps what a camera offers of PTZ on its Device; a change of it is a device message for the cloud', () => {
    const { store } = open();
    store.enableOutbox(100);
    store.upsertDevice(cam('c1'));
    const camera = {
      deviceId: 'c1',
      onvifUrl: 'http://10.0.0.5/onvif/device_service',
      source: 'discovery',
      username: null,
      passwordSealed: null,
      serial: null,
      mainProfile: null,
      mainStreamUri: null,
      subProfile: null,
      subStreamUri: null,
      snapshotUri: null,
      clockOffsetMs: null,
    } as const;
    // Unsent device messages give way to the newest: its seq tells whether one was written.
    const lastDeviceMessage = () =>
      store
        .outboxBatch(0, 100)
        .filter((m) => m.kind === 'device')
        .at(-1);
    store.upsertCamera({ ...camera, ptz: null });
    expect(store.getDevice('c1')?.ptz).toBeNull();
    const before = lastDeviceMessage()?.seq;
    const ptz = { presets: [{ token: '1', name: 'Gate "a" & b' }], canCenter: true };
    store.upsertCamera({ ...camera, ptz });
    expect(store.getDevice('c1')?.ptz).toEqual(ptz);
    expect(store.getCamera('c1')?.ptz).toEqual(ptz);
    const written = lastDeviceMessage();
    expect(written?.seq).not.toBe(before);
    expect(JSON.parse(written!.body)).toMatchObject({ id: 'c1', ptz });
    store.upsertCamera({ ...camera, ptz }); // unchanged: no message
    expect(store.setCameraPtz('c1', ptz)).toBe(true);
    expect(lastDeviceMessage()?.seq).toBe(written?.seq);
    expect(store.setCameraPtz('c1', { presets: [], canCenter: true })).toBe(true);
    expect(store.listDevices({ limit: 10, after: null }).items[0]?.ptz).toEqual({ presets: [], canCenter: true });
    expect(store.setCameraPtz('nope', null)).toBe(false);
  });

  it('pages newest first by keyset, stable while rows with the same time exist', () => {
    const { store } = open();
    for (let i = 0; i < 25; i++) store.upsertDevice(cam(`c${String(i).padStart(2, '0')}`, 1000 + Math.floor(i / 5)));
    const seen: string[] = [];
    let after = null;
    for (;;) {
      const page: ReturnType<Store['listDevices']> = store.listDevices({ limit: 4, after });
      seen.push(...page.items.map((d) => d.id));
      if (!page.next) break;
      after = page.next;
    }
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(seen[0]).toBe('c24');
    expect(seen[24]).toBe('c00');
    store.close();
  });

  it('marks alerts read once and links recordings both ways in one transaction', () => {
    const { store } = open();
    store.upsertDevice(cam('c1'));
    store.transaction(() => {
      store.insertAlert({ id: 'a1', deviceId: 'c1', type: 'human', message: 'Person', createdAt: 10 });
      store.insertRecording({
        id: 'r1',
        deviceId: 'c1',
        eventType: 'human',
        startedAt: 5,
        endedAt: 20,
        sizeBytes: 1,
        fileName: 'x.mp4',
        alertId: 'a1',
      });
      store.linkAlertRecording('a1', 'r1');
    });
    expect(store.getAlert('a1')?.recordingId).toBe('r1');
    expect(store.markAlertRead('a1', 111)?.readAt).toBe(111);
    expect(store.markAlertRead('a1', 222)?.readAt).toBe(111);
    expect(store.markAlertRead('zz', 1)).toBeNull();
    expect(() =>
      store.transaction(() => {
        store.insertAlert({ id: 'a2', deviceId: 'c1', type: 'motion', message: 'm', createdAt: 1 });
        throw new Error('crash mid-way');
      }),
    ).toThrow('crash mid-way');
    expect(store.getAlert('a2')).toBeNull();
    store.close();
  });

  it('records control requests from pending to done', () => {
    const { store } = open();
    store.upsertDevice(cam('c1'));
    const req = store.insertControlRequest({ id: 'k1', deviceId: 'c1', action: 'reboot', requestedAt: 1 });
    expect(req.status).toBe('pending');
    expect(store.completeControlRequest('k1', { status: 'failed', error: 'camera said no' }, 2)).toMatchObject({
      status: 'failed',
      error: 'camera said no',
      completedAt: 2,
    });
    store.close();
  });
});

describe('Store list memo', () => {
  it('never serves a page older than the last write, by this connection, or by another once it closed', async () => {
    const { store, dir } = open();
    store.upsertDevice(cam('c1', 1));
    const list = () => store.listDevices({ limit: 10, after: null }).items.map((d) => `${d.id}:${d.status}`);
    expect(list()).toEqual(['c1:online']);
    expect(store.listDevices({ limit: 10, after: null })).toBe(store.listDevices({ limit: 10, after: null })); // memoised
    store.upsertDevice({ ...cam('c1', 1), status: 'offline' });
    expect(list()).toEqual(['c1:offline']);

    // What a management command does from its own process while the daemon runs (src/cli.ts).
    const other = Store.open(dir);
    other.upsertDevice({ ...cam('c1', 1), status: 'unauthorized' });
    await other.closeWhenVisible();
    expect(list()).toEqual(['c1:unauthorized']);

    expect(() =>
      store.transaction(() => {
        store.upsertDevice(cam('c2', 2));
        expect(list()).toEqual(['c2:online', 'c1:unauthorized']); // read inside the transaction
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    expect(list()).toEqual(['c1:unauthorized']);
    store.close();
  });
});

describe('Store reads on the API hot path', () => {
  const client = {
    id: 'app',
    name: 'App',
    secretHash: null,
    redirectUris: ['https://app.example/cb'],
    grantTypes: ['client_credentials'],
    createdAt: 1,
  };
  const grant = (id: string) => ({
    id,
    clientId: 'app',
    user: null,
    scope: 'devices:read',
    createdAt: 1,
    revokedAt: null,
  });
  const issue = (jti: string) => ({ accessJti: jti, accessExpiresAt: Date.now() + 60_000, refresh: null });

  it("sees an access token's revocation at once by this connection, and by another once it closed, though its answer is memoised", async () => {
    const { store, dir } = open();
    store.insertOAuthClient(client);
    store.insertOAuthGrant(grant('g1'), issue('jti-1'));
    store.insertOAuthGrant(grant('g2'), issue('jti-2'));
    expect(store.isAccessTokenRevoked('jti-1')).toBe(false);
    expect(store.isAccessTokenRevoked('jti-1')).toBe(false);
    expect(store.isAccessTokenRevoked('unknown')).toBe(false);

    store.revokeOAuthGrant('g1');
    expect(store.isAccessTokenRevoked('jti-1')).toBe(true);
    expect(store.isAccessTokenRevoked('jti-2')).toBe(false);

    // What `edge-gateway clients remove` does from its own process while the daemon runs.
    const other = Store.open(dir);
    expect(other.deleteOAuthClient('app')).toBe(true);
    await other.closeWhenVisible();
    expect(store.isAccessTokenRevoked('jti-2')).toBe(true);
    store.close();
  });

  it('migration 9 makes the accounts that existed admin, and registers the web app as a public client', () => {
    const dir = tempDir('eg-roles-mig-');
    dirs.push(dir);
    const raw = new Database(path.join(dir, DATABASE_FILE));
    for (const m of MIGRATIONS.slice(0, 8)) raw.exec(m);
    raw.pragma('user_version = 8');
    raw.exec(`INSERT INTO local_users (username, password_hash, created_at) VALUES ('olduser', 'scrypt$x', 1)`);
    raw.close();
    const store = Store.open(dir);
    try {
      expect(store.getLocalUser('olduser')?.role).toBe('admin');
      expect(store.getOAuthClient('gateway-web')).toMatchObject({
        secretHash: null,
        redirectUris: [],
        grantTypes: ['authorization_code', 'refresh_token'],
      });
      store.insertLocalUser({ username: 'new', passwordHash: 'scrypt$y', role: 'viewer', createdAt: 2 });
      expect(store.listLocalUsers().map((u) => [u.username, u.role])).toEqual([
        ['new', 'viewer'],
        ['olduser', 'admin'],
      ]);
      expect(() =>
        store.insertLocalUser({ username: 'bad', passwordHash: 'scrypt$z', role: 'root' as never, createdAt: 3 }),
      ).toThrow(/CHECK/);
    } finally {
      store.close();
    }
  });

  it("changes a user's role and revokes their grants when the caller's rule says the new role narrows", () => {
    const { store } = open();
    try {
      store.insertOAuthClient(client);
      store.insertLocalUser({ username: 'dan', passwordHash: 'scrypt$x', role: 'admin', createdAt: 1 });
      store.insertOAuthGrant({ ...grant('g1'), user: 'dan' }, issue('jti-1'));
      const asked: string[] = [];
      const narrows = (from: string, to: string) => {
        asked.push(`${from} → ${to}`);
        return from === 'admin';
      };
      expect(store.setLocalUserRole('dan', 'admin', narrows)).toEqual({ previous: 'admin', revokedGrants: 0 });
      expect(store.setLocalUserRole('dan', 'viewer', narrows)).toEqual({ previous: 'admin', revokedGrants: 1 });
      expect(store.isAccessTokenRevoked('jti-1')).toBe(true);
      expect(store.setLocalUserRole('dan', 'admin', narrows)).toEqual({ previous: 'viewer', revokedGrants: 0 });
      expect(asked).toEqual(['admin → viewer', 'viewer → admin']);
      expect(store.setLocalUserRole('nobody', 'viewer', narrows)).toBeNull();
    } finally {
      store.close();
    }
  });
});
