import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LOGIN_RATE_LIMIT } from '../../../src/auth/oauth/login-rate-limit.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { addUser, FormBrowser, formFields, registerClient, type RegisteredClient } from '../../support/oauth.js';

// The login limit under parallel bursts over real HTTPS: every attempt is counted when it arrives,
// so a burst gets no more tries than one attempt after another would. The authorization server's
// clock stands still, so no lock can run out during a burst however slow the machine is.

const USER = { username: 'alice', password: 'correct horse battery staple' };
const REDIRECT = 'https://app.example.com/cb';
const BURST = 200;
/** Free failures, then the attempt that sets the first lock: each of them is answered 401. */
const ANSWERED_BEFORE_LOCK = DEFAULT_LOGIN_RATE_LIMIT.freeFailures + 1;

let clock = Date.now();
let t: TestGateway;
let client: RegisteredClient;
const logLines: string[] = [];

beforeAll(async () => {
  // 200 connections from one address at once: above the API's per-address cap (64), which would
  // refuse most of them before the sign-in limiter this file is about could see them.
  t = await startTestGateway({ api: { max_connections_per_address: 1000 } }, { oauthClock: () => clock, logLines });
  client = registerClient(t.gw.store, { redirectUris: [REDIRECT] });
  await addUser(t.gw.store, USER.username, USER.password);
  await addUser(t.gw.store, 'bob', 'bob password 1');
});
afterAll(async () => {
  await t?.stop();
});

/** A browser on the login page, and the page's form fields. */
async function loginForm(): Promise<{ browser: FormBrowser; fields: Record<string, string> }> {
  const browser = new FormBrowser(t.request);
  const page = await browser.get(
    `/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: REDIRECT, response_type: 'code' }).toString()}`,
  );
  expect(page.status).toBe(200);
  return { browser, fields: formFields(page.text) };
}

function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

describe('a parallel burst of sign-ins', { timeout: 120_000 }, () => {
  it(`for one username from one address: at most ${ANSWERED_BEFORE_LOCK} are checked, the rest answered 429`, async () => {
    clock += 25 * 3600_000; // whatever earlier tests counted is forgotten
    const { browser, fields } = await loginForm();
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        browser.post('/oauth/authorize', {
          ...fields,
          action: 'login',
          username: USER.username,
          password: `guess ${i}`,
        }),
      ),
    );
    const counts = tally(answers.map((a) => a.status));
    expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual(['401', '429']);
    expect(counts[401]).toBeLessThanOrEqual(ANSWERED_BEFORE_LOCK);
    expect(counts[429]).toBeGreaterThanOrEqual(BURST - ANSWERED_BEFORE_LOCK);
    for (const a of answers.filter((x) => x.status === 429))
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
    // The lock holds for the right password too, until it ends.
    expect((await browser.post('/oauth/authorize', { ...fields, action: 'login', ...USER })).status).toBe(429);
  });

  it(`for many usernames from one address: the address gets at most ${ANSWERED_BEFORE_LOCK} checks`, async () => {
    clock += 25 * 3600_000;
    const { browser, fields } = await loginForm();
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        browser.post('/oauth/authorize', { ...fields, action: 'login', username: `user${i}`, password: `guess ${i}` }),
      ),
    );
    const counts = tally(answers.map((a) => a.status));
    expect(Object.keys(counts).sort(), JSON.stringify(counts)).toEqual(['401', '429']);
    expect(counts[401]).toBeLessThanOrEqual(ANSWERED_BEFORE_LOCK);
    // bob's account is not locked, but this address is.
    expect(
      (
        await browser.post('/oauth/authorize', {
          ...fields,
          action: 'login',
          username: 'bob',
          password: 'bob password 1',
        })
      ).status,
    ).toBe(429);
  });

  it('successful sign-ins release what they reserved', async () => {
    clock += 25 * 3600_000;
    const { browser, fields } = await loginForm();
    // In flight, a sign-in holds one of the free attempts; as many good ones as there are free
    // failures all get through, and leave nothing counted behind.
    const answers = await Promise.all(
      Array.from({ length: DEFAULT_LOGIN_RATE_LIMIT.freeFailures }, () =>
        browser.post('/oauth/authorize', { ...fields, action: 'login', ...USER }),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 303: DEFAULT_LOGIN_RATE_LIMIT.freeFailures });
    const statuses: number[] = [];
    for (let i = 0; i < ANSWERED_BEFORE_LOCK + 1; i++)
      statuses.push(
        (
          await browser.post('/oauth/authorize', {
            ...fields,
            action: 'login',
            username: 'bob',
            password: `wrong ${i}`,
          })
        ).status,
      );
    expect(statuses).toEqual([...Array<number>(ANSWERED_BEFORE_LOCK).fill(401), 429]);
  });
});

describe('the log of a failed sign-in', () => {
  it('does not hold what was typed as the username (people type passwords there)', async () => {
    clock += 25 * 3600_000;
    const typed = 'Tr0ub4dor&3-typed-into-the-wrong-field';
    const { browser, fields } = await loginForm();
    const res = await browser.post('/oauth/authorize', { ...fields, action: 'login', username: typed, password: 'x' });
    expect(res.status).toBe(401);
    const failed = logLines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'local sign-in failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed) {
      expect(JSON.stringify(line)).not.toContain(typed);
      expect(JSON.stringify(line)).not.toContain('Tr0ub4dor');
      expect(line.username).toBeUndefined();
      expect(line.usernameHash).toMatch(/^[0-9a-f]{12}$/);
    }
    // The same typed name gives the same short hash within a run, so repeated attempts can be told apart.
    await browser.post('/oauth/authorize', { ...fields, action: 'login', username: typed, password: 'y' });
    const hashes = logLines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'local sign-in failed')
      .slice(-2)
      .map((l) => l.usernameHash);
    expect(hashes[0]).toBe(hashes[1]);
  });
});
