import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { Gauge, type Registry } from 'prom-client';

// The memory the service may use, as systemd set it (MemoryHigh= / MemoryMax= in
// systemd/edge-gateway.service: the daemon and its ffmpeg children share it), against what it uses
// now. Near the limit the kernel first slows the service down (MemoryHigh), then kills it
// (MemoryMax) with whatever the RAM held (the pre-roll, an episode being recorded): the owner is
// told before, in the log and on /healthz, and /metrics shows both figures.

export interface MemoryReading {
  /** Bytes the service's control group uses now (RAM it holds, page cache included). */
  current: number;
  /** The lower of its MemoryHigh and MemoryMax; null: none set. */
  limit: number | null;
}

/** A limit file's value: bytes, or null for none (`max` in cgroup v2, a page-rounded 2^63 in v1). */
export function parseMemoryLimit(text: string): number | null {
  const t = text.trim();
  if (t === 'max' || !/^\d+$/.test(t)) return null;
  const n = Number(t);
  // cgroup v1 writes "no limit" as the largest page-aligned 64-bit value.
  return n >= 2 ** 62 ? null : n;
}

/**
 * Where this process's memory control group is, from /proc/self/cgroup: the unified hierarchy
 * (cgroup v2, `0::/path`, Raspberry Pi OS and Debian since 11) or the v1 memory controller (which a
 * hybrid system also lists).
 */
export function memoryCgroupOf(procSelfCgroup: string): { version: 1 | 2; path: string } | null {
  let v1: string | null = null;
  let v2: string | null = null;
  for (const line of procSelfCgroup.split('\n')) {
    const [, controllers, where] = /^\d+:([^:]*):(.*)$/.exec(line.trim()) ?? [];
    if (where === undefined) continue;
    if (controllers === '') v2 = where;
    else if (controllers?.split(',').includes('memory')) v1 = where;
  }
  // A hybrid system lists both; there the memory controller is the v1 one.
  if (v1 !== null) return { version: 1, path: v1 };
  return v2 === null ? null : { version: 2, path: v2 };
}

/** The service's memory now and its limit; null where no memory control group can be read. */
export function readMemory(root = '/sys/fs/cgroup', procSelfCgroup = '/proc/self/cgroup'): MemoryReading | null {
  try {
    const group = memoryCgroupOf(readFileSync(procSelfCgroup, 'utf8'));
    if (!group) return null;
    const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');
    if (group.version === 2) {
      const dir = path.join(root, group.path);
      const limits = [parseMemoryLimit(read(dir, 'memory.high')), parseMemoryLimit(read(dir, 'memory.max'))].filter(
        (l) => l !== null,
      );
      return { current: Number(read(dir, 'memory.current').trim()), limit: limits.length ? Math.min(...limits) : null };
    }
    const dir = path.join(root, 'memory', group.path);
    return {
      current: Number(read(dir, 'memory.usage_in_bytes').trim()),
      limit: parseMemoryLimit(read(dir, 'memory.limit_in_bytes')),
    };
  } catch {
    return null;
  }
}

export type MemoryState = 'ok' | 'near_limit';

export interface MemoryWatchOptions {
  read: () => MemoryReading | null;
  logger: BaseLogger;
  registry: Registry;
  /** Share of the limit from which the service counts as near it (0.9). */
  nearRatio?: number;
  /** How often it looks (30 s). */
  intervalMs?: number;
}

export interface MemoryWatch {
  /** Near its limit or not; null when no limit is set (or none can be read). */
  state(): MemoryState | null;
  stop(): void;
}

/** Looks at the service's memory every interval: a warning when it comes near its limit, a line when it is back. */
export function watchMemory(opts: MemoryWatchOptions): MemoryWatch {
  const nearRatio = opts.nearRatio ?? 0.9;
  let last: MemoryReading | null = null;
  let near = false;
  const look = () => {
    last = opts.read();
    const isNear = last?.limit != null && last.current >= last.limit * nearRatio;
    if (isNear && !near)
      opts.logger.warn(
        { bytes: last?.current, limit: last?.limit },
        'the service is near its memory limit (MemoryHigh / MemoryMax): fewer cameras, or a lower detection.queue_size, or a higher limit',
      );
    else if (!isNear && near)
      opts.logger.info({ bytes: last?.current, limit: last?.limit }, 'the service is back below its memory limit');
    near = isNear;
  };
  look();
  const timer = setInterval(look, opts.intervalMs ?? 30_000);
  timer.unref();
  new Gauge({
    name: 'edge_gateway_memory_bytes',
    help: "Bytes the service's control group uses (the daemon and its ffmpeg children, page cache included), and its limit (the lower of systemd's MemoryHigh and MemoryMax; absent when none)",
    labelNames: ['kind'],
    registers: [opts.registry],
    collect() {
      this.reset();
      const r = opts.read();
      if (!r) return;
      this.set({ kind: 'used' }, r.current);
      if (r.limit !== null) this.set({ kind: 'limit' }, r.limit);
    },
  });
  return {
    state: () => (last?.limit == null ? null : near ? 'near_limit' : 'ok'),
    stop: () => clearInterval(timer),
  };
}
