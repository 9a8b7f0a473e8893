import type { Static } from 'typebox';
import type { DeviceSchema } from '../../../src/domain/record-schemas.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_SCOPES } from '../../../src/auth/roles.js';
import { SimulatedCamera } from '../../../src/onvif/simulator/camera.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

// Cameras set up from the app through the started gateway over real HTTPS, with simulated ONVIF
// cameras and the gateway's own SQLite file: POST /v1/devices, PATCH and DELETE /v1/devices/{id}.
// Each refused change is read back to prove it changed nothing.

/** A Device as the API answers it (its schema). */
type Device = Static<typeof DeviceSchema>;

// Quotes, backslash, unicode beyond the BMP, 200 characters: what a camera's password may be.
const PASSWORD = `"q'uo\\te" ünï 🔒 ${'p'.repeat(200)}`.slice(0, 200);
const square = [
  [0.1, 0.1],
  [0.6, 0.1],
  [0.6, 0.6],
  [0.1, 0.6],
];
let fileCam: SimulatedCamera;
let appCam: SimulatedCamera;
let lockedCam: SimulatedCamera;
let t: TestGateway;
const logLines: string[] = [];

beforeAll(async () => {
  fileCam = new SimulatedCamera({ username: 'admin', password: 'file-pw' });
  appCam = new SimulatedCamera({ username: 'admin', password: PASSWORD });
  lockedCam = new SimulatedCamera({ username: 'admin', password: 'right-one' });
  for (const cam of [fileCam, appCam, lockedCam]) await cam.start();
  t = await startTestGateway(
    {
      cameras: [
        { name: 'Gate', onvif_url: fileCam.deviceServiceUrl, username: 'admin', password: 'file-pw', detection: 'on' },
      ],
      // A refused account is tried again only after the manager's wait (minutes): every fix below must apply at once.
      onvif: { health_interval_s: 1, max_backoff_s: 2 },
    },
    { logLines },
  );
});
afterAll(async () => {
  await t.stop();
  for (const cam of [fileCam, appCam, lockedCam]) await cam.stop();
});

const admin = () => t.auth('devices:read devices:write');
const hostOf = (cam: SimulatedCamera) => new URL(cam.baseUrl).host;
async function getDevice(id: string): Promise<{ status: number; device: Device }> {
  const res = await t.request(`/v1/devices/${id}`, { headers: await admin() });
  return { status: res.status, device: res.json() as Device };
}
async function statusOf(id: string): Promise<string> {
  return (await getDevice(id)).device.status;
}
async function patch(id: string, body: unknown, headers?: Record<string, string>) {
  return t.request(`/v1/devices/${id}`, { method: 'PATCH', headers: headers ?? (await admin()), body: body as object });
}
async function fileDeviceId(): Promise<string> {
  const res = await t.request('/v1/devices', { headers: await admin() });
  const gate = (res.json() as { data: Device[] }).data.find((d) => d.name === 'Gate');
  if (!gate) throw new Error('the configured camera is not listed');
  return gate.id;
}

