import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HostFacts, ProcessFacts } from '../domain/system-facts.js';

// The machine the gateway runs on, and the gateway's own process, as the System screen shows them:
// read from /proc and /sys when someone asks, never on a timer. A CPU share is the difference of two
// cumulative counters, so it is taken between two looks (ShareSampler): nothing runs while nobody
// looks, and no request waits for a second sample.

/** Cumulative CPU time of the whole machine, in clock ticks (USER_HZ). */
export interface CpuTimes {
  busy: number;
  total: number;
}

/**
 * /proc/stat (proc(5)): the `cpu` line's times summed, and the number of `cpuN` lines (the cores
 * online). Idle is `idle` + `iowait`; `guest` and `guest_nice` are left out, being counted in
 * `user` and `nice` already. null when there is no `cpu` line with at least four numbers.
 */
export function parseProcStat(text: string): { cpu: CpuTimes; cores: number } | null {
  let cpu: CpuTimes | null = null;
  let cores = 0;
  for (const line of text.split('\n')) {
    if (/^cpu\d+\s/.test(line)) cores++;
    else if (/^cpu\s/.test(line)) {
      const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
      if (fields.length < 4 || fields.some((n) => !Number.isFinite(n) || n < 0)) continue;
      const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
      const total = user + nice + system + idle + iowait + irq + softirq + steal;
      cpu = { busy: total - idle - iowait, total };
    }
  }
  return cpu ? { cpu, cores } : null;
}

/**
 * /proc/meminfo: MemTotal and MemAvailable (the kernel's estimate of what can be had without
 * swapping, page cache included) in bytes. null when either is missing (kernels before 3.14 have
 * no MemAvailable).
 */
export function parseMeminfo(text: string): { totalBytes: number; availableBytes: number } | null {
  const kib = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : null;
  };
  const totalBytes = kib('MemTotal');
  const availableBytes = kib('MemAvailable');
  return totalBytes === null || availableBytes === null ? null : { totalBytes, availableBytes };
}

/**
 * A thermal zone's `temp` file: millidegrees Celsius, as °C to a tenth. null for what no sensor
 * would read (empty, not a number, below −50 °C or above 200 °C: a zone without a sensor behind it
 * reads 0 or an error code on some boards).
 */
export function parseThermal(text: string): number | null {
  const t = text.trim();
  if (!/^-?\d+$/.test(t)) return null;
  const celsius = Number(t) / 1000;
  if (celsius <= -50 || celsius >= 200 || Number(t) === 0) return null;
  return Math.round(celsius * 10) / 10;
}

/**
 * Shares of time between two looks at a pair of cumulative counters (busy and total), in %. A look
 * less than minIntervalMs after the one measured from gives the last answer again (two clients
 * polling a moment apart would otherwise divide by next to nothing); a look more than
 * maxIntervalMs after it gives null, since an average over that long is no "now", and measures
 * from there on. The first look gives null.
 */
export class ShareSampler {
  private from: { at: number; busy: number; total: number } | null = null;
  private last: number | null = null;

  constructor(private readonly limits: { minIntervalMs: number; maxIntervalMs: number }) {}

  look(at: number, busy: number, total: number): number | null {
    const from = this.from;
    if (from && at - from.at < this.limits.minIntervalMs) return this.last;
    this.from = { at, busy, total };
    if (!from || at - from.at > this.limits.maxIntervalMs || total <= from.total) return (this.last = null);
    const share = ((busy - from.busy) / (total - from.total)) * 100;
    this.last = Math.round(Math.min(100, Math.max(0, share)) * 10) / 10;
    return this.last;
  }
}

/** A CPU share needs looks at least this far apart… */
export const CPU_SHARE_MIN_INTERVAL_MS = 1_000;
/** …and at most this far: a screen refreshing every few seconds always has one. */
export const CPU_SHARE_MAX_INTERVAL_MS = 300_000;

export interface MachineOptions {
  /** Where /proc and /sys/class/thermal are (a test's fixture files). */
  procDir?: string;
  thermalDir?: string;
  now?: () => number;
}

/** The machine and this process, read at each look (MachineLoad.host, .process). */
export class MachineLoad {
  private readonly procDir: string;
  private readonly thermalDir: string;
  private readonly now: () => number;
  private readonly hostCpu = new ShareSampler({
    minIntervalMs: CPU_SHARE_MIN_INTERVAL_MS,
    maxIntervalMs: CPU_SHARE_MAX_INTERVAL_MS,
  });
  private readonly processCpu = new ShareSampler({
    minIntervalMs: CPU_SHARE_MIN_INTERVAL_MS,
    maxIntervalMs: CPU_SHARE_MAX_INTERVAL_MS,
  });

  constructor(opts: MachineOptions = {}) {
    this.procDir = opts.procDir ?? '/proc';
    this.thermalDir = opts.thermalDir ?? '/sys/class/thermal';
    this.now = opts.now ?? Date.now;
  }

  async host(): Promise<HostFacts> {
    const [stat, meminfo, temperatureC] = await Promise.all([
      this.readProc('stat').then((text) => (text === null ? null : parseProcStat(text))),
      this.readProc('meminfo').then((text) => (text === null ? null : parseMeminfo(text))),
      this.temperature(),
    ]);
    const cpuCores = stat?.cores || os.availableParallelism();
    const cpuPct = stat ? this.hostCpu.look(this.now(), stat.cpu.busy, stat.cpu.total) : null;
    return {
      uptimeS: Math.floor(os.uptime()),
      load1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
      cpuCores,
      cpuPct,
      // Node's own figures where /proc/meminfo says less (not Linux): the same kernel estimate there.
      memoryTotalBytes: meminfo?.totalBytes ?? os.totalmem(),
      memoryAvailableBytes: meminfo?.availableBytes ?? os.freemem(),
      temperatureC,
    };
  }

  /** `cores`: the machine's (HostFacts.cpuCores), so that the share compares with the host's. */
  process(cores: number): ProcessFacts {
    const at = this.now();
    const usage = process.cpuUsage();
    return {
      uptimeS: Math.floor(process.uptime()),
      rssBytes: process.memoryUsage.rss(),
      cpuPct: this.processCpu.look(at, usage.user + usage.system, at * 1000 * Math.max(1, cores)),
    };
  }

  private async readProc(name: string): Promise<string | null> {
    return readFile(path.join(this.procDir, name), 'utf8').catch(() => null);
  }

  /** The hottest of /sys/class/thermal/thermal_zone*\/temp (a Pi has one, cpu-thermal); null: none reads. */
  private async temperature(): Promise<number | null> {
    const zones = await readdir(this.thermalDir).catch(() => [] as string[]);
    const readings = await Promise.all(
      zones
        .filter((zone) => /^thermal_zone\d+$/.test(zone))
        .map((zone) => readFile(path.join(this.thermalDir, zone, 'temp'), 'utf8').then(parseThermal, () => null)),
    );
    const known = readings.filter((r): r is number => r !== null);
    return known.length === 0 ? null : Math.max(...known);
  }
}
