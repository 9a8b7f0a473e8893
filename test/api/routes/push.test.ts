import { createECDH, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { onlineCamera } from '../../support/devices.js';

// The push routes through the started gateway: the VAPID key, subscriptions made, listed, changed
// and removed only by their owner (the token's sub), and every endpoint or key the gateway must not
// send to refused with a 400 that says why.

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({
    notifications: {
      push_hosts: ['fcm.googleapis.com', '*.notify.windows.com', 'push.lan:8443'],
      max_subscriptions_per_user: 3,
    },
  });
  t.gw.store.upsertDevice(onlineCamera('cam-a', 'Front door'));
});
afterAll(() => t.stop());

const as = async (subject: string, scope = 'alerts:read') => {
  if (!t.gw.localIssuer) throw new Error('no local issuer');
  return { authorization: `Bearer ${await t.gw.localIssuer.issue({ subject, scope, ttlS: 600 })}` };
};
function browserKeys() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') };
}
const endpoint = () => `https://fcm.googleapis.com/fcm/send/${randomBytes(12).toString('base64url')}`;
async function subscribe(subject: string, body: Record<string, unknown> = {}) {
  return t.request('/v1/push/subscriptions', {
    method: 'POST',
    headers: await as(subject),
    body: { endpoint: endpoint(), keys: browserKeys(), ...body },
  });
}
type Sub = { id: string; endpoint: string; devices: string[] | null; types: string[]; quiet_hours: unknown };

describe('GET /v1/push', () => {
  it("gives the gateway's VAPID public key to any signed-in user with alerts:read", async () => {
    const res = await t.request('/v1/push', { headers: await as('viewer') });
    expect(res.status).toBe(200);
    const body = res.json() as { vapid_public_key: string; enabled: boolean };
    expect(body.enabled).toBe(true);
    const key = Buffer.from(body.vapid_public_key, 'base64url');
    expect(key).toHaveLength(65);
    expect(key[0]).toBe(4);
    expect((await t.request('/v1/push', { headers: await as('x', 'devices:read') })).status).toBe(403);
    expect((await t.request('/v1/push')).status).toBe(401);
  });
});

