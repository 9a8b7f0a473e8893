import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(() => t.stop());

describe('public endpoints', () => {
  it('GET /healthz answers without a token', async () => {
    const res = await t.request('/healthz');
    expect(res.status).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(body.status).toBe('ok');
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(typeof body.uptime_s).toBe('number');
    expect([true, false, null]).toContain(body.clock_synchronized);
  });

  it('GET /metrics is Prometheus text with request and token counters', async () => {
    await t.request('/v1/devices', { headers: await t.auth('devices:read') });
    const res = await t.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^edge_gateway_http_requests_total\{.*route="\/v1\/devices".*status="200".*\} [1-9]/m);
    expect(res.text).toMatch(/^edge_gateway_token_verifications_total\{.*result="ok".*\} [1-9]/m);
    expect(res.text).toContain('edge_gateway_process_resident_memory_bytes');
  });

  it('GET /.well-known/jwks.json publishes only public keys', async () => {
    const res = await t.request('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    const jwks = res.json() as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(jwks.keys[0]?.kid).toEqual(expect.any(String));
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('GET /v1/openapi.json is OpenAPI 3.1 built from the route schemas, with each scope', async () => {
    const res = await t.request('/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.json() as { openapi: string; paths: Record<string, Record<string, { security?: unknown; parameters?: Array<{ name: string }> }>> };
    expect(doc.openapi).toBe('3.1.0');
    const expected: Array<[string, string, string]> = [
      ['/v1/devices', 'get', 'devices:read'],
      ['/v1/devices/{device_id}', 'get', 'devices:read'],
      ['/v1/devices/{device_id}/control', 'post', 'devices:write'],
      ['/v1/devices/{device_id}/recordings', 'get', 'recordings:read'],
      ['/v1/devices/{device_id}/stream', 'get', 'devices:read'],
      ['/v1/recordings/{recording_id}', 'get', 'recordings:read'],
      ['/v1/recordings/{recording_id}/download', 'get', 'recordings:write'],
      ['/v1/alerts', 'get', 'alerts:read'],
      ['/v1/alerts/{alert_id}', 'get', 'alerts:read'],
      ['/v1/alerts/{alert_id}/read', 'post', 'alerts:write'],
    ];
    for (const [path, method, scope] of expected) {
      expect(doc.paths[path]?.[method]?.security, `${method} ${path}`).toEqual([{ bearer: [scope] }]);
    }
    const listParams = doc.paths['/v1/devices/{device_id}/recordings']?.get?.parameters?.map((p) => p.name);
    expect(listParams).toEqual(expect.arrayContaining(['start_date', 'end_date', 'event_type', 'limit', 'cursor', 'device_id']));
    expect(doc.paths['/healthz']?.get?.security).toBeUndefined();
  });
});

describe('everything else', () => {
  it('answers unknown routes with 404 and the error body', async () => {
    const res = await t.request('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect((res.json() as { error: string }).error).toBe('not_found');
    expect((await t.request('/v1/devices', { method: 'DELETE' })).status).toBe(404);
  });

  it('speaks HTTPS only: plain HTTP on the API port gets no answer', async () => {
    const url = new URL(t.gw.apiUrl);
    const reply = await new Promise<string>((resolve) => {
      const sock = connect(Number(url.port), url.hostname, () => sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
      let data = '';
      sock.on('data', (d) => (data += d.toString('latin1')));
      sock.on('close', () => resolve(data));
      sock.on('error', () => resolve(data));
    });
    expect(reply).not.toContain('"status":"ok"');
  });
});
