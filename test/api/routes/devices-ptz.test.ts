import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCamera } from '../../../src/onvif/simulator/camera.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

// Pan, tilt and zoom through POST /v1/devices/{id}/control: the started gateway over real HTTPS,
// simulated cameras (one PTZ, one fixed, one that drops the connection when told to). What reaches
// the camera is read from the simulator itself: its position, and the operations it was sent.

let ptz: SimulatedCamera;
let fixed: SimulatedCamera;
let dropper: SimulatedCamera;
let t: TestGateway;
const logLines: string[] = [];
const ids: Record<string, string> = {};

interface DeviceJson {
  id: string;
  name: string;
  status: string;
  ptz: { presets: Array<{ token: string; name: string }>; can_center: boolean } | null;
}

beforeAll(async () => {
  ptz = new SimulatedCamera({ username: 'admin', password: 'pw' });
  fixed = new SimulatedCamera({ username: 'admin', password: 'pw', ptz: false });
  dropper = new SimulatedCamera({ username: 'admin', password: 'pw' });
  for (const c of [ptz, fixed, dropper]) await c.start();
  t = await startTestGateway(
    {
      cameras: [
        { name: 'Dome', onvif_url: ptz.deviceServiceUrl, username: 'admin', password: 'pw' },
        { name: 'Fixed', onvif_url: fixed.deviceServiceUrl, username: 'admin', password: 'pw' },
        { name: 'Dropper', onvif_url: dropper.deviceServiceUrl, username: 'admin', password: 'pw' },
      ],
      onvif: { health_interval_s: 1, max_backoff_s: 2 },
    },
    { logLines },
  );
  // All three adopted (a hook, where expect.poll does not belong).
  const headers = await t.auth('devices:read');
  for (let i = 0; ; i++) {
    const { data } = (await t.request('/v1/devices', { headers })).json() as { data: DeviceJson[] };
    for (const d of data) ids[d.name] = d.id;
    if (data.filter((d) => d.status === 'online').length === 3) break;
    if (i === 200) throw new Error('the simulated cameras were not adopted');
    await new Promise((r) => setTimeout(r, 100));
  }
});
afterAll(async () => {
  await t?.stop();
  for (const c of [ptz, fixed, dropper]) await c?.stop();
});

const control = async (name: string, body: object) =>
  t.request(`/v1/devices/${ids[name]}/control`, { method: 'POST', headers: await t.auth('devices:write'), body });
const device = async (name: string) =>
  (await t.request(`/v1/devices/${ids[name]}`, { headers: await t.auth('devices:read') })).json() as DeviceJson;
const sent = (cam: SimulatedCamera, op: string) => cam.calls.get(op) ?? 0;
const PTZ_OPS = [
  'ContinuousMove',
  'Stop',
  'GotoPreset',
  'SetPreset',
  'RemovePreset',
  'GotoHomePosition',
  'RelativeMove',
];
const ptzSent = (cam: SimulatedCamera) => PTZ_OPS.reduce((n, op) => n + sent(cam, op), 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the Device says what the camera can do', () => {
  it('a PTZ camera lists its presets and centring; a fixed camera has ptz null', async () => {
    expect((await device('Dome')).ptz).toEqual({ presets: [], can_center: true });
    expect((await device('Fixed')).ptz).toBeNull();
  });
});