describe('POST /v1/devices', () => {
  let id: string;

  it('adds an ONVIF camera by address: 201, offline at first, then online with a password of quotes, unicode and 200 characters', async () => {
    const res = await t.request('/v1/devices', {
      method: 'POST',
      headers: await admin(),
      body: { address: hostOf(appCam), username: 'admin', password: PASSWORD, name: 'Porch' },
    });
    expect(res.status, res.text).toBe(201);
    const device = res.json() as Device;
    id = device.id;
    expect(res.headers.location).toBe(`/v1/devices/${id}`);
    expect(device).toMatchObject({ name: 'Porch', status: 'offline', address: hostOf(appCam) });
    expect(device.settings).toMatchObject({ username: 'admin', has_password: true, enabled: true });
    expect(device.settings.source).toMatchObject({ name: 'app', account: 'app', detection: 'default' });
    expect(res.text).not.toContain(PASSWORD.slice(0, 20));
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('online');
    const listed = await t.request('/v1/devices', { headers: await admin() });
    expect(listed.text).not.toContain('pppppppp');
  });

  it('refuses a camera already known at that address, and one of the config file (409)', async () => {
    const headers = await admin();
    for (const address of [hostOf(appCam), hostOf(fileCam)]) {
      const res = await t.request('/v1/devices', {
        method: 'POST',
        headers,
        body: { address, username: 'admin', password: 'x' },
      });
      expect(res.status, res.text).toBe(409);
      expect(res.json()).toMatchObject({ error: 'conflict' });
    }
  });

  it.each([
    ['no address', { username: 'a', password: 'b' }, /address is required/],
    ['an ONVIF camera without its password', { address: '10.0.0.5', username: 'a' }, /password is required/],
    ['an address with a scheme', { address: 'http://10.0.0.5', username: 'a', password: 'b' }, /host\[:port\]/],
    ['an address with a path', { address: '10.0.0.5/onvif', username: 'a', password: 'b' }, /host\[:port\]/],
    ['port 0', { address: '10.0.0.5:0', username: 'a', password: 'b' }, /host\[:port\]/],
    ['no username', { address: '10.0.0.5', password: 'b' }, /username is required/],
    ['a number for a password', { address: '10.0.0.5', username: 'a', password: 5 }, /password/],
    ['a colon in the username', { address: '10.0.0.5', username: 'a:b', password: 'c' }, /username/],
    ['an unknown field', { address: '10.0.0.5', username: 'a', password: 'b', port: 80 }, /unknown body field port/],
  ])('answers 400 for %s, adding nothing', async (_what, body, message) => {
    const headers = await admin();
    const before = (await t.request('/v1/devices', { headers })).text;
    const res = await t.request('/v1/devices', { method: 'POST', headers, body });
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(message) });
    expect((await t.request('/v1/devices', { headers })).text).toBe(before);
  });

  it('DELETE removes it (204): no longer listed, 404, discovery would not bring it back; POST adds it again under its id', async () => {
    const headers = await admin();
    const del = await t.request(`/v1/devices/${id}`, { method: 'DELETE', headers });
    expect(del.status, del.text).toBe(204);
    expect(del.text).toBe('');
    expect((await getDevice(id)).status).toBe(404);
    expect((await t.request(`/v1/devices/${id}`, { method: 'DELETE', headers })).status).toBe(404);
    const again = await t.request('/v1/devices', {
      method: 'POST',
      headers,
      body: { address: hostOf(appCam), username: 'admin', password: PASSWORD },
    });
    expect(again.status, again.text).toBe(201);
    expect((again.json() as Device).id).toBe(id);
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('online');
  });
});

