import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

// The whole path: a simulated camera in the config, adopted by the started gateway, seen and
// controlled through real HTTPS requests.

let cam: SimulatedCamera;
let locked: SimulatedCamera;
let t: TestGateway;
const hostile: Server[] = [];
// Cameras are untrusted input: each of these answers every request badly in its own way.
const HOSTILE: Array<[string, ((res: import('node:http').ServerResponse) => void) | null]> = [
  [
    'Huge',
    (res) =>
      res.end(
        `<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>${'x'.repeat(3 << 20)}</env:Body></env:Envelope>`,
      ),
  ],
  [
    'Entities',
    (res) =>
      res.end(
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>&a;&a;</env:Body></env:Envelope>',
      ),
  ],
  ['Garbage', (res) => res.end('\u0000\u0001 not xml at all <<<')],
  ['Silent', null],
];
type Device = { id: string; name: string; status: string; model: string | null };

beforeAll(async () => {
  cam = new SimulatedCamera({
    username: 'admin',
    password: 'open-sesame',
    skewMs: 7200_000,
    rebootMs: 4000,
    identity: { model: 'SIM-8MP', manufacturer: 'SimCam' },
  });
  locked = new SimulatedCamera({ username: 'admin', password: 'other' });
  await cam.start();
  await locked.start();
  const hostileCameras = [];
  for (const [name, answer] of HOSTILE) {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer?.(res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hostile.push(server);
    hostileCameras.push({
      name,
      onvif_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/onvif/device_service`,
      username: 'admin',
      password: 'pw',
    });
  }
  t = await startTestGateway({
    cameras: [
      { name: 'Front door', onvif_url: cam.deviceServiceUrl, username: 'admin', password: 'open-sesame' },
      { name: 'Locked', onvif_url: locked.deviceServiceUrl, username: 'admin', password: 'wrong' },
      ...hostileCameras,
    ],
    // Reconnection waits of at most 2 s: the reboot test's camera is back within its poll window
    // whatever the jitter (at 60 s a run of unlucky draws outlasted it, seen on a loaded machine).
    onvif: { discovery: { enabled: false }, health_interval_s: 1, max_backoff_s: 2 },
  });
});
afterAll(async () => {
  await t.stop();
  await cam.stop();
  await locked.stop();
  for (const server of hostile) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

const devices = async () =>
  ((await t.request('/v1/devices', { headers: await t.auth('devices:read') })).json() as { data: Device[] }).data;
const byName = async (name: string) => (await devices()).find((d) => d.name === name);

describe('cameras through the API', () => {
  it('lists the adopted camera online and the one with wrong credentials unauthorized', async () => {
    await expect.poll(async () => (await byName('Front door'))?.status, { timeout: 15_000 }).toBe('online');
    await expect.poll(async () => (await byName('Locked'))?.status, { timeout: 15_000 }).toBe('unauthorized');
    expect(await byName('Front door')).toMatchObject({ type: 'camera', model: 'SIM-8MP', manufacturer: 'SimCam' });
    const body = JSON.stringify(await devices());
    expect(body).not.toContain('open-sesame'); // no credentials, addresses or stream URIs in the Device resource
    expect(body).not.toContain(cam.baseUrl);
  });

  it('syncs the camera clock and reboots it through POST /v1/devices/{id}/control', async () => {
    const id = (await byName('Front door'))!.id;
    const headers = await t.auth('devices:write');
    const sync = await t.request(`/v1/devices/${id}/control`, {
      method: 'POST',
      headers,
      body: { action: 'sync_time' },
    });
    expect(sync.status, sync.text).toBe(200);
    expect(sync.json()).toMatchObject({ device_id: id, action: 'sync_time', status: 'succeeded', error: null });
    expect(Math.abs(cam.nowMs() - Date.now())).toBeLessThan(2000);

    const reboot = await t.request(`/v1/devices/${id}/control`, {
      method: 'POST',
      headers,
      body: { action: 'reboot' },
    });
    expect(reboot.status).toBe(200);
    expect(reboot.json()).toMatchObject({ action: 'reboot', status: 'succeeded' });
    await expect.poll(async () => (await byName('Front door'))?.status, { timeout: 15_000 }).toBe('offline');
    await expect.poll(async () => (await byName('Front door'))?.status, { timeout: 15_000 }).toBe('online');
    const alerts = (
      await t.request(`/v1/alerts?device_id=${id}&type=device_offline`, { headers: await t.auth('alerts:read') })
    ).json() as { data: unknown[] };
    expect(alerts.data.length).toBeGreaterThanOrEqual(1);
  });

  it('lists hostile cameras offline and keeps serving the API', async () => {
    for (const [name] of HOSTILE) {
      await expect.poll(async () => (await byName(name))?.status, { timeout: 20_000 }).toBe('offline');
    }
    expect((await t.request('/healthz')).status).toBe(200);
    expect((await byName('Front door'))?.status).toBe('online');
  });

  it('answers 409 for a camera it cannot control', async () => {
    const id = (await byName('Locked'))!.id;
    const res = await t.request(`/v1/devices/${id}/control`, {
      method: 'POST',
      headers: await t.auth('devices:write'),
      body: { action: 'reboot' },
    });
    expect(res.status).toBe(409);
    expect((res.json() as { error: string }).error).toBe('device_unavailable');
  });
});