describe('moving the camera', () => {
  it('moves on ptz_move and stops on ptz_stop: the camera turned, then holds still', async () => {
    const move = await control('Dome', { action: 'ptz_move', pan: 1, tilt: 0.5, timeout_ms: 5000 });
    expect(move.status, move.text).toBe(200);
    expect(move.json()).toMatchObject({ device_id: ids.Dome, action: 'ptz_move', status: 'succeeded', error: null });
    expect(ptz.ptz!.moving()).toBe(true);
    await sleep(300);
    const stop = await control('Dome', { action: 'ptz_stop' });
    expect(stop.status, stop.text).toBe(200);
    const at = ptz.ptz!.position();
    expect(at.pan).toBeGreaterThan(0.1);
    expect(at.tilt).toBeGreaterThan(0.05);
    expect(ptz.ptz!.moving()).toBe(false);
    await sleep(200);
    expect(ptz.ptz!.position()).toEqual(at);
  });

  it('stops the camera itself after timeout_ms when no ptz_stop comes', async () => {
    const stopsBefore = sent(ptz, 'Stop');
    const move = await control('Dome', { action: 'ptz_move', pan: -0.5, timeout_ms: 300 });
    expect(move.status, move.text).toBe(200);
    expect(ptz.ptz!.moving()).toBe(true);
    await expect.poll(() => sent(ptz, 'Stop'), { timeout: 5000 }).toBe(stopsBefore + 1);
    expect(ptz.ptz!.moving()).toBe(false);
  });

  it('goes home, and centres on a point of the picture', async () => {
    expect((await control('Dome', { action: 'ptz_home' })).status).toBe(200);
    expect(ptz.ptz!.position()).toEqual({ pan: 0, tilt: 0, zoom: 0 });
    const centre = await control('Dome', { action: 'ptz_center', x: 1, y: 0.5 });
    expect(centre.status, centre.text).toBe(200);
    expect(ptz.ptz!.position().pan).toBeCloseTo(0.3);
  });
});

describe('presets', () => {
  it('are saved, listed on the device, recalled and removed', async () => {
    await control('Dome', { action: 'ptz_home' });
    await control('Dome', { action: 'ptz_move', pan: 1, timeout_ms: 5000 });
    await sleep(200);
    await control('Dome', { action: 'ptz_stop' });
    const saved = ptz.ptz!.position();
    const set = await control('Dome', { action: 'ptz_set_preset', name: 'Gate & "drive"' });
    expect(set.status, set.text).toBe(200);
    const presets = (await device('Dome')).ptz?.presets;
    expect(presets).toEqual([{ token: expect.any(String), name: 'Gate & "drive"' }]);
    const token = presets![0]!.token;

    await control('Dome', { action: 'ptz_home' });
    const recall = await control('Dome', { action: 'ptz_goto_preset', preset: token });
    expect(recall.status, recall.text).toBe(200);
    expect(ptz.ptz!.position()).toEqual(saved);

    const removed = await control('Dome', { action: 'ptz_remove_preset', preset: token });
    expect(removed.status, removed.text).toBe(200);
    expect((await device('Dome')).ptz?.presets).toEqual([]);
    const gone = await control('Dome', { action: 'ptz_goto_preset', preset: token });
    expect(gone.status).toBe(400);
  });
});