describe('PATCH /v1/devices/{id}', () => {
  let id: string;

  beforeAll(async () => {
    const res = await t.request('/v1/devices', {
      method: 'POST',
      headers: await admin(),
      body: { address: hostOf(lockedCam), username: 'admin', password: 'wrong' },
    });
    id = (res.json() as Device).id;
  });

  it('a wrong password shows unauthorized; the right one given by PATCH takes it online without a restart', async () => {
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('unauthorized');
    const res = await patch(id, { username: 'admin', password: 'right-one' });
    expect(res.status, res.text).toBe(200);
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('online');
  });

  it('changes the settings, read back as set, logged with who changed them and without the password', async () => {
    const body = {
      name: 'Driveway',
      detection: 'off',
      recording: 'off',
      motion_mask: [square],
      zones: [
        { name: 'door', polygon: square, required: true, alert_on_stationary: true, loitering_s: 60 },
        { name: 'lawn', polygon: square },
      ],
    };
    const res = await patch(id, body);
    expect(res.status, res.text).toBe(200);
    const { device } = await getDevice(id);
    expect(res.json()).toEqual(device);
    expect(device).toMatchObject({ name: 'Driveway', settings: { detection: 'off', recording: 'off' } });
    expect(device.settings.motion_mask).toEqual([square]);
    expect(device.settings.zones).toEqual([
      { name: 'door', polygon: square, required: true, alert_on_stationary: true, loitering_s: 60 },
      { name: 'lawn', polygon: square, required: false, alert_on_stationary: false, loitering_s: null },
    ]);
    expect(device.settings.source).toMatchObject({
      name: 'app',
      detection: 'app',
      recording: 'app',
      motion_mask: 'app',
      zones: 'app',
      enabled: 'default',
    });
    const audit = logLines.filter((l) => l.includes('camera settings changed'));
    expect(audit.at(-1)).toMatch(/"by":"tester"/);
    expect(logLines.join('\n')).not.toContain('right-one');
  });

  it('switches the camera off (offline) and on again (online)', async () => {
    const off = await patch(id, { enabled: false });
    expect(off.status, off.text).toBe(200);
    expect(off.json()).toMatchObject({ status: 'offline', settings: { enabled: false } });
    const on = await patch(id, { enabled: true });
    expect(on.status, on.text).toBe(200);
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('online');
  });

  const bowTie = [
    [0, 0],
    [1, 1],
    [1, 0],
    [0, 0.5],
  ];
  const corners = (n: number) =>
    Array.from({ length: n }, (_, i) => [
      0.5 + 0.4 * Math.cos((2 * Math.PI * i) / n),
      0.5 + 0.4 * Math.sin((2 * Math.PI * i) / n),
    ]);
  it.each([
    ['a number for the name', { name: 5 }, /name/],
    ['an empty name', { name: '' }, /name/],
    ['a blank name', { name: '   ' }, /name/],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, /name/],
    ['a control character in the name', { name: 'a\u0007b' }, /name/],
    ['a username without its password', { username: 'admin' }, /password is required with username/],
    ['a password without its username', { password: 'x' }, /username is required with password/],
    ['a password of 257 characters', { username: 'a', password: 'p'.repeat(257) }, /password/],
    ['a number for the username', { username: 5, password: 'x' }, /username/],
    ['an object for the password', { username: 'a', password: { text: 'x' } }, /password/],
    ['a string for enabled', { enabled: 'false' }, /enabled/],
    ['a number for recording', { recording: 1 }, /recording/],
    ['a string for required', { zones: [{ name: 'a', polygon: square, required: 'yes' }] }, /required/],
    [
      'a string for alert_on_stationary',
      { zones: [{ name: 'a', polygon: square, alert_on_stationary: 'yes' }] },
      /alert_on_stationary/,
    ],
    ['a loitering_s of 0', { zones: [{ name: 'a', polygon: square, loitering_s: 0 }] }, /loitering_s/],
    ['a loitering_s over an hour', { zones: [{ name: 'a', polygon: square, loitering_s: 3601 }] }, /loitering_s/],
    ['a fractional loitering_s', { zones: [{ name: 'a', polygon: square, loitering_s: 1.5 }] }, /loitering_s/],
    ['an unknown recording', { recording: 'always' }, /recording must be one of events, continuous, off/],
    ['an unknown detection', { detection: 'yes' }, /detection must be one of auto, on, off/],
    ['null detection', { detection: null }, /detection/],
    ['a mask that is no list', { motion_mask: square }, /motion_mask/],
    [
      'a corner past 1',
      {
        motion_mask: [
          [
            [0, 0],
            [1.5, 0],
            [0, 1],
          ],
        ],
      },
      /motion_mask/,
    ],
    [
      'a negative corner',
      {
        motion_mask: [
          [
            [0, 0],
            [-0.1, 0],
            [0, 1],
          ],
        ],
      },
      /motion_mask/,
    ],
    [
      'a corner of three numbers',
      {
        motion_mask: [
          [
            [0, 0, 0],
            [1, 0],
            [0, 1],
          ],
        ],
      },
      /motion_mask/,
    ],
    [
      'a corner of text',
      {
        motion_mask: [
          [
            ['0', 0],
            [1, 0],
            [0, 1],
          ],
        ],
      },
      /motion_mask/,
    ],
    [
      'two corners',
      {
        motion_mask: [
          [
            [0, 0],
            [1, 1],
          ],
        ],
      },
      /motion_mask/,
    ],
    ['65 corners', { motion_mask: [corners(65)] }, /motion_mask/],
    ['33 polygons', { motion_mask: Array.from({ length: 33 }, () => square) }, /motion_mask/],
    [
      'crossing edges',
      { motion_mask: [square, bowTie] },
      /motion_mask\[1\] is not a valid polygon: edges 0 and 2 cross/,
    ],
    ['a zone of crossing edges', { zones: [{ name: 'a', polygon: bowTie }] }, /zones\[0\]\.polygon .*cross/],
    [
      'a zone name twice',
      {
        zones: [
          { name: 'a', polygon: square },
          { name: 'a', polygon: square },
        ],
      },
      /zones\[1\]\.name/,
    ],
    ['a zone name with a blank', { zones: [{ name: 'front door', polygon: square }] }, /zones/],
    ['a zone without a polygon', { zones: [{ name: 'a' }] }, /polygon is required/],
    ['a zone with an unknown field', { zones: [{ name: 'a', polygon: square, colour: 'red' }] }, /unknown body field/],
    ['33 zones', { zones: Array.from({ length: 33 }, (_, i) => ({ name: `z${i}`, polygon: square })) }, /zones/],
    ['an unknown field', { name: 'ok', colour: 'red' }, /unknown body field colour/],
    ['an empty body', {}, /names no setting/],
    ['a body that is a list', [], /JSON object/],
  ])('answers 400 for %s, changing nothing', async (_what, body, message) => {
    const before = (await getDevice(id)).device;
    const res = await patch(id, body);
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(message) });
    expect((await getDevice(id)).device).toEqual(before);
  });

  it('answers 400 for a body of 1 MB, changing nothing', async () => {
    const before = (await getDevice(id)).device;
    const res = await patch(id, { name: 'x', zones: [{ name: 'a', polygon: square, pad: 'x'.repeat(1 << 20) }] });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/too large/),
    });
    expect((await getDevice(id)).device).toEqual(before);
  });

  it('answers 403 to a viewer, for each of the routes, changing nothing', async () => {
    const viewer = await t.auth(ROLE_SCOPES.viewer.join(' '));
    const before = (await getDevice(id)).device;
    const answers = [
      await patch(id, { name: 'Hacked' }, viewer),
      await t.request(`/v1/devices/${id}`, { method: 'DELETE', headers: viewer }),
      await t.request('/v1/devices', {
        method: 'POST',
        headers: viewer,
        body: { address: '10.0.0.9', username: 'a', password: 'b' },
      }),
    ];
    for (const res of answers) {
      expect(res.status, res.text).toBe(403);
      expect(res.json()).toMatchObject({ error: 'insufficient_scope' });
    }
    expect((await getDevice(id)).device).toEqual(before);
  });

  it('answers 404 for an unknown device', async () => {
    expect((await patch('dev_nope', { name: 'x' })).status).toBe(404);
  });
});

