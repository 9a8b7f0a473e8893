import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { mirroredCounter, mirroredCounterSeries, type CountedSeries } from '../../src/metrics/mirrored-counter.js';

describe('mirroredCounterSeries', () => {
  it('shows each label set from its first scrape and adds only what grew, however often it is scraped', async () => {
    const registry = new Registry();
    const series: CountedSeries<'method' | 'status'>[] = [{ labels: { method: 'GET', status: 200 }, value: 0 }];
    mirroredCounterSeries(registry, 'c_total', 'c', ['method', 'status'], () => series);
    expect(await registry.metrics()).toContain('c_total{method="GET",status="200"} 0');
    series[0]!.value = 3;
    series.push({ labels: { method: 'GET', status: 404 }, value: 2 });
    await registry.metrics();
    const text = await registry.metrics();
    expect(text).toContain('c_total{method="GET",status="200"} 3');
    expect(text).toContain('c_total{method="GET",status="404"} 2');
  });

  it('keeps label sets apart whose values would run together as text', async () => {
    const registry = new Registry();
    mirroredCounterSeries(registry, 'c_total', 'c', ['a', 'b'], () => [
      { labels: { a: 'x,y', b: 'z' }, value: 1 },
      { labels: { a: 'x', b: 'y,z' }, value: 2 },
    ]);
    const text = await registry.metrics();
    expect(text).toContain('c_total{a="x,y",b="z"} 1');
    expect(text).toContain('c_total{a="x",b="y,z"} 2');
  });
});

describe('mirroredCounter', () => {
  it('reads label → count, or { total } without a label', async () => {
    const registry = new Registry();
    const byReason = { refused: 1 };
    let total = 4;
    mirroredCounter(registry, 'r_total', 'r', () => byReason, 'reason');
    mirroredCounter(registry, 't_total', 't', () => ({ total }));
    await registry.metrics();
    byReason.refused = 5;
    total = 6;
    const text = await registry.metrics();
    expect(text).toContain('r_total{reason="refused"} 5');
    expect(text).toMatch(/^t_total 6$/m);
  });
});
