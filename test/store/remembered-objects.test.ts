import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { aliasOf } from '../../src/domain/device-alias.js';
import { Store, type RememberedObject } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

// What the detector remembers having found per camera (migration 15): kept across a reopen,
// replaced as a whole, gone with a removed device.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function open(dir = tempDir('eg-remembered-')): { store: Store; dir: string } {
  dirs.push(dir);
  const store = Store.open(dir);
  store.enableOutbox(1000);
  return { store, dir };
}
const URL_A = 'http://192.168.1.20/onvif/device_service';
const CAR: RememberedObject = {
  category: 'vehicle',
  box: { x: 0.2, y: 0.45, w: 0.3, h: 0.2 },
  firstSeenAt: 1000,
  lastSeenAt: 5000,
  misses: 1,
};
const PERSON: RememberedObject = { ...CAR, category: 'human', box: { x: 0.7, y: 0.3, w: 0.1, h: 0.5 }, misses: 0 };

function camera(store: Store): string {
  store.addCamera(
    {
      id: 'dev_a',
      name: 'Drive',
      nameSet: true,
      onvifUrl: URL_A,
      aliases: [aliasOf.url(URL_A)],
      username: 'admin',
      passwordSealed: null,
    },
    'alice',
    1000,
  );
  return 'dev_a';
}

describe('remembered objects in the store', () => {
  it('keeps a camera list across a reopen, in order, and replaces it as a whole', () => {
    const { store, dir } = open();
    const id = camera(store);
    expect(store.rememberedObjects(id)).toEqual([]);
    store.replaceRememberedObjects(id, [CAR, PERSON]);
    store.close();
    const again = open(dir).store;
    expect(again.rememberedObjects(id)).toEqual([CAR, PERSON]);
    again.replaceRememberedObjects(id, [PERSON]);
    expect(again.rememberedObjects(id)).toEqual([PERSON]);
    again.replaceRememberedObjects(id, []);
    expect(again.rememberedObjects(id)).toEqual([]);
    again.close();
  });

  it('writes nothing for a device it does not know; forgets a removed device', () => {
    const { store } = open();
    store.replaceRememberedObjects('dev_unknown', [CAR]);
    expect(store.rememberedObjects('dev_unknown')).toEqual([]);
    const id = camera(store);
    store.replaceRememberedObjects(id, [CAR]);
    expect(store.removeDevice(id, 6000)).toBe(true);
    expect(store.rememberedObjects(id)).toEqual([]);
    store.close();
  });
});
