import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscoveryResponder, type DiscoveryResponder } from '../../src/onvif/discovery/responder.js';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { acquireLoopbackMulticast, type LoopbackMulticast } from '../support/multicast.js';

// Discovery end to end, on loopback only: a simulated camera answers the started gateway's unicast
// Probe (as a camera on another VLAN would), and the gateway adopts it with a configured account.

let cam: SimulatedCamera;
let responder: DiscoveryResponder;
let t: TestGateway;
let multicast: LoopbackMulticast;

beforeAll(async () => {
  // The gateway also probes and listens on `lo`; route the multicast group there so nothing leaves the machine.
  multicast = acquireLoopbackMulticast();
  cam = new SimulatedCamera({
    username: 'admin',
    password: 'pw',
    endpoint: 'urn:uuid:a1b2c3d4-0000-4000-8000-00000000c0de',
  });
  await cam.start();
  responder = await createDiscoveryResponder({
    endpoint: cam.endpoint,
    xaddrs: [cam.deviceServiceUrl],
    port: 0,
    address: '127.0.0.1',
    interfaceAddress: '127.0.0.1',
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    onvif: {
      discovery: {
        enabled: true,
        interfaces: ['lo'],
        unicast_targets: [`127.0.0.1:${responder.port}`],
        interval_s: 10,
      },
      credentials: [{ username: 'admin', password: 'pw' }],
      health_interval_s: 1,
    },
  });
});
afterAll(async () => {
  await t?.stop();
  await responder?.close();
  await cam?.stop();
  if (multicast?.ok) multicast.release();
});

describe('discovery → adoption', () => {
  it('finds the camera by a unicast probe and brings it online under an id from its endpoint reference', async () => {
    type Device = { id: string; status: string; name: string };
    const list = async () =>
      ((await t.request('/v1/devices', { headers: await t.auth('devices:read') })).json() as { data: Device[] }).data;
    await expect.poll(async () => (await list())[0]?.status, { timeout: 15_000 }).toBe('online');
    const [device] = await list();
    expect(device?.id).toMatch(/^dev_[\w-]{24}$/);
    expect(device?.name).toBe('SimCam SIM-4MP');
    const { aliasOf, deviceIdFrom } = await import('../../src/domain/device-alias.js');
    const alias = aliasOf.endpoint(cam.endpoint);
    expect(alias).not.toBeNull();
    if (alias) expect(device?.id).toBe(deviceIdFrom(alias));
  });
});
