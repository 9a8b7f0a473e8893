import { describe, expect, it } from 'vitest';
import { systemWarnings, usedShare } from '../../web/src/system-view.js';
import type { SystemDisk, SystemStatus } from '../../web/src/types.js';

// What the System screen warns of: a hot board (80 °C), memory under a tenth available, a disk low,
// read-only, missing or failing; nothing when all is well.

const disk = (over: Partial<SystemDisk> = {}): SystemDisk => ({
  name: 'data',
  path: '/var/lib/edge-gateway',
  total_bytes: 32e9,
  free_bytes: 20e9,
  used_by_gateway_bytes: 1e9,
  state: 'ok',
  ...over,
});

const status = (over: { host?: Partial<SystemStatus['host']>; storage?: SystemDisk[] } = {}): SystemStatus => ({
  version: '0.1.0',
  uptime_s: 100,
  host: {
    uptime_s: 1000,
    load_1m: 0.5,
    cpu_cores: 4,
    cpu_pct: 12,
    memory_total_bytes: 4e9,
    memory_available_bytes: 2e9,
    temperature_c: 55,
    ...over.host,
  },
  process: { rss_bytes: 2e8, cpu_pct: 3 },
  storage: over.storage ?? [disk()],
  cameras: [],
});

describe('systemWarnings', () => {
  it('says nothing when all is well, or where the board has no sensor', () => {
    expect(systemWarnings(status())).toEqual([]);
    expect(systemWarnings(status({ host: { temperature_c: null } }))).toEqual([]);
    expect(systemWarnings(status({ host: { temperature_c: 79.9, memory_available_bytes: 0.4e9 } }))).toEqual([]);
  });

  it('warns of heat from 80 °C and of memory under a tenth available', () => {
    const [hot, memory] = systemWarnings(status({ host: { temperature_c: 80, memory_available_bytes: 0.39e9 } }));
    expect(hot).toMatch(/^The gateway is hot \(80 °C\)/);
    expect(memory).toMatch(/^Memory is nearly used up \(9 % available\)/);
  });

  it('names each disk in trouble and what to do', () => {
    const warnings = systemWarnings(
      status({
        storage: [
          disk({ state: 'low', free_bytes: 0.3e9 }),
          disk({ name: 'clips', path: '/srv/clips', state: 'read_only' }),
          disk({ name: 'footage', path: '/mnt/footage', state: 'missing', total_bytes: null, free_bytes: null }),
          disk({ name: 'footage', path: '/mnt/other', state: 'failed' }),
        ],
      }),
    );
    expect(warnings).toEqual([
      expect.stringMatching(/^Gateway data \(\/var\/lib\/edge-gateway\) is nearly full: 0\.3 GB free\./),
      expect.stringMatching(/^Event clips \(\/srv\/clips\) takes no writes/),
      'Continuous footage (/mnt/footage) is missing: is the disk plugged in and mounted?',
      expect.stringMatching(/^Continuous footage \(\/mnt\/other\) refuses writes/),
    ]);
  });
});

describe('usedShare', () => {
  it('is the share used, and null while the disk is missing', () => {
    expect(usedShare(disk())).toBe(0.375);
    expect(usedShare(disk({ total_bytes: null, free_bytes: null }))).toBeNull();
    expect(usedShare(disk({ total_bytes: 0, free_bytes: 0 }))).toBeNull();
  });
});
