import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DeviceCommandError,
  DeviceUnavailableError,
  NotSupportedError,
  UnknownPresetError,
} from '../../src/domain/errors.js';
import type { DevicePtz } from '../../src/domain/ptz.js';
import type { Device } from '../../src/domain/types.js';
import { OnvifSession } from '../../src/onvif/library.js';
import { PtzControl, type PtzStore } from '../../src/onvif/ptz.js';
import { SimulatedCamera, type SimulatedCameraOptions } from '../../src/onvif/simulator/camera.js';

// PTZ of one camera through its ONVIF session (src/onvif/library.ts) and the gateway's PTZ control
// (src/onvif/ptz.ts), against the simulated camera: what adoption learns, each command, the order of
// a camera's commands, the Stop the gateway sends itself, and refusals before anything is sent.

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The store's part: a device online with what describe() found. */
function fakeStore(ptz: DevicePtz | null): PtzStore & { ptz: DevicePtz | null } {
  const store = {
    ptz,
    getDevice: (id: string) => ({ id, status: 'online', ptz: store.ptz }) as Device,
    setCameraPtz: (_id: string, p: DevicePtz | null) => {
      store.ptz = p;
      return true;
    },
  };
  return store;
}

async function rig(opts: Partial<SimulatedCameraOptions> = {}) {
  const cam = new SimulatedCamera({ username: 'admin', password: 'pw', ...opts });
  await cam.start();
  cleanups.push(() => cam.stop());
  const session = await OnvifSession.connect(
    { url: cam.deviceServiceUrl, username: 'admin', password: 'pw' },
    { callTimeoutMs: 2000 },
  );
  cleanups.push(() => session.close());
  const described = await session.describe();
  const store = fakeStore(described.ptz);
  const control = new PtzControl({ sessionOf: () => session, store, logger: pino({ level: 'silent' }) });
  cleanups.push(() => control.stop());
  return { cam, session, described, store, control };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (cam: SimulatedCamera, op: string) => cam.calls.get(op) ?? 0;

describe('what adoption learns of PTZ', () => {
  it('a PTZ camera: its presets and centring; the session knows its home position', async () => {
    const { described, session } = await rig();
    expect(described.ptz).toEqual({ presets: [], canCenter: true });
    expect(session.ptzAbilities).toEqual({ homeSupported: true, canCenter: true });
  });

  it('a fixed camera has none, and is asked nothing of PTZ', async () => {
    const { described, session, cam } = await rig({ ptz: false });
    expect(described.ptz).toBeNull();
    expect(session.ptzAbilities).toBeNull();
    expect(count(cam, 'GetNodes') + count(cam, 'GetPresets')).toBe(0);
  });

  it('a camera without the field-of-view space or a home position says so', async () => {
    const { described, session } = await rig({ ptz: { fov: false, homeSupported: false } });
    expect(described.ptz).toEqual({ presets: [], canCenter: false });
    expect(session.ptzAbilities).toEqual({ homeSupported: false, canCenter: false });
  });

  it('a camera refusing the optional calls is still PTZ, with what it did answer', async () => {
    const { described } = await rig({ refuse: ['GetNodes', 'GetConfigurationOptions', 'GetPresets'] });
    expect(described.ptz).toEqual({ presets: [], canCenter: false });
  });
});

describe('PTZ commands', () => {
  const by = 'tester';

  it('moves, then stops when told: the position changes and then holds', async () => {
    const { cam, control } = await rig();
    await control.run('d', { action: 'ptz_move', pan: 1, tilt: -0.5, zoom: 0, timeoutMs: 5000 }, by);
    expect(cam.ptz!.moving()).toBe(true);
    await sleep(300);
    const result = await control.run('d', { action: 'ptz_stop' }, by);
    expect(result).toMatchObject({ deviceId: 'd', action: 'ptz_stop', status: 'succeeded', error: null });
    const stopped = cam.ptz!.position();
    expect(stopped.pan).toBeGreaterThan(0.1);
    expect(stopped.tilt).toBeLessThan(-0.05);
    expect(cam.ptz!.moving()).toBe(false);
    await sleep(200);
    expect(cam.ptz!.position()).toEqual(stopped);
  });

  it('stops a move by itself after its timeout when no stop comes', async () => {
    const { cam, control } = await rig();
    // 300 ms: outside the camera's own Timeout range (1–60 s), so only the gateway's Stop ends it.
    await control.run('d', { action: 'ptz_move', pan: 0.5, tilt: 0, zoom: 0, timeoutMs: 300 }, by);
    expect(count(cam, 'Stop')).toBe(0);
    await expect.poll(() => count(cam, 'Stop'), { timeout: 3000 }).toBe(1);
    expect(cam.ptz!.moving()).toBe(false);
  });

  it('a new move replaces the pending Stop: only the last move is stopped, once', async () => {
    const { cam, control } = await rig();
    await control.run('d', { action: 'ptz_move', pan: 0.5, tilt: 0, zoom: 0, timeoutMs: 300 }, by);
    await sleep(150);
    await control.run('d', { action: 'ptz_move', pan: -0.5, tilt: 0, zoom: 0, timeoutMs: 600 }, by);
    await sleep(300); // past the first move's timeout
    expect(count(cam, 'Stop')).toBe(0);
    expect(cam.ptz!.moving()).toBe(true);
    await expect.poll(() => count(cam, 'Stop'), { timeout: 3000 }).toBe(1);
  });

  it("sends one camera's commands in the order they came: a release's Stop never overtakes the press", async () => {
    const { cam, control } = await rig();
    const seen: string[] = [];
    cam.ptz!.onRequest((op) => seen.push(op));
    await Promise.all([
      control.run('d', { action: 'ptz_move', pan: 1, tilt: 0, zoom: 0, timeoutMs: 5000 }, by),
      control.run('d', { action: 'ptz_stop' }, by),
      control.run('d', { action: 'ptz_move', pan: 0, tilt: 1, zoom: 0, timeoutMs: 5000 }, by),
      control.run('d', { action: 'ptz_stop' }, by),
    ]);
    expect(seen).toEqual(['ContinuousMove', 'Stop', 'ContinuousMove', 'Stop']);
    expect(cam.ptz!.moving()).toBe(false);
  });

  it('saves, lists, recalls and removes presets, the Device kept up to date', async () => {
    const { cam, control, store } = await rig();
    await control.run('d', { action: 'ptz_move', pan: 1, tilt: 0, zoom: 0, timeoutMs: 5000 }, by);
    await sleep(200);
    await control.run('d', { action: 'ptz_stop' }, by);
    const at = cam.ptz!.position();
    await control.run('d', { action: 'ptz_set_preset', name: 'Gate & "drive"' }, by);
    expect(store.ptz?.presets).toEqual([{ token: '1', name: 'Gate & "drive"' }]);
    await control.run('d', { action: 'ptz_home' }, by);
    expect(cam.ptz!.position()).toEqual({ pan: 0, tilt: 0, zoom: 0 });
    await control.run('d', { action: 'ptz_goto_preset', preset: '1' }, by);
    expect(cam.ptz!.position()).toEqual(at);
    await control.run('d', { action: 'ptz_remove_preset', preset: '1' }, by);
    expect(store.ptz?.presets).toEqual([]);
  });

  it('centres on a point: the right edge of the picture turns it half a view to the right', async () => {
    const { cam, control } = await rig();
    await control.run('d', { action: 'ptz_center', x: 1, y: 0.5 }, by);
    expect(cam.ptz!.position().pan).toBeCloseTo(0.3);
    expect(cam.ptz!.position().tilt).toBeCloseTo(0);
  });

  it('refuses before sending anything: a fixed camera, no home, no centring, an unknown preset', async () => {
    const fixed = await rig({ ptz: false });
    await expect(fixed.control.run('d', { action: 'ptz_stop' }, by)).rejects.toBeInstanceOf(NotSupportedError);
    const bare = await rig({ ptz: { fov: false, homeSupported: false } });
    await expect(bare.control.run('d', { action: 'ptz_home' }, by)).rejects.toBeInstanceOf(NotSupportedError);
    await expect(bare.control.run('d', { action: 'ptz_center', x: 0, y: 0 }, by)).rejects.toBeInstanceOf(
      NotSupportedError,
    );
    await expect(bare.control.run('d', { action: 'ptz_goto_preset', preset: 'nope' }, by)).rejects.toBeInstanceOf(
      UnknownPresetError,
    );
    for (const op of ['Stop', 'GotoHomePosition', 'RelativeMove', 'GotoPreset'])
      expect(count(fixed.cam, op) + count(bare.cam, op)).toBe(0);
  });

  it('a camera that refuses, or drops the connection mid-move, is a command error; the move is stopped', async () => {
    const { cam, control } = await rig({ dropConnection: ['ContinuousMove'] });
    const move = control.run('d', { action: 'ptz_move', pan: 1, tilt: 0, zoom: 0, timeoutMs: 5000 }, by);
    await expect(move).rejects.toBeInstanceOf(DeviceCommandError);
    await expect(move).rejects.toThrow(/did not answer ptz_move/);
    expect(count(cam, 'Stop')).toBe(1);
    expect(cam.ptz!.moving()).toBe(false);
    cam.dropConnection.clear();
    await expect(control.run('d', { action: 'ptz_set_preset', name: 'x' }, by)).resolves.toMatchObject({
      status: 'succeeded',
    });
    // SetPreset while moving: the simulated camera refuses, as real ones do.
    await control.run('d', { action: 'ptz_move', pan: 1, tilt: 0, zoom: 0, timeoutMs: 5000 }, by);
    await expect(control.run('d', { action: 'ptz_goto_preset', preset: '1' }, by)).resolves.toBeDefined();
    await control.run('d', { action: 'ptz_move', pan: 1, tilt: 0, zoom: 0, timeoutMs: 5000 }, by);
    await expect(control.run('d', { action: 'ptz_set_preset', name: 'y' }, by)).rejects.toThrow(
      /camera refused ptz_set_preset/,
    );
  });

  it('an offline camera is unavailable; at shutdown a moving camera gets its Stop', async () => {
    const { cam, session, store } = await rig();
    let online = true;
    const control = new PtzControl({
      sessionOf: () => (online ? session : null),
      store,
      logger: pino({ level: 'silent' }),
    });
    await control.run('d', { action: 'ptz_move', pan: 1, tilt: 0, zoom: 0, timeoutMs: 5000 }, by);
    await control.stop();
    expect(count(cam, 'Stop')).toBe(1);
    await expect(control.run('d', { action: 'ptz_stop' }, by)).rejects.toBeInstanceOf(DeviceUnavailableError);
    online = false;
    const other = new PtzControl({ sessionOf: () => null, store, logger: pino({ level: 'silent' }) });
    await expect(other.run('d', { action: 'ptz_stop' }, by)).rejects.toBeInstanceOf(DeviceUnavailableError);
  });
});
