import { connect, createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readVersion } from '../../../src/version.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(() => t.stop());

describe('public endpoints', () => {
  it("GET /healthz says up and the detector's state (off here), nothing more", async () => {
    const res = await t.request('/healthz');
    expect(res.status).toBe(200);
    // `memory` only where the test runs under a memory limit (a container, a systemd unit).
    const { memory, ...rest } = res.json() as { memory?: string };
    expect(rest).toEqual({ status: 'ok', detector: 'off' });
    expect([undefined, 'ok', 'near_limit']).toContain(memory);
  });

  it('GET /metrics is not served on the API port: no viewers, logins, routes or versions to a stranger', async () => {
    await t.request('/v1/devices', { headers: await t.auth('devices:read') });
    const res = await t.request('/metrics');
    expect(res.status).toBe(404);
    expect((res.json() as { error: string }).error).toBe('not_found');
    expect(res.text).not.toContain('edge_gateway_');
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
    const doc = res.json() as {
      openapi: string;
      paths: Record<string, Record<string, { security?: unknown; parameters?: Array<{ name: string }> }>>;
    };
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
    expect(listParams).toEqual(
      expect.arrayContaining(['start_date', 'end_date', 'event_type', 'limit', 'cursor', 'device_id']),
    );
    expect(doc.paths['/healthz']?.get?.security).toEqual([]);
    expect(doc.paths['/metrics']).toBeUndefined();
  });
});

describe('the metrics listener (metrics.listen, plain HTTP on loopback)', () => {
  it('serves Prometheus text with request and token counters, and no gateway id label on the series', async () => {
    await t.request('/v1/devices', { headers: await t.auth('devices:read') });
    expect((await t.request('/v1/devices')).status).toBe(401);
    expect((await t.request('/v1/no-such-thing', { method: 'DELETE' })).status).toBe(404);
    expect(t.gw.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const res = await fetch(t.gw.metricsUrl ?? '');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^edge_gateway_http_requests_total\{.*route="\/v1\/devices".*status="200".*\} [1-9]/m);
    expect(text).toMatch(/^edge_gateway_http_requests_total\{method="GET",route="\/v1\/devices",status="401"\} [1-9]/m);
    expect(text).toMatch(/^edge_gateway_http_requests_total\{method="DELETE",route="unmatched",status="404"\} [1-9]/m);
    // Timed by route: every answer lands in +Inf, and the count says the same.
    const count = /^edge_gateway_http_request_duration_seconds_count\{route="\/v1\/devices"\} (\d+)$/m.exec(text)?.[1];
    expect(Number(count)).toBeGreaterThanOrEqual(2);
    expect(text).toContain(`edge_gateway_http_request_duration_seconds_bucket{le="+Inf",route="/v1/devices"} ${count}`);
    expect(text).toMatch(/^edge_gateway_http_request_duration_seconds_count\{route="unmatched"\} [1-9]/m);
    expect(text).toMatch(/^edge_gateway_token_verifications_total\{.*result="ok".*\} [1-9]/m);
    expect(text).toContain('edge_gateway_process_resident_memory_bytes');
    // The id once, in the info series (on loopback only); Prometheus adds its target labels itself.
    const series = text.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(series.filter((l) => l.includes('gateway_id='))).toEqual([
      `edge_gateway_info{version="${readVersion()}",gateway_id="${t.gw.id}"} 1`,
    ]);
    expect(text).toContain('# TYPE edge_gateway_clock_synchronized gauge');
  });

  it('serves nothing else', async () => {
    const base = new URL(t.gw.metricsUrl ?? '');
    expect((await fetch(new URL('/healthz', base))).status).toBe(404);
    expect((await fetch(new URL('/v1/devices', base))).status).toBe(404);
    const post = await fetch(base, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(base, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('is off with metrics.listen null', async () => {
    const g = await startTestGateway({ metrics: { listen: null } });
    try {
      expect(g.gw.metricsUrl).toBeNull();
      expect((await g.request('/healthz')).status).toBe(200);
    } finally {
      await g.stop();
    }
  });

  it('a port already taken leaves the gateway running without metrics, and says so once', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const logLines: string[] = [];
    const g = await startTestGateway({ metrics: { listen: `127.0.0.1:${port}` } }, { logLines });
    try {
      expect(g.gw.metricsUrl).toBeNull();
      expect((await g.request('/healthz')).status).toBe(200);
      const errors = logLines
        .map((l) => JSON.parse(l) as { msg: string; listen?: string })
        .filter((l) => l.msg.startsWith('metrics listener not started'));
      expect(errors).toHaveLength(1);
      expect(errors[0]?.listen).toBe(`127.0.0.1:${port}`);
    } finally {
      await g.stop();
      await new Promise((r) => taken.close(r));
    }
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
      const sock = connect(Number(url.port), url.hostname, () =>
        sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
      );
      let data = '';
      sock.on('data', (d) => (data += d.toString('latin1')));
      sock.on('close', () => resolve(data));
      sock.on('error', () => resolve(data));
    });
    expect(reply).not.toContain('"status":"ok"');
  });
});
