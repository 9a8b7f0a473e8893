import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { addUser, registerClient, signInAsWebApp, signOutWebApp, tokenRequest } from '../../support/oauth.js';
import { openSse, type SseEvent, type SseStream } from '../../support/sse.js';

// GET /v1/events over real HTTPS ends when its token's grant is revoked, not when the token
// expires: sign-out (POST /oauth/revoke, in the gateway), and `users remove`, `users set-role`
// (lowered) and `clients remove` run as the real CLI on the same SQLite file (another process,
// seen through data_version). A stream whose grant lives on is left alone.

const CLI = path.resolve(import.meta.dirname, '../../../dist/cli.js');
const SCOPE = 'devices:read alerts:read';

let t: TestGateway;
let config = '';
const open: SseStream[] = [];

beforeAll(async () => {
  t = await startTestGateway({ events: { heartbeat_s: 1 } });
  config = path.join(t.dataDir, 'cli.yaml');
  writeFileSync(config, `gateway:\n  data_dir: ${t.dataDir}\n`);
  for (const name of ['ann', 'bob', 'cat', 'dan']) await addUser(t.gw.store, name, `${name} password 1`);
});
afterAll(async () => {
  for (const s of open) s.close();
  await t.stop();
});

async function subscribe(access: string): Promise<SseStream> {
  const s = await openSse(t.gw.apiUrl, readFileSync(t.gw.certFile), { authorization: `Bearer ${access}` });
  open.push(s);
  expect(s.status).toBe(200);
  return s;
}
const signIn = (username: string) =>
  signInAsWebApp(t.gw.apiUrl, t.request, { username, password: `${username} password 1` }, SCOPE);
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args, '--config', config], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '' },
  });
const ofType = (type: string) => (e: SseEvent) => e.event === type;

/** The stream says it ends because of the revocation, and ends. */
async function endsRevoked(s: SseStream): Promise<void> {
  const end = await s.next(ofType('end'), 15_000);
  expect(JSON.parse(end.data)).toEqual({ reason: 'token_revoked' });
  expect(await s.ended).toBe('end');
}

async function revokedCount(): Promise<number> {
  const line = (await t.metrics())
    .split('\n')
    .find((l) => l.startsWith('edge_gateway_event_stream_disconnects_total{reason="token_revoked"} '));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('GET /v1/events and revoked grants', { timeout: 90_000 }, () => {
  it('ends the stream of a signed-out session soon; another session goes on receiving events', async () => {
    const ann = await signIn('ann');
    const bob = await signIn('bob');
    const annStream = await subscribe(ann.access);
    const bobStream = await subscribe(bob.access);

    // Sign-out, as the web app does it: the refresh token revoked, which revokes its grant.
    const out = await signOutWebApp(t.request, ann.refresh);
    expect(out.status).toBe(200);
    await endsRevoked(annStream);
    expect(await revokedCount()).toBe(1);

    t.gw.store.upsertDevice({
      id: 'cam-r',
      name: 'Yard',
      type: 'camera',
      status: 'online',
      model: null,
      manufacturer: null,
      firmwareVersion: null,
      lastSeenAt: Date.now(),
    });
    t.gw.store.insertAlert({
      id: 'alr-after',
      deviceId: 'cam-r',
      type: 'motion',
      message: 'Motion in the yard',
      createdAt: Date.now(),
    });
    const alert = await bobStream.next((e) => e.event === 'alert.created', 10_000);
    expect(JSON.parse(alert.data)).toMatchObject({ id: 'alr-after' });
    expect(annStream.events.some((e) => e.event === 'alert.created')).toBe(false);
  });

  it('ends the streams of a user removed, or whose role is lowered, by the CLI in another process', async () => {
    const cat = await subscribe((await signIn('cat')).access);
    const dan = await subscribe((await signIn('dan')).access);
    expect(cli('users', 'remove', '--username', 'cat').status).toBe(0);
    await endsRevoked(cat);
    expect(dan.events.some((e) => e.event === 'end')).toBe(false);
    expect(cli('users', 'set-role', '--username', 'dan', '--role', 'viewer').status).toBe(0);
    await endsRevoked(dan);
  });

  it('ends the stream of a client removed by the CLI', async () => {
    const client = registerClient(t.gw.store, { redirectUris: [], grants: ['client_credentials'] });
    const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
    const res = await tokenRequest(
      t.request,
      { grant_type: 'client_credentials', scope: 'alerts:read' },
      { authorization: basic },
    );
    expect(res.status).toBe(200);
    const s = await subscribe((res.json() as { access_token: string }).access_token);
    expect(cli('clients', 'remove', '--client-id', client.clientId).status).toBe(0);
    await endsRevoked(s);
  });
});
