import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type GatewayEvents } from '../../src/domain/bus.js';
import { ConflictError, InvalidSettingError, NotFoundError, NotSupportedError } from '../../src/domain/errors.js';
import { CameraManager, type StreamProbe } from '../../src/onvif/manager.js';
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

/**
 * Plain RTSP cameras as the fake probe finds them, by URL: the account each lets in. A URL not
 * listed answers nothing (offline).
 */
type Streams = Map<string, { username: string | null; password: string | null }>;

function probeOf(streams: Streams): StreamProbe {
  return async ({ url, username, password }) => {
    const cam = streams.get(url);
    if (!cam) return { status: 'offline', reason: 'connection refused' };
    if (cam.username !== username || cam.password !== password)
      return { status: 'unauthorized', reason: 'DESCRIBE: the camera refused the credentials' };
    return { status: 'online', reason: null };
  };
}

/** This gateway's relay, as the setup is told of it: port 8554 on loopback. */
const isOwnRelay = (host: string, port: number) => port === 8554 && (host === '127.0.0.1' || host === 'localhost');

function gateway(fileUrls: string[] = [], streams: Streams = new Map()) {
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
  const manager = () =>
    new CameraManager({
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
      probeStream: probeOf(streams),
    });
  const cameras = manager();
  /** The manager of a gateway started again over the same database: what it watches, it finds there. */
  const restarted = async () => {
    await cameras.stop();
    const again = manager();
    cleanups.push(() => again.stop());
    again.start([]);
    return again;
  };
  const setup = new CameraSetup({
    store,
    cameras,
    secretBox,
    bus,
    logger,
    fileUrls: new Set(fileUrls),
    continuousAvailable: false,
    isOwnRelay,
  });
  cleanups.push(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  cleanups.push(() => cameras.stop());
  return { store, cameras, setup, seen, lines, restarted };
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

describe('CameraSetup, plain RTSP cameras', () => {
  const MAIN = 'rtsp://10.0.0.7:554/Streaming/Channels/101';
  const SUB = 'rtsp://10.0.0.7/Streaming/Channels/102';
  const rtsp = (over: Partial<Parameters<CameraSetup['addRtsp']>[0]> = {}) => ({
    url: MAIN,
    subUrl: SUB,
    username: null,
    password: null,
    name: 'Drive',
    ...over,
  });

  it('adds one by URL, the account taken out of it: offline at once, then online; video only', async () => {
    const streams: Streams = new Map([
      ['rtsp://10.0.0.7/Streaming/Channels/101', { username: 'admin', password: 'pa:ss' }],
    ]);
    const { store, cameras, setup, lines } = gateway([], streams);
    const device = setup.addRtsp(rtsp({ url: 'rtsp://admin:pa%3Ass@10.0.0.7:554/Streaming/Channels/101' }), 'alice');
    expect(device).toMatchObject({
      name: 'Drive',
      status: 'offline',
      source: 'rtsp',
      address: '10.0.0.7',
      rtspUrl: 'rtsp://10.0.0.7/Streaming/Channels/101',
      subRtspUrl: SUB,
      ptz: null,
      settings: { username: 'admin', hasPassword: true, source: { name: 'app', account: 'app' } },
    });
    await expect.poll(() => store.getDevice(device.id)?.status, { timeout: 10_000 }).toBe('online');
    // The relay reads both streams with the account; nothing for the camera's own snapshot or events.
    expect(cameras.streamSource(device.id, 'main')).toEqual({
      url: 'rtsp://10.0.0.7/Streaming/Channels/101',
      username: 'admin',
      password: 'pa:ss',
    });
    expect(cameras.streamSource(device.id, 'sub')?.url).toBe(SUB);
    expect(cameras.snapshotSource(device.id)).toBeNull();
    expect(cameras.hasEventSubscription(device.id)).toBe(false);
    await expect(cameras.run(device.id, 'reboot')).rejects.toThrow(NotSupportedError);
    await expect(cameras.run(device.id, 'sync_time')).rejects.toThrow(/cannot set its clock/);
    await expect(cameras.ptzCommand(device.id, { action: 'ptz_stop' }, 'alice')).rejects.toThrow(NotSupportedError);
    expect(lines.join('\n')).not.toContain('pa:ss');
    expect(lines.join('\n')).not.toContain('pa%3Ass');
  });

  it('goes unauthorized with a wrong password and online at once when the account is fixed', async () => {
    const streams: Streams = new Map([[MAIN.replace(':554', ''), { username: 'admin', password: 'right' }]]);
    const { store, setup, seen } = gateway([], streams);
    const { id } = setup.addRtsp(rtsp({ username: 'admin', password: 'wrong' }), 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('unauthorized');
    setup.change(id, { account: { username: 'admin', password: 'right' } }, 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    expect(seen).toContainEqual(expect.objectContaining({ deviceId: id, fields: ['account'] }));
  });

  it('refuses what cannot be a camera of its own, storing nothing', () => {
    const { store, setup } = gateway();
    const refusals: Array<[Partial<Parameters<CameraSetup['addRtsp']>[0]>, RegExp]> = [
      [{ url: 'http://10.0.0.7/x' }, /^rtsp_url must start with rtsp/],
      [{ subUrl: 'rtsp:///x' }, /^sub_rtsp_url names no host/],
      [{ url: 'rtsp://127.0.0.1:8554/live/abc' }, /^rtsp_url points at this gateway's own RTSP relay/],
      [{ url: 'rtsp://127.1:8554/x' }, /own RTSP relay/],
      [{ subUrl: 'rtsp://localhost:8554/x' }, /^sub_rtsp_url points at this gateway's own/],
      [{ url: 'rtsp://a:b@10.0.0.7/x', username: 'a', password: 'b' }, /^rtsp_url holds a username and password, and/],
      [{ subUrl: 'rtsp://a:c@10.0.0.7/y', url: 'rtsp://a:b@10.0.0.7/x' }, /^sub_rtsp_url holds another username/],
    ];
    for (const [over, problem] of refusals) {
      let thrown: unknown = null;
      try {
        setup.addRtsp(rtsp(over), 'alice');
      } catch (err) {
        thrown = err;
      }
      expect(thrown, JSON.stringify(over)).toBeInstanceOf(InvalidSettingError);
      expect((thrown as Error).message).toMatch(problem);
    }
    expect(store.listDevices({ limit: 5, after: null }).items).toEqual([]);
    expect(store.listCameras()).toEqual([]);
  });

  it('refuses a second camera with one of its URLs (409); removed, it comes back under its id', async () => {
    const { store, setup } = gateway();
    const first = setup.addRtsp(rtsp(), 'alice');
    // The same stream however spelled: default port, host case, credentials.
    expect(() => setup.addRtsp(rtsp({ url: 'rtsp://u:p@10.0.0.7/Streaming/Channels/101', subUrl: null }), 'a')).toThrow(
      ConflictError,
    );
    expect(() => setup.addRtsp(rtsp({ url: 'RTSP://10.0.0.7:554/Streaming/Channels/102', subUrl: null }), 'a')).toThrow(
      ConflictError,
    );
    expect(() => setup.addRtsp(rtsp({ url: 'rtsp://10.0.0.8/x', subUrl: MAIN }), 'a')).toThrow(/already known/);
    expect(store.listDevices({ limit: 5, after: null }).items.map((d) => d.id)).toEqual([first.id]);
    await setup.remove(first.id, 'alice');
    expect(setup.addRtsp(rtsp(), 'alice').id).toBe(first.id);
  });

  it('moves to new URLs (PATCH): the old one is free again, the status follows the new one', async () => {
    const streams: Streams = new Map([['rtsp://10.0.0.9/live', { username: null, password: null }]]);
    const { store, setup, seen } = gateway([], streams);
    const { id } = setup.addRtsp(rtsp(), 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('offline');
    const moved = setup.change(id, { streams: { main: 'rtsp://10.0.0.9/live', sub: null } }, 'alice');
    expect(moved).toMatchObject({ rtspUrl: 'rtsp://10.0.0.9/live', subRtspUrl: null, address: '10.0.0.9' });
    expect(seen).toContainEqual(expect.objectContaining({ deviceId: id, fields: ['rtsp_urls'] }));
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    // Its old URL names no camera now; a new one there is another device.
    expect(setup.addRtsp(rtsp({ name: 'New' }), 'alice').id).not.toBe(id);
    expect(() => setup.change(id, { streams: { main: MAIN } }, 'alice')).toThrow(ConflictError);
    expect(() => setup.change(id, { streams: { sub: 'rtsp://127.0.0.1:8554/x' } }, 'alice')).toThrow(
      InvalidSettingError,
    );
    expect(store.getDevice(id)).toMatchObject({ rtspUrl: 'rtsp://10.0.0.9/live', subRtspUrl: null });
  });

  it('is watched again after a restart, at the URL it was last given', async () => {
    const streams: Streams = new Map([['rtsp://10.0.0.9/live', { username: null, password: null }]]);
    const { store, setup, restarted } = gateway([], streams);
    const { id } = setup.addRtsp(rtsp(), 'alice');
    setup.change(id, { streams: { main: 'rtsp://10.0.0.9/live' } }, 'alice');
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    store.setDeviceStatus(id, 'offline', Date.now());
    const again = await restarted();
    await expect.poll(() => store.getDevice(id)?.status, { timeout: 10_000 }).toBe('online');
    expect(again.streamSource(id, 'main')?.url).toBe('rtsp://10.0.0.9/live');
    expect(again.streamSource(id, 'sub')?.url).toBe(SUB);
  });

  it('refuses stream URLs for a camera reached over ONVIF', async () => {
    const cam = await camera();
    const { setup } = gateway();
    const { id } = setup.add({ host: hostOf(cam), username: 'admin', password: 'pw', name: null }, 'alice');
    expect(() => setup.change(id, { streams: { main: 'rtsp://10.0.0.9/live' } }, 'alice')).toThrow(
      /^rtsp_url is only for a camera added by its RTSP address/,
    );
  });
});
