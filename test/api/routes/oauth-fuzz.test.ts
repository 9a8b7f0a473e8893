import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { makeRng, mutate } from '../../support/fuzz.js';
import { FormBrowser, formFields, pkcePair, registerClient, type RegisteredClient } from '../../support/oauth.js';

// Bad input at the authorization server's endpoints over real HTTPS: mutated token requests (form
// and JSON) and authorization requests. Every answer is a clear refusal in the endpoint's own form
// (an OAuth JSON error, a page or a redirect), never a 500, and the server keeps answering.

let t: TestGateway;
let conf: RegisteredClient;
let pub: RegisteredClient;
const REDIRECT = 'https://app.example.com/cb';

beforeAll(async () => {
  t = await startTestGateway();
  conf = registerClient(t.gw.store, {
    redirectUris: [REDIRECT],
    grants: ['authorization_code', 'refresh_token', 'client_credentials'],
  });
  pub = registerClient(t.gw.store, { public: true, redirectUris: ['http://127.0.0.1/cb'] });
});
afterAll(async () => {
  await t?.stop();
});

const ALPHABET = '=&%+;:/?#[]@!$\'()*,"{}\\ \u00e9\u0000\u202eaZ09_-.~';

describe('fuzzing the authorization server', () => {
  const rng = makeRng();
  it(`fuzz (seed ${rng.seed}): mutated token requests get an OAuth error or a token, never a 500`, async () => {
    const samples = [
      `grant_type=client_credentials&client_id=${conf.clientId}&client_secret=${conf.clientSecret}&scope=devices%3Aread`,
      `grant_type=authorization_code&client_id=${pub.clientId}&code=${'a'.repeat(43)}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=${pkcePair().verifier}`,
      `grant_type=refresh_token&client_id=${conf.clientId}&client_secret=${conf.clientSecret}&refresh_token=${'b'.repeat(43)}&scope=alerts%3Aread`,
    ];
    const seen = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const sample = rng.pick(samples);
      const asJson = rng.int(3) === 0;
      const text = mutate(rng, sample, ALPHABET);
      const body = asJson
        ? mutate(rng, JSON.stringify(Object.fromEntries(new URLSearchParams(sample))), ALPHABET)
        : text;
      const res = await t.request('/oauth/token', {
        method: 'POST',
        headers: { 'content-type': asJson ? 'application/json' : 'application/x-www-form-urlencoded' },
        body,
      });
      seen.add(res.status);
      const context = `${asJson ? 'json' : 'form'} body ${JSON.stringify(body)} → ${res.status} ${res.text}`;
      expect([200, 400, 401], context).toContain(res.status);
      expect(res.headers['cache-control'], context).toBe('no-store');
      const json = res.json() as Record<string, unknown>;
      if (res.status === 200) expect(json.token_type, context).toBe('Bearer');
      else expect(Object.keys(json).sort(), context).toEqual(['error', 'error_description']);
    }
    expect(seen.has(400)).toBe(true);
    // Still serving, and still right.
    const ok = await t.request('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: samples[0],
    });
    expect(ok.status).toBe(200);
  });

  it(`fuzz (seed ${rng.seed}): mutated authorization requests and forms get a page or a redirect to the registered URI, never a 500`, async () => {
    const { challenge } = pkcePair();
    const sample = `client_id=${pub.clientId}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&response_type=code&scope=devices%3Aread&state=xyz&code_challenge=${challenge}&code_challenge_method=S256`;
    const browser = new FormBrowser(t.request);
    const login = await browser.get(`/oauth/authorize?${sample}`);
    expect(login.status).toBe(200);
    const fields = formFields(login.text);
    for (let i = 0; i < 300; i++) {
      const query = mutate(rng, sample, ALPHABET);
      const post = rng.int(3) === 0;
      const res = post
        ? await browser.post('/oauth/authorize', {
            ...Object.fromEntries(new URLSearchParams(query)),
            csrf: fields.csrf as string,
            action: rng.pick(['login', 'allow', 'deny', 'x']),
            username: 'nobody',
            password: 'x',
          })
        : await browser.get(`/oauth/authorize?${query}`);
      const context = `${post ? 'POST' : 'GET'} ${JSON.stringify(query)} → ${res.status}`;
      expect([200, 303, 400, 401, 403, 429], context).toContain(res.status);
      if (res.status === 303) {
        const location = String(res.headers.location);
        // A redirect goes to the registered URI (any loopback port) or back to the pages themselves.
        expect(
          location.startsWith('http://127.0.0.1/cb?') ||
            /^http:\/\/127\.0\.0\.1:\d+\/cb\?/.test(location) ||
            location.startsWith('/oauth/authorize?'),
          context,
        ).toBe(true);
      } else {
        expect(res.headers['content-type'], context).toMatch(/^text\/html/);
        expect(res.headers['x-frame-options'], context).toBe('DENY');
      }
    }
  });
});