describe('a camera of the config file', () => {
  it('shows what the file sets as the file’s, refuses to change it (409) and changes the rest', async () => {
    const id = await fileDeviceId();
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('online');
    const { device: before } = await getDevice(id);
    expect(before.settings).toMatchObject({ detection: 'on', username: 'admin', has_password: true });
    expect(before.settings.source).toMatchObject({
      name: 'file',
      account: 'file',
      detection: 'file',
      zones: 'default',
    });
    for (const body of [
      { detection: 'off' },
      { name: 'Other' },
      { username: 'a', password: 'b' },
      { recording: 'continuous' },
    ]) {
      const res = await patch(id, body);
      expect(res.status, res.text).toBe(409);
      expect(res.json()).toMatchObject({ error: 'conflict' });
    }
    expect((await getDevice(id)).device).toEqual(before);
    const del = await t.request(`/v1/devices/${id}`, { method: 'DELETE', headers: await admin() });
    expect(del.status).toBe(409);
    const res = await patch(id, { zones: [{ name: 'gate', polygon: square, required: true }] });
    expect(res.status, res.text).toBe(200);
    expect((res.json() as Device).settings.source.zones).toBe('app');
  });
});

// Plain RTSP cameras (rtsp_url) as the API takes them: nothing listens at their URLs here (loopback
// port 9: refused at once), so they stay offline; device-setup-rtsp.test.ts has a real camera.
describe('a plain RTSP camera (rtsp_url)', () => {
  const SECRET = 'Sh3d-secret!';
  const URL_WITH_ACCOUNT = `rtsp://admin:${encodeURIComponent(SECRET)}@127.0.0.1:9/stream1`;
  let id: string;

  async function add(body: Record<string, unknown>) {
    return t.request('/v1/devices', { method: 'POST', headers: await admin(), body });
  }

  it('is added by its URL: 201 Device, source rtsp, the URL shown without its account, the password sealed', async () => {
    const res = await add({ rtsp_url: URL_WITH_ACCOUNT, sub_rtsp_url: 'rtsp://127.0.0.1:9/stream2', name: 'Shed' });
    expect(res.status, res.text).toBe(201);
    const device = res.json() as Device;
    id = device.id;
    expect(res.headers.location).toBe(`/v1/devices/${id}`);
    expect(device).toMatchObject({
      name: 'Shed',
      status: 'offline',
      source: 'rtsp',
      address: '127.0.0.1:9',
      rtsp_url: 'rtsp://127.0.0.1:9/stream1',
      sub_rtsp_url: 'rtsp://127.0.0.1:9/stream2',
      ptz: null,
      settings: { username: 'admin', has_password: true, source: { name: 'app', account: 'app' } },
    });
    for (const text of [res.text, JSON.stringify((await getDevice(id)).device)]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(encodeURIComponent(SECRET));
    }
    // The ONVIF cameras say what they are too.
    const listed = (await t.request('/v1/devices', { headers: await admin() })).json() as { data: Device[] };
    expect(listed.data.find((d) => d.name === 'Gate')).toMatchObject({ source: 'onvif', rtsp_url: null });
    await expect.poll(() => logLines.some((l) => l.includes('RTSP camera added'))).toBe(true);
    expect(logLines.join('\n')).not.toContain(SECRET);
    expect(logLines.join('\n')).not.toContain(encodeURIComponent(SECRET));
  });

  it('answers every control action 409 not_supported, saying why', async () => {
    for (const body of [
      { action: 'reboot' },
      { action: 'sync_time' },
      { action: 'ptz_stop' },
      { action: 'ptz_home' },
    ]) {
      const res = await t.request(`/v1/devices/${id}/control`, { method: 'POST', headers: await admin(), body });
      expect(res.status, res.text).toBe(409);
      expect(res.json()).toMatchObject({
        error: 'not_supported',
        error_description: expect.stringMatching(/added by its RTSP address: the gateway only reads its video/),
      });
    }
  });

  it('refuses a second camera with the same URL, however spelled (409), adding nothing', async () => {
    const headers = await admin();
    const before = (await t.request('/v1/devices', { headers })).text;
    for (const rtsp_url of [
      'rtsp://127.0.0.1:9/stream1',
      'RTSP://other:x@127.0.0.1:9/stream1',
      'rtsp://127.0.0.1:9/stream2',
    ]) {
      const res = await add({ rtsp_url, name: 'Again' });
      expect(res.status, res.text).toBe(409);
      expect(res.json()).toMatchObject({
        error: 'conflict',
        error_description: expect.stringMatching(/already known/),
      });
    }
    expect((await t.request('/v1/devices', { headers })).text).toBe(before);
  });

  const relay = () => t.gw.relayPort;
  it.each([
    [
      'an http:// URL',
      () => ({ rtsp_url: 'http://10.0.0.5/stream', name: 'x' }),
      /body field rtsp_url must start with rtsp:\/\/ or rtsps:\/\//,
    ],
    ['a URL without a host', () => ({ rtsp_url: 'rtsp:///stream', name: 'x' }), /body field rtsp_url names no host/],
    [
      'a URL with blanks',
      () => ({ rtsp_url: 'rtsp://10.0.0.5/my stream', name: 'x' }),
      /body field rtsp_url holds blanks/,
    ],
    ['port 0', () => ({ rtsp_url: 'rtsp://10.0.0.5:0/s', name: 'x' }), /body field rtsp_url has a port out of/],
    [
      'a URL of 2049 characters',
      () => ({ rtsp_url: `rtsp://10.0.0.5/${'a'.repeat(2033)}`, name: 'x' }),
      /body field rtsp_url must not have more than 2048 characters/,
    ],
    [
      'an account in the URL and in username and password',
      () => ({ rtsp_url: 'rtsp://a:b@10.0.0.5/s', username: 'a', password: 'b', name: 'x' }),
      /body field rtsp_url holds a username and password, and username and password are given too/,
    ],
    [
      'another account in the sub stream URL',
      () => ({ rtsp_url: 'rtsp://a:b@10.0.0.5/s', sub_rtsp_url: 'rtsp://a:c@10.0.0.5/t', name: 'x' }),
      /body field sub_rtsp_url holds another username or password than rtsp_url/,
    ],
    [
      "the gateway's own relay",
      () => ({ rtsp_url: `rtsp://127.0.0.1:${relay()}/live/abc`, name: 'x' }),
      /body field rtsp_url points at this gateway's own RTSP relay/,
    ],
    [
      "the relay's port on localhost",
      () => ({ rtsp_url: `rtsp://localhost:${relay()}/x`, name: 'x' }),
      /own RTSP relay/,
    ],
    [
      'the relay by another spelling of loopback',
      () => ({ rtsp_url: `rtsp://127.1:${relay()}/x`, name: 'x' }),
      /own RTSP relay/,
    ],
    ['the relay over IPv6 loopback', () => ({ rtsp_url: `rtsp://[::1]:${relay()}/x`, name: 'x' }), /own RTSP relay/],
    [
      'the relay as its sub stream',
      () => ({ rtsp_url: 'rtsp://10.0.0.5/s', sub_rtsp_url: `rtsp://127.0.0.1:${relay()}/x`, name: 'x' }),
      /body field sub_rtsp_url points at this gateway's own RTSP relay/,
    ],
    ['no name', () => ({ rtsp_url: 'rtsp://10.0.0.5/s' }), /body field name is required with rtsp_url/],
    ['a blank name', () => ({ rtsp_url: 'rtsp://10.0.0.5/s', name: '  ' }), /body field name/],
    [
      'a password without a username',
      () => ({ rtsp_url: 'rtsp://10.0.0.5/s', password: 'p', name: 'x' }),
      /body field username is required with password/,
    ],
    [
      'both an address and an RTSP URL',
      () => ({ address: '10.0.0.5', rtsp_url: 'rtsp://10.0.0.5/s', username: 'a', password: 'b' }),
      /body field rtsp_url is not taken with address/,
    ],
    [
      'a sub stream URL with an ONVIF address',
      () => ({ address: '10.0.0.5', sub_rtsp_url: 'rtsp://10.0.0.5/s', username: 'a', password: 'b' }),
      /body field sub_rtsp_url is not taken with address/,
    ],
    ['a number for the URL', () => ({ rtsp_url: 554, name: 'x' }), /body field rtsp_url/],
  ])('answers 400 for %s, adding nothing', async (_what, body, message) => {
    const headers = await admin();
    const before = (await t.request('/v1/devices', { headers })).text;
    const res = await add(body());
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(message) });
    expect((await t.request('/v1/devices', { headers })).text).toBe(before);
  });

  it('PATCH changes its settings and URLs, checked as when it was added; a refusal changes nothing', async () => {
    const moved = await patch(id, {
      name: 'Shed door',
      recording: 'off',
      rtsp_url: 'rtsp://127.0.0.1:9/main',
      sub_rtsp_url: null,
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json()).toMatchObject({
      name: 'Shed door',
      rtsp_url: 'rtsp://127.0.0.1:9/main',
      sub_rtsp_url: null,
      settings: { recording: 'off', username: 'admin', has_password: true },
    });
    const before = (await getDevice(id)).device;
    for (const [body, message] of [
      [{ rtsp_url: 'rtsps://' }, /body field rtsp_url/],
      [{ rtsp_url: `rtsp://127.0.0.1:${relay()}/x` }, /body field rtsp_url points at this gateway's own RTSP relay/],
      [{ sub_rtsp_url: 'ftp://127.0.0.1/x' }, /body field sub_rtsp_url must start with rtsp/],
      [
        { rtsp_url: 'rtsp://u:p@127.0.0.1:9/main', username: 'u', password: 'p' },
        /body field rtsp_url holds a username and password, and username and password are given too/,
      ],
    ] as const) {
      const res = await patch(id, body);
      expect(res.status, res.text).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(message) });
    }
    expect((await getDevice(id)).device).toEqual(before);
  });

  it('PATCH refuses stream URLs for an ONVIF camera (400), changing nothing', async () => {
    const gate = await fileDeviceId();
    const before = (await getDevice(gate)).device;
    const res = await patch(gate, { rtsp_url: 'rtsp://10.0.0.5/s' });
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toMatchObject({
      error_description: expect.stringMatching(/body field rtsp_url is only for a camera added by its RTSP address/),
    });
    expect((await getDevice(gate)).device).toEqual(before);
  });

  it('DELETE removes it (204); added again by its URL, it comes back under its id', async () => {
    const del = await t.request(`/v1/devices/${id}`, { method: 'DELETE', headers: await admin() });
    expect(del.status, del.text).toBe(204);
    expect((await getDevice(id)).status).toBe(404);
    const again = await add({ rtsp_url: 'rtsp://127.0.0.1:9/main', name: 'Shed' });
    expect(again.status, again.text).toBe(201);
    expect(again.json()).toMatchObject({ id, source: 'rtsp', settings: { username: null, has_password: false } });
  });
});
