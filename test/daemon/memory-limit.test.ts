import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  memoryCgroupOf,
  parseMemoryLimit,
  readMemory,
  watchMemory,
  type MemoryReading,
} from '../../src/daemon/memory-limit.js';
import { tempDir } from '../support/temp-dir.js';

describe('the service memory limit', () => {
  it.each([
    ['max\n', null],
    ['1073741824\n', 1073741824],
    ['9223372036854771712\n', null], // cgroup v1: no limit
    ['', null],
    ['12abc', null],
  ])('reads the limit %j as %j', (text, bytes) => {
    expect(parseMemoryLimit(text)).toBe(bytes);
  });

  it('finds the memory control group of cgroup v2 and of v1', () => {
    expect(memoryCgroupOf('0::/system.slice/edge-gateway.service\n')).toEqual({
      version: 2,
      path: '/system.slice/edge-gateway.service',
    });
    expect(memoryCgroupOf('5:devices:/\n4:memory:/system.slice/edge-gateway.service\n1:cpu,cpuacct:/\n0::/\n')).toEqual(
      { version: 1, path: '/system.slice/edge-gateway.service' },
    );
    expect(memoryCgroupOf('garbage')).toBeNull();
  });

  it('reads used and the lower of MemoryHigh and MemoryMax from the control group files', () => {
    const root = tempDir('cgroup');
    const dir = path.join(root, 'system.slice/edge-gateway.service');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'memory.current'), '734003200\n');
    writeFileSync(path.join(dir, 'memory.high'), '1073741824\n');
    writeFileSync(path.join(dir, 'memory.max'), '1468006400\n');
    const proc = path.join(root, 'cgroup');
    writeFileSync(proc, '0::/system.slice/edge-gateway.service\n');
    expect(readMemory(root, proc)).toEqual({ current: 734003200, limit: 1073741824 });
    writeFileSync(path.join(dir, 'memory.high'), 'max\n');
    writeFileSync(path.join(dir, 'memory.max'), 'max\n');
    expect(readMemory(root, proc)).toEqual({ current: 734003200, limit: null });
    expect(readMemory(path.join(root, 'nowhere'), proc)).toBeNull();
  });

  it('warns once when the service comes near its limit, says when it is back, and shows both in /metrics', async () => {
    let reading: MemoryReading | null = { current: 500, limit: 1000 };
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      { level: 'info' },
      { write: (l: string) => void lines.push(JSON.parse(l) as { level: number; msg: string }) },
    );
    const registry = new Registry();
    const watch = watchMemory({ read: () => reading, logger, registry, intervalMs: 10 });
    try {
      expect(watch.state()).toBe('ok');
      reading = { current: 950, limit: 1000 };
      await expect.poll(() => watch.state()).toBe('near_limit');
      await new Promise((r) => setTimeout(r, 50));
      expect(lines.filter((l) => l.msg.startsWith('the service is near its memory limit'))).toHaveLength(1);
      expect(await registry.metrics()).toContain('edge_gateway_memory_bytes{kind="limit"} 1000');
      reading = { current: 100, limit: 1000 };
      await expect.poll(() => watch.state()).toBe('ok');
      expect(lines.at(-1)?.msg).toBe('the service is back below its memory limit');
      reading = null;
      await expect.poll(() => watch.state()).toBeNull();
      expect(await registry.metrics()).not.toContain('edge_gateway_memory_bytes{');
    } finally {
      watch.stop();
    }
  });
});