describe('refusals', () => {
  it('a fixed camera answers 409 not_supported, and is sent nothing', async () => {
    for (const body of [{ action: 'ptz_move', pan: 1 }, { action: 'ptz_stop' }, { action: 'ptz_home' }]) {
      const res = await control('Fixed', body);
      expect(res.status, res.text).toBe(409);
      expect(res.json()).toMatchObject({ error: 'not_supported', error_description: expect.stringMatching(/fixed/) });
    }
    expect(ptzSent(fixed)).toBe(0);
  });

  it.each<[string, object, RegExp]>([
    ['pan above 1', { action: 'ptz_move', pan: 1.5 }, /pan/],
    ['tilt below -1', { action: 'ptz_move', tilt: -1.01 }, /tilt/],
    ['a velocity as text', { action: 'ptz_move', pan: '0.5' }, /pan/],
    ['a velocity of null', { action: 'ptz_move', zoom: null }, /zoom/],
    ['no axis', { action: 'ptz_move' }, /at least one/],
    ['an unknown field', { action: 'ptz_move', pan: 0.5, speed: 1 }, /unknown body field speed/],
    ['timeout_ms too short', { action: 'ptz_move', pan: 0.5, timeout_ms: 50 }, /timeout_ms/],
    ['timeout_ms too long', { action: 'ptz_move', pan: 0.5, timeout_ms: 60_000 }, /timeout_ms/],
    ['timeout_ms not whole', { action: 'ptz_move', pan: 0.5, timeout_ms: 500.5 }, /timeout_ms/],
    ['a field of another action', { action: 'ptz_move', pan: 0.5, preset: '1' }, /preset is not taken by ptz_move/],
    ['a field with ptz_stop', { action: 'ptz_stop', pan: 0 }, /pan is not taken by ptz_stop/],
    ['a field with reboot', { action: 'reboot', pan: 0 }, /pan is not taken by reboot/],
    ['an unknown preset', { action: 'ptz_goto_preset', preset: 'nope' }, /preset.*no preset "nope"/],
    ['removing an unknown preset', { action: 'ptz_remove_preset', preset: '99' }, /no preset "99"/],
    ['no preset', { action: 'ptz_goto_preset' }, /preset is required/],
    ['an empty preset name', { action: 'ptz_set_preset', name: '' }, /name/],
    ['a preset name too long', { action: 'ptz_set_preset', name: 'x'.repeat(65) }, /name/],
    ['a control character in a name', { action: 'ptz_set_preset', name: 'a\u0007b' }, /name/],
    ['a point outside the picture', { action: 'ptz_center', x: -0.1, y: 0.5 }, /x/],
    ['a point without y', { action: 'ptz_center', x: 0.5 }, /y is required/],
    ['an unknown action', { action: 'ptz_zoom', zoom: 1 }, /action must be one of/],
    ['no object', [1, 2], /object/],
  ])('%s → 400, nothing sent to the camera', async (_name, body, description) => {
    const before = ptzSent(ptz);
    const res = await control('Dome', body);
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(description),
    });
    expect(ptzSent(ptz)).toBe(before);
  });

  it('a camera that refuses answers 502 device_error', async () => {
    await control('Dome', { action: 'ptz_move', pan: 0.2, timeout_ms: 5000 });
    // Saving a preset while the camera moves is refused with a SOAP fault, as real cameras do.
    const res = await control('Dome', { action: 'ptz_set_preset', name: 'mid-move' });
    expect(res.status, res.text).toBe(502);
    expect(res.json()).toMatchObject({
      error: 'device_error',
      error_description: expect.stringMatching(/MovingPTZ|moving/),
    });
    expect((await control('Dome', { action: 'ptz_stop' })).status).toBe(200);
  });

  it('a camera that drops the connection mid-move answers 502; the daemon and the camera carry on', async () => {
    dropper.dropConnection.add('ContinuousMove');
    try {
      const res = await control('Dropper', { action: 'ptz_move', pan: 1, timeout_ms: 5000 });
      expect(res.status, res.text).toBe(502);
      expect(res.json()).toMatchObject({ error: 'device_error', error_description: expect.stringMatching(/ptz_move/) });
    } finally {
      dropper.dropConnection.clear();
    }
    // The gateway stopped what the camera may have begun.
    expect(sent(dropper, 'Stop')).toBe(1);
    expect(dropper.ptz!.moving()).toBe(false);
    expect((await t.request('/healthz')).status).toBe(200);
    const again = await control('Dropper', { action: 'ptz_move', tilt: -1, timeout_ms: 5000 });
    expect(again.status, again.text).toBe(200);
    expect((await control('Dropper', { action: 'ptz_stop' })).status).toBe(200);
    expect((await device('Dropper')).status).toBe('online');
  });
});

describe('the log', () => {
  it("says who made each PTZ action and each other control action (the token's subject)", async () => {
    expect((await control('Dome', { action: 'sync_time' })).status).toBe(200);
    const lines = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'camera ptz', action: 'ptz_move', by: 'tester', deviceId: ids.Dome, pan: 1 }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'camera ptz', action: 'ptz_set_preset', by: 'tester', name: 'Gate & "drive"' }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'camera ptz', action: 'ptz_stop', by: 'gateway (move timed out)' }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'camera ptz failed', action: 'ptz_move', by: 'tester', deviceId: ids.Dropper }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'camera control', action: 'sync_time', by: 'tester', deviceId: ids.Dome }),
    );
  });
});
