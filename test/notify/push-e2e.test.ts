import { execFile } from 'node:child_process';
import { createECDH, randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';
import { onlineDevicesByName, startTestGateway, type TestGateway } from '../support/gateway.js';
import { freeTcpPort } from '../support/mosquitto.js';
import { addUser, signInAsWebApp, signOutWebApp } from '../support/oauth.js';
import { startPushReceiver, type Answer, type FakeSubscription, type PushReceiver } from '../support/push-receiver.js';
import { tempDir } from '../support/temp-dir.js';
import { onlineCamera } from '../support/devices.js';

// Web Push end to end: the started gateway with a simulated camera, and a push service of the
// test's own on loopback (HTTPS, RFC 8030) that checks each push's VAPID JWT against the gateway's
// key and decrypts it with the subscription's keys, as a browser would. A person seen by the
// camera (its ONVIF event) arrives as a push with its picture; every kind of answer a push service
// gives, or fails to give, has the effect docs/notifications.md says, and the API answers meanwhile.

const execFileP = promisify(execFile);
const COOLDOWN_S = 3;
const TTL_S = 8;

let fleet: Fleet;
let t: TestGateway;
let rx: PushReceiver;
let deadPort: number;
let cameraId: string;
const scratch = tempDir('eg-push-e2e-');

beforeAll(async () => {
  rx = await startPushReceiver();
  deadPort = await freeTcpPort();
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'push-secret',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [
      {
        name: 'Front door',
        onvif_url: fleet.cameras[0]!.deviceServiceUrl,
        username: 'admin',
        password: 'push-secret',
      },
    ],
    recording: { pre_roll_s: 1, post_roll_s: 1 },
    notifications: {
      push_hosts: [new URL(rx.origin).host, `localhost:${deadPort}`],
      ca_file: rx.caFile,
      cooldown_s: COOLDOWN_S,
      ttl_s: TTL_S,
      request_timeout_s: 2,
      vapid_subject: 'mailto:owner@example.org',
    },
  });
  cameraId = (await onlineDevicesByName(t, ['Front door']))['Front door']!;
  const info = await t.request('/v1/push', { headers: await t.auth('alerts:read') });
  rx.vapidKey = (info.json() as { vapid_public_key: string }).vapid_public_key;
  for (const id of ['cam-gone', 'cam-429', 'cam-dead', 'cam-bad', 'cam-burst', 'cam-users'])
    t.gw.store.upsertDevice(onlineCamera(id, `Camera ${id}`));
}, 120_000);
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
  await rx?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function subscribe(
  sub: Pick<FakeSubscription, 'endpoint' | 'keys'>,
  headers?: Record<string, string>,
): Promise<string> {
  const res = await t.request('/v1/push/subscriptions', {
    method: 'POST',
    headers: headers ?? (await t.auth('alerts:read')),
    body: { endpoint: sub.endpoint, keys: sub.keys },
  });
  expect(res.status, res.text).toBe(201);
  return (res.json() as { id: string }).id;
}
/** A receiver subscription with these answers, subscribed. */
async function subscribed(answer?: (n: number) => Answer): Promise<{ sub: FakeSubscription; id: string }> {
  const sub = rx.subscribe(answer);
  return { sub, id: await subscribe(sub) };
}
let n = 0;
const raise = (deviceId: string) =>
  t.gw.store.insertAlert({
    id: `alr_e2e${++n}`,
    deviceId,
    type: 'human',
    message: `Person detected at ${deviceId}`,
    createdAt: Date.now(),
  }).id;
async function metric(name: string): Promise<number> {
  const line = (await t.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}
async function ffprobe(jpeg: Buffer): Promise<{ codec_name: string; width: number }> {
  const file = path.join(scratch, `p${++n}.jpg`);
  writeFileSync(file, jpeg);
  const { stdout } = await execFileP('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'stream=codec_name,width',
    '-of',
    'json',
    file,
  ]);
  return (JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number }> }).streams[0]!;
}
const jpegOf = (image: unknown) => Buffer.from(String(image).replace(/^data:image\/jpeg;base64,/, ''), 'base64');

