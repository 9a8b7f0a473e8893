// What Linux says of a process (/proc): CPU time, memory, open files.
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses), so
 * that [0] is the state, [1] the parent's pid, [11] utime, [12] stime, [13] cutime, [14] cstime and
 * [21] the resident pages; and the command name.
 */
export function procStat(pid: number): { comm: string; fields: string[] } {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const close = text.lastIndexOf(') ');
  return { comm: text.slice(text.indexOf('(') + 1, close), fields: text.slice(close + 2).split(' ') };
}

/**
 * Seconds of procStat's fields `a` + `b` (clock ticks, USER_HZ 100): 11, 12 its own CPU, 13, 14 its reaped children's.
 */
export const statSeconds = (fields: readonly string[], a: number, b: number): number =>
  (Number(fields[a]) + Number(fields[b])) / 100;

/**
 * CPU seconds (user + system) a process has used: per-request server cost, which is what a Pi pays
 * when the clients are elsewhere (here the load generator shares the cores with it).
 */
export const cpuSeconds = (pid: number): number => statSeconds(procStat(pid).fields, 11, 12);

/** A `kB` field of /proc/PID/status (VmRSS, VmHWM, …) in KiB; NaN when it has none. */
export function statusKiB(pid: number, field: string): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
}

/** The resident memory of a process in MiB. */
export const rssMiB = (pid: number): number => statusKiB(pid, 'VmRSS') / 1024;

/** How many files a process has open. */
export const openFiles = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

/**
 * Where a process's resident memory is, from /proc/PID/smaps, in KiB: file-backed (the binary, the
 * libraries, the model files), the main heap (`brk`), glibc's per-thread arenas (their 64 MiB
 * reservations, aligned to 64 MiB), reservations of 1 GiB or more (WebAssembly memories), V8's
 * executable code range, the rest of the anonymous memory (V8's pages, large malloc blocks that
 * glibc maps on their own) and stacks.
 */
export interface MemoryMap {
  file: number;
  brk: number;
  arenas: number;
  reserved: number;
  code: number;
  anon: number;
  stacks: number;
}

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  name: string;
  rss: number;
}

const ARENA_BYTES = 64n << 20n;
const BIG_RESERVATION_BYTES = 1n << 30n;

/** The mappings of smaps text, each with its resident KiB. */
function parseSmaps(text: string): Mapping[] {
  const maps: Mapping[] = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      maps.push({
        start: BigInt(`0x${head[1]}`),
        end: BigInt(`0x${head[2]}`),
        perms: head[3]!,
        name: head[4] ?? '',
        rss: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && maps.length > 0) maps[maps.length - 1]!.rss = Number(rss[1]);
  }
  return maps;
}

/**
 * Sorts mappings into MemoryMap's kinds. Anonymous mappings that touch, end to start, make one
 * reservation (its used part readable, the rest `---p`); the reservation's size and alignment say
 * what reserved it.
 */
function classifyMappings(maps: readonly Mapping[]): MemoryMap {
  const out: MemoryMap = { file: 0, brk: 0, arenas: 0, reserved: 0, code: 0, anon: 0, stacks: 0 };
  const anonymous = (m: Mapping) => m.name === '' || m.name.startsWith('[anon');
  for (let i = 0; i < maps.length;) {
    const m = maps[i]!;
    if (!anonymous(m)) {
      if (m.name === '[heap]') out.brk += m.rss;
      else if (m.name.startsWith('[stack')) out.stacks += m.rss;
      else out.file += m.rss;
      i++;
      continue;
    }
    let j = i + 1;
    let rss = m.rss;
    while (
      j < maps.length &&
      anonymous(maps[j]!) &&
      maps[j]!.start === maps[j - 1]!.end &&
      maps[j]!.perms.startsWith('---')
    ) {
      rss += maps[j]!.rss;
      j++;
    }
    const size = maps[j - 1]!.end - m.start;
    if (size === ARENA_BYTES && m.start % ARENA_BYTES === 0n) out.arenas += rss;
    else if (size >= BIG_RESERVATION_BYTES) out.reserved += rss;
    else if (m.perms.includes('x')) out.code += rss;
    else out.anon += rss;
    i = j;
  }
  return out;
}

/** Where a process's resident memory is (MemoryMap), in KiB. */
export const memoryMap = (pid: number): MemoryMap =>
  classifyMappings(parseSmaps(readFileSync(`/proc/${pid}/smaps`, 'utf8')));
