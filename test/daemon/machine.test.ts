import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CPU_SHARE_MAX_INTERVAL_MS,
  MachineLoad,
  parseMeminfo,
  parseProcStat,
  parseThermal,
  ShareSampler,
} from '../../src/daemon/machine.js';
import { tempDir } from '../support/temp-dir.js';

// The machine as the System screen reads it: /proc/stat, /proc/meminfo and the thermal zones
// parsed from fixture text, the CPU share taken between two looks, and the whole read from a
// fixture directory standing in for /proc and /sys/class/thermal.

// A Raspberry Pi 4's /proc/stat, shortened.
const PROC_STAT = `cpu  1000 20 300 8000 100 0 80 0 0 0
cpu0 250 5 75 2000 25 0 20 0 0 0
cpu1 250 5 75 2000 25 0 20 0 0 0
cpu2 250 5 75 2000 25 0 20 0 0 0
cpu3 250 5 75 2000 25 0 20 0 0 0
intr 123456 0 0 0
ctxt 987654
btime 1760000000
processes 4321
procs_running 2
procs_blocked 0
`;

const MEMINFO = `MemTotal:        3884372 kB
MemFree:          812340 kB
MemAvailable:    2611228 kB
Buffers:           91828 kB
Cached:          1712532 kB
SwapTotal:        102396 kB
`;

describe('parseProcStat', () => {
  it('sums the cpu line (idle and iowait idle; guest left out) and counts the cores', () => {
    expect(parseProcStat(PROC_STAT)).toEqual({ cpu: { busy: 1400, total: 9500 }, cores: 4 });
  });

  it('takes a kernel with fewer columns, and refuses text without a cpu line', () => {
    expect(parseProcStat('cpu 10 0 10 80\ncpu0 10 0 10 80\n')).toEqual({ cpu: { busy: 20, total: 100 }, cores: 1 });
    expect(parseProcStat('')).toBeNull();
    expect(parseProcStat('cpu0 1 2 3 4\n')).toBeNull();
    expect(parseProcStat('cpu 1 2 x 4\n')).toBeNull();
    expect(parseProcStat('cpu 1 2\n')).toBeNull();
  });
});

describe('parseMeminfo', () => {
  it('gives MemTotal and MemAvailable in bytes', () => {
    expect(parseMeminfo(MEMINFO)).toEqual({ totalBytes: 3884372 * 1024, availableBytes: 2611228 * 1024 });
  });

  it('is null without MemAvailable (kernels before 3.14) or MemTotal', () => {
    expect(parseMeminfo('MemTotal: 1000 kB\nMemFree: 10 kB\n')).toBeNull();
    expect(parseMeminfo('MemAvailable: 10 kB\n')).toBeNull();
    expect(parseMeminfo('')).toBeNull();
  });
});

describe('parseThermal', () => {
  it.each([
    ['54768\n', 54.8],
    ['80000', 80],
    ['-5000', -5],
    ['0\n', null],
    ['', null],
    ['abc', null],
    ['-273150', null],
    ['250000', null],
  ])('%j → %j', (text, expected) => {
    expect(parseThermal(text)).toBe(expected);
  });
});

describe('ShareSampler', () => {
  const limits = { minIntervalMs: 1000, maxIntervalMs: 60_000 };

  it('is null at the first look, then the busy share between two looks, to a tenth', () => {
    const s = new ShareSampler(limits);
    expect(s.look(0, 100, 1000)).toBeNull();
    expect(s.look(5000, 175, 1300)).toBe(25);
    expect(s.look(10_000, 176, 1303)).toBe(33.3);
  });

  it('answers a look less than minIntervalMs after the one measured from with the last answer', () => {
    const s = new ShareSampler(limits);
    s.look(0, 0, 100);
    expect(s.look(2000, 50, 200)).toBe(50);
    // Measured from 2000: a look at 2500 would divide by next to nothing.
    expect(s.look(2500, 200, 201)).toBe(50);
    expect(s.look(3000, 60, 300)).toBe(10);
  });

  it('is null after a gap longer than maxIntervalMs, and measures from that look on', () => {
    const s = new ShareSampler(limits);
    s.look(0, 0, 100);
    expect(s.look(120_000, 90, 200)).toBeNull();
    expect(s.look(125_000, 100, 300)).toBe(10);
  });

  it('keeps the share within 0–100 and is null when the total did not grow', () => {
    const s = new ShareSampler(limits);
    s.look(0, 0, 100);
    expect(s.look(2000, 500, 200)).toBe(100);
    expect(s.look(4000, 400, 300)).toBe(0);
    expect(s.look(6000, 500, 300)).toBeNull();
  });
});

