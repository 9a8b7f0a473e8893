import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// A small tmpfs as a file system that really fills up (ENOSPC from the kernel, statfs that tells the
// truth). Mounting needs root (or CAP_SYS_ADMIN); tests that need one skip with the reason given here.

function mountCommand(args: string[]): string | null {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', timeout: 10_000 });
  if (r.error) return `${args.join(' ')}: ${r.error.message}`;
  if (r.status !== 0) return `${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`;
  return null;
}

/** Why a tmpfs cannot be mounted here, or null when it can (tried with a 1 MiB one, unmounted again). */
export function tmpfsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return `mounting a tmpfs needs root (uid ${process.getuid?.() ?? 'unknown'})`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-tmpfs-probe-'));
  try {
    const problem = mountCommand(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    if (problem) return `cannot mount a tmpfs: ${problem}`;
    return mountCommand(['umount', dir]);
  } finally {
    rmdirSync(dir);
  }
}

/** Mounts a tmpfs of `sizeBytes` at `dir` (which must exist); throws with mount's message. */
export function mountTmpfs(dir: string, sizeBytes: number): void {
  const problem = mountCommand(['mount', '-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir]);
  if (problem) throw new Error(problem);
}

/** Unmounts (lazily, so a process still holding a file there cannot keep it mounted). */
export function unmountTmpfs(dir: string): void {
  const problem = mountCommand(['umount', '-l', dir]);
  if (problem) throw new Error(problem);
}
