import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

// Unknown query parameters are refused on every /v1 route, whatever their name: __proto__ and
// friends included, which a plain object would swallow silently.

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.stop();
});

const SCOPES = 'devices:read devices:write alerts:read alerts:write recordings:read recordings:write';

describe('unknown query parameters', () => {
  it.each([
    ['GET', '/v1/devices?__proto__=x', '__proto__'],
    ['GET', '/v1/devices?__proto__=x&__proto__=y', '__proto__'],
    ['GET', '/v1/devices?%5F%5Fproto%5F%5F=x', '__proto__'],
    ['GET', '/v1/devices?limit=5&__proto__=x', '__proto__'],
    ['GET', '/v1/devices?constructor=x', 'constructor'],
    ['GET', '/v1/alerts?__proto__=x', '__proto__'],
    ['GET', '/v1/devices/cam-01/recordings?__proto__=x', '__proto__'],
    ['GET', '/v1/devices/cam-01/stream?__proto__=x', '__proto__'],
    // Routes that take no query parameters at all.
    ['GET', '/v1/devices/cam-01?__proto__=x', '__proto__'],
    ['GET', '/v1/devices/cam-01?foo=1', 'foo'],
    ['GET', '/v1/alerts/a1?__proto__=x', '__proto__'],
    ['POST', '/v1/alerts/a1/read?__proto__=x', '__proto__'],
    ['GET', '/v1/recordings/r1?__proto__=x', '__proto__'],
    ['GET', '/v1/recordings/r1/download?__proto__=x', '__proto__'],
    ['HEAD', '/v1/recordings/r1/download?foo=1', null],
    ['GET', '/v1/recordings/r1/thumbnail?__proto__=x', '__proto__'],
    ['GET', '/v1/openapi.json?__proto__=x', '__proto__'],
  ])('%s %s → 400 naming it', async (method, path, name) => {
    const res = await t.request(path, { method, headers: await t.auth(SCOPES) });
    expect(res.status, res.text).toBe(400);
    if (name === null) return; // HEAD: no body
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: `unknown query parameter ${name}` });
  });

  it('still takes the known ones', async () => {
    const headers = await t.auth(SCOPES);
    expect((await t.request('/v1/devices?limit=5', { headers })).status).toBe(200);
    expect((await t.request('/v1/alerts?unread=true', { headers })).status).toBe(200);
    expect((await t.request('/v1/openapi.json')).status).toBe(200);
    expect((await t.request('/v1/devices/cam-01', { headers })).status).toBe(404);
  });
});
