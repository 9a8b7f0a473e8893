import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DURATION_BUCKETS_S, RouteTally, UNMATCHED, requestMetrics } from '../../src/api/request-metrics.js';

/** Calls a route's hook as Fastify would on a finished answer. */
function answer(
  hook: ReturnType<ReturnType<typeof requestMetrics>['hookFor']>,
  method: string,
  status: number,
  elapsedMs: number,
): void {
  let called = false;
  const request = { method } as Parameters<typeof hook>[0];
  const reply = { statusCode: status, elapsedTime: elapsedMs } as Parameters<typeof hook>[1];
  hook.call(null as never, request, reply, () => (called = true));
  expect(called).toBe(true);
}

describe('RouteTally', () => {
  it('counts by method and status', () => {
    const tally = new RouteTally(
      '/v1/x',
      new Histogram({
        name: 'x_seconds',
        help: 'x',
        labelNames: ['route'],
        buckets: [...DURATION_BUCKETS_S],
        registers: [],
      }),
    );
    tally.record('GET', 200, 0.001);
    tally.record('GET', 200, 0.0011);
    tally.record('GET', 401, 0.0001);
    tally.record('HEAD', 200, 2);
    expect([...tally.answers()]).toEqual([
      { method: 'GET', status: 200, count: 2 },
      { method: 'GET', status: 401, count: 1 },
      { method: 'HEAD', status: 200, count: 1 },
    ]);
  });
});

describe('requestMetrics', () => {
  it('exports what the routes’ hooks counted, by method, route and status, and times by route', async () => {
    const registry = new Registry();
    const metrics = requestMetrics(registry);
    const devices = metrics.hookFor('/v1/devices');
    answer(devices, 'GET', 200, 3);
    answer(devices, 'GET', 200, 30);
    answer(metrics.hookFor('/v1/devices'), 'GET', 401, 0.5); // the same pattern, the same tally
    metrics.unmatched.record('POST', 404, 0.0002);
    const text = await registry.metrics();
    expect(text).toContain('edge_gateway_http_requests_total{method="GET",route="/v1/devices",status="200"} 2');
    expect(text).toContain('edge_gateway_http_requests_total{method="GET",route="/v1/devices",status="401"} 1');
    expect(text).toContain(`edge_gateway_http_requests_total{method="POST",route="${UNMATCHED}",status="404"} 1`);
    expect(text).toContain('edge_gateway_http_request_duration_seconds_bucket{le="0.001",route="/v1/devices"} 1');
    expect(text).toContain('edge_gateway_http_request_duration_seconds_bucket{le="0.005",route="/v1/devices"} 2');
    expect(text).toContain('edge_gateway_http_request_duration_seconds_bucket{le="0.05",route="/v1/devices"} 3');
    expect(text).toContain('edge_gateway_http_request_duration_seconds_count{route="/v1/devices"} 3');
    expect(text).toContain(`edge_gateway_http_request_duration_seconds_count{route="${UNMATCHED}"} 1`);
    // A second scrape says the same: nothing counted twice.
    expect(await registry.metrics()).toBe(text);
  });

  it('shows no series for a route that has answered nothing yet', async () => {
    const registry = new Registry();
    const metrics = requestMetrics(registry);
    metrics.hookFor('/v1/alerts');
    const text = await registry.metrics();
    expect(text).not.toContain('/v1/alerts');
    expect(text).not.toContain(UNMATCHED);
    expect(text).toContain('# TYPE edge_gateway_http_request_duration_seconds histogram');
  });
});