describe('Web Push', { timeout: 90_000 }, () => {
  it("pushes a person the camera reports, with the event's picture, and the test notification", async () => {
    const { sub, id } = await subscribed();
    // The recorder's ring must hold a little footage before the event.
    await new Promise((r) => setTimeout(r, 2000));
    const camera = fleet.cameras[0]!;
    camera.trigger('human', true);
    const [push] = await rx.waitFor(sub, 1, 30_000);
    camera.trigger('human', false);
    expect(push!.problem).toBeNull();
    const alerts = await t.request(`/v1/alerts?device_id=${cameraId}&type=human`, {
      headers: await t.auth('alerts:read'),
    });
    const alertId = (alerts.json() as { data: Array<{ id: string }> }).data[0]!.id;
    expect(push!.payload).toMatchObject({
      title: 'Person at Front door',
      alert_id: alertId,
      device_id: cameraId,
      type: 'human',
      url: `/events?camera=${encodeURIComponent(cameraId)}&alert=${alertId}`,
    });
    expect(push!.headers).toMatchObject({ urgency: 'high', topic: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) });
    expect(Number(push!.headers.ttl)).toBeLessThanOrEqual(TTL_S);
    const jpeg = jpegOf(push!.payload!.image);
    expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
    const probed = await ffprobe(jpeg);
    expect(probed.codec_name).toBe('mjpeg');
    expect(probed.width).toBeLessThanOrEqual(160);

    const test = await t.request(`/v1/push/subscriptions/${id}/test`, {
      method: 'POST',
      headers: await t.auth('alerts:read'),
    });
    expect(test.status).toBe(200);
    expect(test.json()).toEqual({ delivered: true, status: 201, outcome: 'delivered to the push service (201)' });
    expect(sub.received.at(-1)!.payload).toMatchObject({ title: 'Test notification', type: 'test' });
  });

  it('removes a subscription its push service says is gone (410), and tells the test button so (404)', async () => {
    const gone = await subscribed(() => ({ status: 410, body: 'push subscription has unsubscribed or expired' }));
    raise('cam-gone');
    await rx.waitFor(gone.sub, 1);
    await expect.poll(() => t.gw.store.getPushSubscription(gone.id)).toBeNull();
    const other = await subscribed(() => ({ status: 404 }));
    const test = await t.request(`/v1/push/subscriptions/${other.id}/test`, {
      method: 'POST',
      headers: await t.auth('alerts:read'),
    });
    expect(test.json()).toEqual({
      delivered: false,
      status: 404,
      outcome: 'the push service answered 404 (the subscription has expired or was cancelled; it is removed)',
    });
    expect(t.gw.store.getPushSubscription(other.id)).toBeNull();
    expect(await metric('edge_gateway_push_subscriptions_removed_total')).toBeGreaterThanOrEqual(2);
  });

  it('sends again without the picture when the push service finds the push too large (413)', async () => {
    const { sub } = await subscribed((k) => ({ status: k === 1 ? 413 : 201 }));
    raise(cameraId);
    const [first, second] = await rx.waitFor(sub, 2);
    expect(jpegOf(first!.payload!.image).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(second!.payload).toMatchObject({ image: null, title: 'Person at Front door' });
  });

  it('waits as long as Retry-After says (429)', async () => {
    const { sub } = await subscribed((k) =>
      k === 1 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 201 },
    );
    raise('cam-429');
    const [first, second] = await rx.waitFor(sub, 2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2000);
    expect(second!.payload).toEqual(first!.payload);
  });

  it('tries a push service that is not there again, then gives the push up after its TTL', async () => {
    const before = await metric('edge_gateway_push_dropped_total{reason="expired"}');
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    await subscribe({
      endpoint: `https://localhost:${deadPort}/push/dead`,
      keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') },
    });
    raise('cam-dead');
    await expect
      .poll(() => metric('edge_gateway_push_dropped_total{reason="expired"}'), { timeout: 30_000, interval: 500 })
      .toBe(before + 1);
    expect(await metric('edge_gateway_push_failed_total{reason="unreachable"}')).toBeGreaterThanOrEqual(2);
  });

  it('follows no redirect, cuts off a hanging or endless answer, and the API answers meanwhile', async () => {
    const elsewhere = rx.subscribe();
    const redirect = await subscribed(() => ({ status: 307, headers: { location: elsewhere.endpoint } }));
    const hang = await subscribed(() => ({ hang: true }));
    const endless = await subscribed(() => ({ status: 500, bodyBytes: 10 * 1024 * 1024 }));
    raise('cam-bad');
    await rx.waitFor(redirect.sub, 1);
    await rx.waitFor(hang.sub, 1);
    await rx.waitFor(endless.sub, 1);
    // While a push service hangs, the API goes on answering.
    for (let i = 0; i < 5; i++) {
      const res = await t.request('/v1/alerts?limit=1', { headers: await t.auth('alerts:read') });
      expect(res.status).toBe(200);
    }
    // The hanging one is given up at the request's deadline and tried again; so is the 500.
    await rx.waitFor(hang.sub, 2);
    await rx.waitFor(endless.sub, 2);
    expect(endless.sub.longAnswers[0]!.finished).toBe(false);
    expect(endless.sub.longAnswers[0]!.written).toBeLessThan(10 * 1024 * 1024);
    expect(redirect.sub.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
    expect(await metric('edge_gateway_push_failed_total{reason="redirect"}')).toBe(1);
    expect(await metric('edge_gateway_push_failed_total{reason="timeout"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('edge_gateway_push_failed_total{reason="server_error"}')).toBeGreaterThanOrEqual(1);
  });

  it('collapses a burst on one camera: one push at once, the newest after the cooldown', async () => {
    const collapsed = await metric('edge_gateway_push_collapsed_total');
    const { sub } = await subscribed();
    const first = raise('cam-burst');
    await rx.waitFor(sub, 1);
    const burst: string[] = [];
    for (let i = 0; i < 4; i++) {
      burst.push(raise('cam-burst'));
      await new Promise((r) => setTimeout(r, 200));
    }
    const pushes = await rx.waitFor(sub, 2);
    expect(pushes.map((p) => p.payload?.alert_id)).toEqual([first, burst[3]]);
    expect(pushes[1]!.at - pushes[0]!.at).toBeGreaterThanOrEqual(COOLDOWN_S * 1000);
    // Every subscription here wants every camera's people: those waiting on their push service collapse too.
    expect(await metric('edge_gateway_push_collapsed_total')).toBeGreaterThanOrEqual(collapsed + 3);
    await new Promise((r) => setTimeout(r, (COOLDOWN_S + 1) * 1000));
    expect(sub.received).toHaveLength(2);
  });

  it('stops pushing to a user who signed out, or whose account was removed', async () => {
    await addUser(t.gw.store, 'ann', 'ann password 1', 'viewer');
    await addUser(t.gw.store, 'bob', 'bob password 1', 'viewer');
    const signIn = (username: string) =>
      signInAsWebApp(t.gw.apiUrl, t.request, { username, password: `${username} password 1` }, 'alerts:read');
    const ann = await signIn('ann');
    const bob = await signIn('bob');
    const annSub = rx.subscribe();
    const bobSub = rx.subscribe();
    const annId = await subscribe(annSub, { authorization: `Bearer ${ann.access}` });
    const bobId = await subscribe(bobSub, { authorization: `Bearer ${bob.access}` });
    raise('cam-users');
    await rx.waitFor(annSub, 1);
    await rx.waitFor(bobSub, 1);

    // Signing out of the web app revokes its grant, and the subscriptions made under it go.
    const out = await signOutWebApp(t.request, ann.refresh);
    expect(out.status).toBe(200);
    expect(t.gw.store.getPushSubscription(annId)).toBeNull();
    expect(t.gw.store.deleteLocalUser('bob')).toBe(true);
    expect(t.gw.store.getPushSubscription(bobId)).toBeNull();

    const witness = await subscribed();
    await new Promise((r) => setTimeout(r, (COOLDOWN_S + 1) * 1000));
    raise('cam-users');
    await rx.waitFor(witness.sub, 1);
    expect(annSub.received).toHaveLength(1);
    expect(bobSub.received).toHaveLength(1);
  });
});
