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
