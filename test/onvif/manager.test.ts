import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type GatewayEvents } from '../../src/domain/bus.js';
import { backoffMs } from '../../src/domain/backoff.js';
import { CameraManager, type CameraManagerOptions } from '../../src/onvif/manager.js';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { SecretBox } from '../../src/platform/secret-box.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function camera(opts: Partial<ConstructorParameters<typeof SimulatedCamera>[0]> = {}) {
  const cam = new SimulatedCamera({ username: 'admin', password: 'pw', rebootMs: 300, ...opts });
  await cam.start();
  cleanups.push(() => cam.stop());
  return cam;
}

function manager(overrides: Partial<CameraManagerOptions> = {}, dir = tempDir('eg-mgr-')) {
  const store = Store.open(dir);
  const events: Array<{ name: keyof GatewayEvents; event: unknown }> = [];
  const bus = new EventBus((err) => {
    throw err;
  });
  bus.on('device.status', (e) => events.push({ name: 'device.status', event: e }));
  bus.on('camera.event', (e) => events.push({ name: 'camera.event', event: e }));
  const m = new CameraManager({
    store,
    secretBox: SecretBox.openInDir(dir),
    bus,
    logger: pino({ level: 'silent' }),
    credentials: [],
    healthIntervalS: 1,
    callTimeoutMs: 1000,
    maxBackoffMs: 500,
    unauthorizedRetryMs: 60_000,
    eventDebounceMs: 200,
    // These cameras are ONVIF ones: no plain RTSP camera is ever looked at.
    probeStream: async () => ({ status: 'offline', reason: 'no plain RTSP camera here' }),
    ...overrides,
  });
  cleanups.push(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  cleanups.push(() => m.stop());
  return { m, store, events, dir };
}

const onlyDevice = (store: Store) => store.listDevices({ limit: 10, after: null }).items;

describe('CameraManager', () => {
  it('adopts a configured camera: device online with its information, camera record with streams, password sealed', async () => {
    // A password long enough that its sealed form cannot hold it by chance ('pw' once turned up in
    // the random base64 of the sealed value).
    const password = 'front-door-camera-password';
    const cam = await camera({
      password,
      identity: { manufacturer: 'Hikvision', model: 'DS-2CD2143G2', firmware: 'V5.7.3', serial: 'DS1234' },
    });
    const { m, store } = manager();
    m.start([{ name: 'Front door', onvif_url: cam.deviceServiceUrl, username: 'admin', password }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    const [device] = onlyDevice(store);
    expect(device).toMatchObject({
      name: 'Front door',
      type: 'camera',
      model: 'DS-2CD2143G2',
      manufacturer: 'Hikvision',
      firmwareVersion: 'V5.7.3',
    });
    expect(device?.lastSeenAt).toEqual(expect.any(Number));
    const record = store.getCamera(device!.id);
    expect(record).toMatchObject({
      mainProfile: 'Profile_1',
      subProfile: 'Profile_2',
      mainStreamUri: 'rtsp://127.0.0.1:8554/main',
      serial: 'DS1234',
      source: 'config',
    });
    expect(record?.passwordSealed).not.toContain(password);
    expect(record?.passwordSealed).not.toContain(Buffer.from(password).toString('base64url').slice(0, 12));
  });

  it('tries the configured accounts in order and marks a camera it cannot log into unauthorized, without a retry storm', async () => {
    const cam = await camera({ password: 'secret2' });
    const { m, store } = manager({
      credentials: [
        { username: 'admin', password: 'nope' },
        { username: 'admin', password: 'secret2' },
      ],
    });
    m.start([{ name: 'Garage', onvif_url: cam.deviceServiceUrl, username: null, password: null }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');

    const locked = await camera({ password: 'unknowable' });
    const { m: m2, store: store2 } = manager({ credentials: [{ username: 'admin', password: 'nope' }] });
    m2.start([{ name: 'Locked', onvif_url: locked.deviceServiceUrl, username: null, password: null }]);
    await expect.poll(() => onlyDevice(store2)[0]?.status, { timeout: 10_000 }).toBe('unauthorized');
    const callsAfterRefusal = locked.calls.get('GetSystemDateAndTime') ?? 0;
    await new Promise((r) => setTimeout(r, 1500));
    expect(locked.calls.get('GetSystemDateAndTime') ?? 0).toBe(callsAfterRefusal); // waits unauthorizedRetryMs, no loop
  });

  // Real firmware answers the clock, GetCapabilities and GetServices to anyone and refuses only
  // GetDeviceInformation and later calls: such a camera must still be listed as a device.
  const realFirmware = { password: 'right', openOperations: ['GetCapabilities', 'GetServices'] };

  it('lists a configured camera with a wrong password as unauthorized (config name, no identity), without a retry loop, and online once the config is corrected (restart)', async () => {
    const cam = await camera(realFirmware);
    const first = manager();
    first.m.start([{ name: 'Front door', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'typo' }]);
    await expect.poll(() => onlyDevice(first.store)[0]?.status, { timeout: 10_000 }).toBe('unauthorized');
    const [device] = onlyDevice(first.store);
    expect(device).toMatchObject({
      name: 'Front door',
      type: 'camera',
      model: null,
      manufacturer: null,
      firmwareVersion: null,
      address: new URL(cam.deviceServiceUrl).host,
    });
    const refused = cam.calls.get('GetDeviceInformation') ?? 0;
    await new Promise((r) => setTimeout(r, 1500));
    expect(cam.calls.get('GetDeviceInformation') ?? 0).toBe(refused); // waits unauthorizedRetryMs
    await first.m.stop();
    first.store.close();

    const second = manager({}, first.dir);
    second.m.start([{ name: 'Front door', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'right' }]);
    await expect.poll(() => second.store.getDevice(device!.id)?.status, { timeout: 10_000 }).toBe('online');
    expect(onlyDevice(second.store)).toEqual([
      expect.objectContaining({ id: device!.id, name: 'Front door', model: 'SIM-4MP' }),
    ]);
  });

  it('turns an unauthorized camera online at the next retry once its own password is set to the configured one', async () => {
    const cam = await camera(realFirmware);
    const { m, store } = manager({ unauthorizedRetryMs: 500 });
    m.start([{ name: 'Side gate', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'new-pw' }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('unauthorized');
    const id = onlyDevice(store)[0]!.id;
    cam.setPassword('new-pw');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    expect(onlyDevice(store)).toHaveLength(1);
  });

  it('adopts a camera that refuses GetSystemDateAndTime, GetCapabilities, GetServices and the profiles: a partial device on the gateway clock', async () => {
    const cam = await camera({
      skewMs: 90_000,
      refuse: ['GetSystemDateAndTime', 'GetCapabilities', 'GetServices', 'GetProfiles'],
    });
    const { m, store } = manager();
    m.start([{ name: 'Old NVR', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'pw' }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    const [device] = onlyDevice(store);
    expect(device).toMatchObject({ name: 'Old NVR', model: 'SIM-4MP', manufacturer: 'SimCam' });
    expect(store.getCamera(device!.id)).toMatchObject({
      clockOffsetMs: 0,
      mainProfile: null,
      mainStreamUri: null,
      subStreamUri: null,
    });
    expect(cam.calls.get('GetSystemDateAndTime')).toBeGreaterThanOrEqual(2); // asked without, then with credentials
    // Health checks go on (GetDeviceInformation, since the clock is refused) and keep it online.
    const infoCalls = cam.calls.get('GetDeviceInformation') ?? 0;
    await expect.poll(() => cam.calls.get('GetDeviceInformation') ?? 0, { timeout: 10_000 }).toBeGreaterThan(infoCalls);
    expect(store.getDevice(device!.id)?.status).toBe('online');
  });

  it('goes offline with a device_offline alert when the camera disappears, and back online with the same id', async () => {
    const cam = await camera();
    const { m, store, events } = manager();
    m.start([{ name: 'Porch', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'pw' }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    const id = onlyDevice(store)[0]!.id;
    await cam.stop();
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('offline');
    const alerts = store.listAlerts({ limit: 10, after: null, deviceId: id }).items;
    expect(alerts.map((a) => a.type)).toEqual(['device_offline']);
    expect(alerts[0]?.message).toBe('Porch went offline');
    await cam.start();
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    expect(onlyDevice(store)).toHaveLength(1);
    const statuses = events
      .filter((e) => e.name === 'device.status')
      .map((e) => (e.event as { status: string }).status);
    expect(statuses).toEqual(['online', 'offline', 'online']);
  });

  it('turns camera notifications into debounced start/stop events on the bus, and re-subscribes after a reboot', async () => {
    const cam = await camera({ topicStyle: 'tplink' });
    const { m, store, events } = manager();
    m.start([{ name: 'Drive', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'pw' }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    await expect.poll(() => cam.calls.get('PullMessages') ?? 0, { timeout: 10_000 }).toBeGreaterThan(0);
    const cameraEvents = () =>
      events.filter((e) => e.name === 'camera.event').map((e) => e.event as { kind: string; phase: string });
    cam.trigger('vehicle', true);
    await expect
      .poll(() => cameraEvents(), { timeout: 10_000 })
      .toEqual([expect.objectContaining({ kind: 'vehicle', phase: 'start' })]);
    cam.trigger('vehicle', false);
    cam.trigger('vehicle', true); // flapping within the debounce window: still one event
    cam.trigger('vehicle', false);
    await expect
      .poll(() => cameraEvents().map((e) => `${e.kind}:${e.phase}`), { timeout: 10_000 })
      .toEqual(['vehicle:start', 'vehicle:stop']);

    const id = onlyDevice(store)[0]!.id;
    const subsBefore = cam.calls.get('CreatePullPointSubscription') ?? 0;
    const ctl = await m.run(id, 'reboot');
    expect(ctl).toMatchObject({ action: 'reboot', status: 'succeeded' });
    await expect
      .poll(() => cam.calls.get('CreatePullPointSubscription') ?? 0, { timeout: 20_000 })
      .toBeGreaterThan(subsBefore);
    cam.trigger('human', true);
    await expect
      .poll(() => cameraEvents().map((e) => `${e.kind}:${e.phase}`), { timeout: 10_000 })
      .toContain('human:start');
  });

  it('renews a subscription before the lifetime the camera granted ends (4 s, though 2 minutes were asked), and an event in progress is not cut', async () => {
    // The shortest grant the pull loop handles as cameras give it (a pull of 1 s, a renewal before
    // half the lifetime): the test waits three of them.
    const cam = await camera({ subscriptionLifetimeS: 4 });
    const { m, store, events } = manager();
    m.start([{ name: 'Porch', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'pw' }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    await expect.poll(() => cam.calls.get('PullMessages') ?? 0, { timeout: 10_000 }).toBeGreaterThan(0);
    cam.trigger('human', true);
    // Three lifetimes (a renewal every 2 s or less): an unrenewed subscription would have expired
    // (and been re-created) twice.
    await expect.poll(() => cam.calls.get('Renew') ?? 0, { timeout: 40_000, interval: 500 }).toBeGreaterThanOrEqual(6);
    expect(cam.calls.get('CreatePullPointSubscription')).toBe(1);
    // A lost subscription ends the events it had open: the event is still going.
    const phases = events.filter((e) => e.name === 'camera.event').map((e) => (e.event as { phase: string }).phase);
    expect(phases).toEqual(['start']);
  }, 60_000);

  it('unsubscribes from the camera at shutdown', async () => {
    const cam = await camera();
    const { m, store } = manager();
    m.start([{ name: 'Hall', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'pw' }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    await expect.poll(() => cam.calls.get('PullMessages') ?? 0, { timeout: 10_000 }).toBeGreaterThan(0);
    await m.stop();
    expect(cam.calls.get('Unsubscribe')).toBe(1);
  });

  it('syncs the camera clock, and refuses control of an offline camera', async () => {
    const cam = await camera({ skewMs: -3 * 3600_000 });
    const { m, store } = manager();
    m.start([{ name: 'Yard', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'pw' }]);
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    const id = onlyDevice(store)[0]!.id;
    expect(await m.run(id, 'sync_time')).toMatchObject({ status: 'succeeded', error: null });
    expect(Math.abs(cam.nowMs() - Date.now())).toBeLessThan(2000);
    await cam.stop();
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('offline');
    await expect(m.run(id, 'reboot')).rejects.toThrow(/offline/);
  });

  it('keeps one device when a discovered camera moves to a new address', async () => {
    const cam = await camera({ endpoint: 'urn:uuid:11111111-2222-4333-8444-555555555555' });
    const { m, store } = manager({ credentials: [{ username: 'admin', password: 'pw' }] });
    m.start([]);
    m.addTarget({
      url: cam.deviceServiceUrl,
      source: 'discovery',
      endpoint: 'urn:uuid:11111111-2222-4333-8444-555555555555',
    });
    await expect.poll(() => onlyDevice(store)[0]?.status, { timeout: 10_000 }).toBe('online');
    const id = onlyDevice(store)[0]!.id;
    await cam.stop();
    const moved = await camera({
      endpoint: 'urn:uuid:11111111-2222-4333-8444-555555555555',
      identity: { serial: cam.endpoint.slice(-12) },
    });
    m.addTarget({
      url: moved.deviceServiceUrl,
      source: 'discovery',
      endpoint: 'URN:UUID:11111111-2222-4333-8444-555555555555',
    });
    await expect.poll(() => store.getCamera(id)?.onvifUrl, { timeout: 10_000 }).toBe(moved.deviceServiceUrl);
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    expect(onlyDevice(store)).toHaveLength(1);
  });
});

describe('backoffMs', () => {
  it('grows exponentially up to the cap, with full jitter', () => {
    expect([0, 1, 2, 3, 10].map((n) => backoffMs(n, 60_000, () => 1))).toEqual([1000, 2000, 4000, 8000, 60_000]);
    expect(backoffMs(5, 60_000, () => 0)).toBe(0);
    expect(backoffMs(1000, 60_000, () => 0.5)).toBe(30_000);
  });
});