describe('MachineLoad', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** /proc and /sys/class/thermal as fixture files; `zones`: each thermal_zoneN's temp text. */
  function fixture(zones: string[]): { procDir: string; thermalDir: string } {
    dir = tempDir();
    const procDir = path.join(dir, 'proc');
    const thermalDir = path.join(dir, 'thermal');
    mkdirSync(procDir);
    mkdirSync(thermalDir);
    writeFileSync(path.join(procDir, 'stat'), PROC_STAT);
    writeFileSync(path.join(procDir, 'meminfo'), MEMINFO);
    zones.forEach((temp, i) => {
      mkdirSync(path.join(thermalDir, `thermal_zone${i}`));
      writeFileSync(path.join(thermalDir, `thermal_zone${i}`, 'temp'), temp);
    });
    // Not a zone: a cooling device, which has no temp.
    mkdirSync(path.join(thermalDir, 'cooling_device0'));
    return { procDir, thermalDir };
  }

  it('reads the cores, memory and the hottest zone; the CPU share from the second look on', async () => {
    const dirs = fixture(['41000\n', '62350\n', 'garbage\n']);
    let now = 1_000_000;
    const machine = new MachineLoad({ ...dirs, now: () => now });
    const first = await machine.host();
    expect(first).toMatchObject({
      cpuCores: 4,
      cpuPct: null,
      memoryTotalBytes: 3884372 * 1024,
      memoryAvailableBytes: 2611228 * 1024,
      temperatureC: 62.4,
    });
    expect(first.uptimeS).toBeGreaterThan(0);
    expect(first.load1m).toBeGreaterThanOrEqual(0);
    writeFileSync(path.join(dirs.procDir, 'stat'), PROC_STAT.replace('cpu  1000 20 300 8000', 'cpu  1300 20 300 8100'));
    now += 5000;
    expect((await machine.host()).cpuPct).toBe(75);
    now += CPU_SHARE_MAX_INTERVAL_MS + 1;
    expect((await machine.host()).cpuPct).toBeNull();
  });

  it('has no temperature on a board without a thermal zone, and Node’s figures without /proc', async () => {
    const dirs = fixture([]);
    rmSync(path.join(dirs.procDir, 'meminfo'));
    rmSync(path.join(dirs.procDir, 'stat'));
    const host = await new MachineLoad(dirs).host();
    expect(host.temperatureC).toBeNull();
    expect(host.cpuPct).toBeNull();
    expect(host.cpuCores).toBeGreaterThan(0);
    expect(host.memoryTotalBytes).toBeGreaterThan(0);
    expect(host.memoryAvailableBytes).toBeGreaterThan(0);
    expect(await new MachineLoad({ ...dirs, thermalDir: path.join(dir, 'nowhere') }).host()).toMatchObject({
      temperatureC: null,
    });
  });

  it("gives this process's memory, and its CPU share from the second look on", async () => {
    let now = Date.now();
    const machine = new MachineLoad({ now: () => now });
    const first = machine.process(4);
    expect(first.cpuPct).toBeNull();
    expect(first.rssBytes).toBeGreaterThan(1_000_000);
    expect(first.uptimeS).toBeGreaterThanOrEqual(0);
    now += 2000;
    const second = machine.process(4);
    expect(second.cpuPct).toBeGreaterThanOrEqual(0);
    expect(second.cpuPct).toBeLessThanOrEqual(100);
  });
});