describe('POST /v1/push/subscriptions', () => {
  it('makes a subscription with the defaults (people and vehicles, every camera), 201; the same endpoint again, 200', async () => {
    const keys = browserKeys();
    const url = endpoint();
    const headers = await as('ann');
    const res = await t.request('/v1/push/subscriptions', {
      method: 'POST',
      headers,
      body: { endpoint: url, expirationTime: null, keys },
    });
    expect(res.status).toBe(201);
    const made = res.json() as Sub & { created_at: string };
    expect(made).toEqual({
      id: expect.stringMatching(/^psh_/),
      endpoint: url,
      devices: null,
      types: ['human', 'vehicle'],
      quiet_hours: null,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(res.headers.location).toBe(`/v1/push/subscriptions/${made.id}`);
    const again = await t.request('/v1/push/subscriptions', {
      method: 'POST',
      headers,
      body: {
        endpoint: url,
        keys,
        devices: ['cam-a'],
        types: ['motion', 'device_offline'],
        quiet_hours: { start: '22:00', end: '07:00' },
      },
    });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual({
      ...made,
      devices: ['cam-a'],
      types: ['motion', 'device_offline'],
      quiet_hours: { start: '22:00', end: '07:00' },
    });
  });

  const keys = browserKeys();
  it.each([
    ['an http endpoint', { endpoint: 'http://fcm.googleapis.com/fcm/send/x' }, 'body field endpoint must be https'],
    [
      'a private address',
      { endpoint: 'https://192.168.1.1/push' },
      'body field endpoint host 192.168.1.1 is a loopback, link-local or private address',
    ],
    [
      'loopback',
      { endpoint: 'https://127.0.0.1:8443/push' },
      'body field endpoint host 127.0.0.1 is a loopback, link-local or private address',
    ],
    [
      'localhost, not listed',
      { endpoint: 'https://localhost/push' },
      'body field endpoint host localhost is not a known push service (notifications.push_hosts)',
    ],
    [
      'a host not listed',
      { endpoint: 'https://push.example.com/x' },
      'body field endpoint host push.example.com is not a known push service (notifications.push_hosts)',
    ],
    [
      'a port not listed',
      { endpoint: 'https://push.lan/x' },
      'body field endpoint port 443 of push.lan is not allowed (notifications.push_hosts lists 8443)',
    ],
    [
      'credentials in the URL',
      { endpoint: 'https://a:b@fcm.googleapis.com/fcm/send/x' },
      'body field endpoint must not carry a user name or password',
    ],
    ['no URL at all', { endpoint: 'fcm.googleapis.com' }, 'body field endpoint is not a URL'],
    [
      'a huge endpoint',
      { endpoint: `https://fcm.googleapis.com/${'a'.repeat(3000)}` },
      'body field endpoint must not have more than 2048 characters',
    ],
    [
      'a huge key',
      { keys: { ...keys, p256dh: 'A'.repeat(5000) } },
      'body field keys.p256dh must not have more than 256 characters',
    ],
    ['malformed base64', { keys: { ...keys, auth: 'not base64!' } }, 'body field keys.auth must be base64url'],
    [
      'a key of the wrong length',
      { keys: { ...keys, p256dh: keys.p256dh.slice(0, 40) } },
      'body field keys.p256dh must be a 65-byte uncompressed P-256 point (got 30 bytes)',
    ],
    [
      'a short auth secret',
      { keys: { ...keys, auth: randomBytes(10).toString('base64url') } },
      'body field keys.auth must be 16 bytes (got 10)',
    ],
    ['no keys', { keys: undefined }, 'body field keys is required'],
    ['an unknown type', { types: ['cat'] }, 'body field types.0 must be one of motion, human, vehicle, device_offline'],
    ['no type', { types: [] }, 'body field types must not have fewer than 1 items'],
    ['an unknown camera', { devices: ['cam-zz'] }, 'body field devices names no known camera (cam-zz)'],
    [
      'quiet hours that are no time',
      { quiet_hours: { start: '25:00', end: '07:00' } },
      'body field quiet_hours.start must match pattern "^([01][0-9]|2[0-3]):[0-5][0-9]$"',
    ],
    [
      'quiet hours of no length',
      { quiet_hours: { start: '07:00', end: '07:00' } },
      'body field quiet_hours must end at another time than it starts (no pushes at all: unsubscribe)',
    ],
  ])('refuses %s with 400', async (_what, change, description) => {
    const res = await t.request('/v1/push/subscriptions', {
      method: 'POST',
      headers: await as('ann'),
      body: { endpoint: endpoint(), keys, ...change },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: description });
  });

  it('allows a host of a *. entry, and bounds the subscriptions of one user (409)', async () => {
    const res = await subscribe('cid', { endpoint: 'https://wns2-by3p.notify.windows.com/w/?token=abc' });
    expect(res.status).toBe(201);
    expect((await subscribe('cid')).status).toBe(201);
    expect((await subscribe('cid')).status).toBe(201);
    const over = await subscribe('cid');
    expect(over.status).toBe(409);
    expect(over.json()).toEqual({
      error: 'conflict',
      error_description:
        'you have 3 push subscriptions already (notifications.max_subscriptions_per_user): remove one first',
    });
  });
});

describe("a user's own subscriptions", () => {
  it("lists, reads, changes, tests and removes only the caller's: another's id is 404", async () => {
    const mine = (await subscribe('dora')).json() as Sub;
    const theirs = (await subscribe('eve')).json() as Sub;
    const dora = await as('dora');
    const list = await t.request('/v1/push/subscriptions', { headers: dora });
    expect(list.status).toBe(200);
    expect(list.json()).toEqual({ data: [expect.objectContaining({ id: mine.id })], next_cursor: null });

    for (const [method, path, body] of [
      ['GET', `/v1/push/subscriptions/${theirs.id}`, undefined],
      ['PATCH', `/v1/push/subscriptions/${theirs.id}`, { types: ['motion'] }],
      ['DELETE', `/v1/push/subscriptions/${theirs.id}`, undefined],
      ['POST', `/v1/push/subscriptions/${theirs.id}/test`, undefined],
    ] as const) {
      const res = await t.request(path, { method, headers: dora, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((res.json() as { error: string }).error).toBe('not_found');
    }
    const eve = await as('eve');
    expect((await t.request(`/v1/push/subscriptions/${theirs.id}`, { headers: eve })).json()).toEqual(theirs);

    const changed = await t.request(`/v1/push/subscriptions/${mine.id}`, {
      method: 'PATCH',
      headers: dora,
      body: { types: ['human', 'motion'], quiet_hours: { start: '23:30', end: '06:15' } },
    });
    expect(changed.status).toBe(200);
    expect(changed.json()).toEqual({
      ...mine,
      types: ['human', 'motion'],
      quiet_hours: { start: '23:30', end: '06:15' },
    });
    const cleared = await t.request(`/v1/push/subscriptions/${mine.id}`, {
      method: 'PATCH',
      headers: dora,
      body: { quiet_hours: null, devices: ['cam-a'] },
    });
    expect(cleared.json()).toMatchObject({ quiet_hours: null, devices: ['cam-a'], types: ['human', 'motion'] });
    const empty = await t.request(`/v1/push/subscriptions/${mine.id}`, { method: 'PATCH', headers: dora, body: {} });
    expect(empty.status).toBe(400);

    const removed = await t.request(`/v1/push/subscriptions/${mine.id}`, { method: 'DELETE', headers: dora });
    expect(removed.status).toBe(204);
    expect((await t.request(`/v1/push/subscriptions/${mine.id}`, { headers: dora })).status).toBe(404);
    expect((await t.request(`/v1/push/subscriptions/${theirs.id}`, { headers: eve })).status).toBe(200);
  });
});
