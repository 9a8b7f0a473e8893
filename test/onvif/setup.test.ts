import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type GatewayEvents } from '../../src/domain/bus.js';
import { ConflictError, NotFoundError } from '../../src/domain/errors.js';
import { CameraManager } from '../../src/onvif/manager.js';
import { CameraSetup, deviceServiceUrl } from '../../src/onvif/setup.js';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { SecretBox } from '../../src/platform/secret-box.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

// Cameras set up by their owner (src/onvif/setup.ts) over the real camera manager, store and a
// simulated camera: a new account is tried at once (no wait for the unauthorized retry, a minute
// here), a camera switched off is left alone, a removed one is not taken up again by discovery.

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function camera(password = 'pw') {
  const cam = new SimulatedCamera({ username: 'admin', password });
  await cam.start();
  cleanups.push(() => cam.stop());
  return cam;
}

function gateway(fileUrls: string[] = []) {
  const dir = tempDir('eg-setup-');
  const store = Store.open(dir);
  const secretBox = SecretBox.openInDir(dir);
  const bus = new EventBus((err) => {
    throw err;
  });
  const seen: Array<GatewayEvents['device.status'] | GatewayEvents['camera.settings']> = [];
  bus.on('device.status', (e) => seen.push(e));
  bus.on('camera.settings', (e) => seen.push(e));
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  const cameras = new CameraManager({
    store,
    secretBox,
    bus,
    logger,
    credentials: [],
    healthIntervalS: 1,
    callTimeoutMs: 1000,
    maxBackoffMs: 500,
    // Long: every change below must apply at once, not at the next retry.
    unauthorizedRetryMs: 60_000,
  });
  const setup = new CameraSetup({
    store,
    cameras,
    secretBox,
    bus,
    logger,
    fileUrls: new Set(fileUrls),
    continuousAvailable: false,
  });
  cleanups.push(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  cleanups.push(() => cameras.stop());
  return { store, cameras, setup, seen, lines };
}

const hostOf = (cam: SimulatedCamera) => new URL(cam.baseUrl).host;

describe('CameraSetup', () => {
  it('adds a camera with a wrong password (unauthorized) and takes it online once its account is fixed', async () => {
    const password = `"quoted" 'single' ünïcødé ✓ ${'x'.repeat(175)}`;
    expect(password.length).toBeGreaterThanOrEqual(200);
    const cam = await camera(password);
    const { store, setup, lines } = gateway();
    const device = setup.add({ host: hostOf(cam), username: 'admin', password: 'wrong', name: 'Porch' }, 'alice');
    expect(device).toMatchObject({ name: 'Porch', status: 'offline', address: hostOf(cam) });
    await expect.poll(() => store.getDevice(device.id)?.status, { timeout: 10_000 }).toBe('unauthorized');

    setup.change(device.id, { account: { username: 'admin', password } }, 'alice');
    await expect.poll(() => store.getDevice(device.id)?.status, { timeout: 10_000 }).toBe('online');
    expect(store.getDevice(device.id)?.settings).toMatchObject({ username: 'admin', hasPassword: true });
    expect(store.getCamera(device.id)?.source).toBe('app');
    expect(lines.join('\n')).not.toContain(password.slice(0, 12));
    expect(lines.find((l) => l.includes('camera settings changed'))).toMatch(/"by":"alice".*"fields":\["account"\]/);
  });

  it('gives a discovered unauthorized camera its account: online at once', async () => {
    const cam = await camera('secret');
    const { store, cameras, setup } = gateway();
    cameras.addTarget({ url: cam.deviceServiceUrl, source: 'discovery', endpoint: cam.endpoint });
    await expect
      .poll(() => store.listDevices({ limit: 5, after: null }).items[0]?.status, { timeout: 10_000 })
      .toBe('unauthorized');
    const id = store.listDevices({ limit: 5, after: null }).items[0]!.id;
    setup.change(id, { account: { username: 'admin', password: 'secret' } }, 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
  });

  it('switches a camera off (offline, no offline alert, no stream) and on again', async () => {
    const cam = await camera();
    const { store, cameras, setup, seen } = gateway();
    const { id } = setup.add({ host: hostOf(cam), username: 'admin', password: 'pw', name: null }, 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    expect(cameras.streamSource(id, 'main')).not.toBeNull();

    const off = setup.change(id, { enabled: false }, 'alice');
    expect(off).toMatchObject({ status: 'offline', settings: { enabled: false, source: { enabled: 'app' } } });
    expect(cameras.streamSource(id, 'main')).toBeNull();
    expect(store.listAlerts({ limit: 10, after: null }).items).toEqual([]);
    expect(seen).toContainEqual(expect.objectContaining({ deviceId: id, fields: ['enabled'] }));

    setup.change(id, { enabled: true }, 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
  });

  it('removes a camera: its session ends, discovery does not bring it back, adding it again does (same id)', async () => {
    const cam = await camera();
    const { store, cameras, setup, seen, lines } = gateway();
    cameras.addTarget({ url: cam.deviceServiceUrl, source: 'discovery', endpoint: cam.endpoint });
    await expect
      .poll(() => store.listDevices({ limit: 5, after: null }).items[0]?.status, { timeout: 10_000 })
      .toBe('unauthorized');
    const id = store.listDevices({ limit: 5, after: null }).items[0]!.id;
    setup.change(id, { account: { username: 'admin', password: 'pw' } }, 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    await setup.remove(id, 'alice');
    expect(store.getDevice(id)).toBeNull();
    expect(seen.at(-1)).toMatchObject({ deviceId: id, status: 'offline', previous: 'online' });
    expect(cameras.streamSource(id, 'main')).toBeNull();

    // Found again: refused on the spot, no worker made for it.
    cameras.addTarget({ url: cam.deviceServiceUrl, source: 'discovery', endpoint: cam.endpoint });
    expect(lines.at(-1)).toMatch(/camera removed through the API found again: left alone/);
    expect(store.listDevices({ limit: 5, after: null }).items).toEqual([]);
    await expect(setup.remove(id, 'alice')).rejects.toThrow(NotFoundError);

    const back = setup.add({ host: hostOf(cam), username: 'admin', password: 'pw', name: null }, 'alice');
    expect(back.id).toBe(id);
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    expect(() => setup.add({ host: hostOf(cam), username: 'admin', password: 'pw', name: null }, 'alice')).toThrow(
      ConflictError,
    );
  });

  it("refuses what the config file sets: its cameras' addresses, fields and removal", async () => {
    const cam = await camera();
    const { store, setup, cameras } = gateway([cam.deviceServiceUrl]);
    store.setSettingsBase({
      fileFor: (url) => (url === cam.deviceServiceUrl ? { account: { username: 'admin', hasPassword: true } } : null),
      defaults: { recording: 'events' },
    });
    cameras.start([{ name: 'Gate', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'pw' }]);
    await expect
      .poll(() => store.listDevices({ limit: 5, after: null }).items[0]?.status, { timeout: 10_000 })
      .toBe('online');
    const id = store.listDevices({ limit: 5, after: null }).items[0]!.id;
    expect(deviceServiceUrl(hostOf(cam))).toBe(cam.deviceServiceUrl);
    expect(() => setup.add({ host: hostOf(cam), username: 'a', password: 'b', name: null }, 'alice')).toThrow(
      /config file/,
    );
    expect(() => setup.change(id, { name: 'Other' }, 'alice')).toThrow(/name is set .* in the config file/);
    expect(() => setup.change(id, { account: { username: 'a', password: 'b' } }, 'alice')).toThrow(ConflictError);
    expect(() => setup.change(id, { recording: 'continuous' }, 'alice')).toThrow(/recording.continuous.enabled/);
    await expect(setup.remove(id, 'alice')).rejects.toThrow(/remove it there/);
    // What the file leaves out is the app's.
    const changed = setup.change(id, { detection: 'off', recording: 'off' }, 'alice');
    expect(changed.settings).toMatchObject({ detection: 'off', recording: 'off' });
    expect(changed.settings.source).toMatchObject({ name: 'file', account: 'file', detection: 'app' });
    expect(store.getDevice(id)?.settings.detection).toBe('off');
  });
});
