import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PrecountedHistogram, type BucketCounts } from '../../src/metrics/precounted-histogram.js';

const BOUNDS = [0.01, 0.1, 1];

/** Counts per bucket (not cumulative) as the histogram's owner keeps them. */
function tally(route: string, values: number[]): BucketCounts<'route'> {
  const counts = BOUNDS.map(() => 0);
  for (const v of values) {
    const i = BOUNDS.findIndex((b) => v <= b);
    if (i >= 0) counts[i]! += 1;
  }
  return { labels: { route }, counts, sum: values.reduce((a, b) => a + b, 0), count: values.length };
}

const observations: Record<string, number[]> = {
  '/v1/devices': [0.001, 0.01, 0.05, 0.1, 0.5, 2, 7],
  '/healthz': [0.002],
  'a "quoted\\ route\n': [1],
};

describe('PrecountedHistogram', () => {
  it("exports the very text prom-client's own histogram does for the same observations", async () => {
    const own = new Registry();
    const counted = new PrecountedHistogram({
      name: 'h_seconds',
      help: 'help with "quotes" and \\ backslash',
      labelNames: ['route'],
      buckets: BOUNDS,
      registers: [own],
      read: () => Object.entries(observations).map(([route, values]) => tally(route, values)),
    });
    const reference = new Registry();
    const theirs = new Histogram({ name: 'h_seconds', help: 'help with "quotes" and \\ backslash', labelNames: ['route'], buckets: BOUNDS, registers: [reference] });
    for (const [route, values] of Object.entries(observations)) for (const v of values) theirs.observe({ route }, v);

    expect(await own.metrics()).toBe(await reference.metrics());
    // The JSON form too, series by series (prom-client adds an empty exemplar to each of its own).
    const series = async (registry: Registry) => (await registry.getMetricsAsJSON()).flatMap((m) => m.values.map((v) => ({ labels: v.labels, value: v.value, metricName: 'metricName' in v ? v.metricName : undefined })));
    expect(await series(own)).toEqual(await series(reference));
    expect(counted).toBeInstanceOf(Histogram);
  });

  it('reads the counts at each scrape, not before', async () => {
    const registry = new Registry();
    const values: number[] = [];
    new PrecountedHistogram({ name: 'h_seconds', help: 'h', labelNames: ['route'], buckets: BOUNDS, registers: [registry], read: () => [tally('/x', values)] });
    expect(await registry.metrics()).toContain('h_seconds_count{route="/x"} 0');
    values.push(0.05, 3);
    const text = await registry.metrics();
    expect(text).toContain('h_seconds_bucket{le="0.01",route="/x"} 0');
    expect(text).toContain('h_seconds_bucket{le="0.1",route="/x"} 1');
    expect(text).toContain('h_seconds_bucket{le="1",route="/x"} 1');
    expect(text).toContain('h_seconds_bucket{le="+Inf",route="/x"} 2');
    expect(text).toContain('h_seconds_sum{route="/x"} 3.05');
    expect(text).toContain('h_seconds_count{route="/x"} 2');
  });

  it('refuses an observation: its counts are kept elsewhere', () => {
    const h = new PrecountedHistogram({ name: 'h_seconds', help: 'h', labelNames: ['route'], buckets: BOUNDS, registers: [], read: () => [] });
    expect(() => h.observe({ route: '/x' }, 1)).toThrow(/counted elsewhere/);
  });
});
