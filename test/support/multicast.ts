import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Multicast tests must never put a datagram on a real network. This helper makes multicast work on
// the loopback interface: the MULTICAST flag on lo and a host route for the group via lo, so even a
// socket that forgets IP_MULTICAST_IF stays on the machine. Both are machine-wide, and vitest runs
// test files in parallel processes, so holders are counted in a state file under a lock: the first
// holder changes only what is missing, the last one to release undoes exactly that. A holder that
// died without releasing is dropped when its pid is gone.

export const LOOPBACK_ADDRESS = '127.0.0.1';

export type LoopbackMulticast =
  { ok: true; group: string; interfaceAddress: string; release(): void } | { ok: false; reason: string };

interface Holder {
  pid: number;
  token: string;
}

interface State {
  holders: Holder[];
  /** What this helper changed and has not undone yet (survives a crashed holder). */
  changed: { multicastFlag: boolean; route: boolean };
}

const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 20_000;

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function withLock<T>(dir: string, fn: () => T): T {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(dir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        // A lock this old belongs to a process that died inside it (the critical section takes ms).
        if (Date.now() - statSync(dir).mtimeMs > LOCK_STALE_MS) rmSync(dir, { recursive: true, force: true });
      } catch {
        // Released between the mkdir and the stat: try again.
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${dir}`, { cause: err });
      sleepSync(10);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function readState(file: string): State {
  try {
    const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof raw === 'object' && raw !== null && 'holders' in raw && 'changed' in raw && Array.isArray(raw.holders)) {
      const changed = typeof raw.changed === 'object' && raw.changed !== null ? raw.changed : {};
      const holders = raw.holders.filter(
        (h: unknown): h is Holder =>
          typeof h === 'object' &&
          h !== null &&
          'pid' in h &&
          typeof h.pid === 'number' &&
          'token' in h &&
          typeof h.token === 'string',
      );
      return {
        holders,
        changed: {
          multicastFlag: 'multicastFlag' in changed && changed.multicastFlag === true,
          route: 'route' in changed && changed.route === true,
        },
      };
    }
  } catch {
    // No state yet (or a torn write from a crash): start from nothing changed.
  }
  return { holders: [], changed: { multicastFlag: false, route: false } };
}

function loMulticastOn(): boolean {
  const links = JSON.parse(ip('-j', 'link', 'show', 'dev', 'lo')) as { flags?: string[] }[];
  return links[0]?.flags?.includes('MULTICAST') ?? false;
}

/** The devices of main-table routes for exactly group/32. */
function groupRouteDevices(group: string): string[] {
  const routes = JSON.parse(ip('-j', 'route', 'show', 'table', 'main', 'exact', `${group}/32`)) as { dev?: string }[];
  return routes.map((r) => r.dev ?? '?');
}

/**
 * Makes `group` deliverable over loopback only, for as long as the result is held. Returns
 * ok:false with a reason (print it and skip) when that needs root and we are not root, or when the
 * machine already routes the group elsewhere. release() is idempotent.
 */
export function acquireLoopbackMulticast(group = '239.255.255.250'): LoopbackMulticast {
  const base = path.join(os.tmpdir(), `edge-gateway-lo-multicast-${group}`);
  const stateFile = `${base}.json`;
  const lockDir = `${base}.lock`;
  const me: Holder = { pid: process.pid, token: randomUUID() };
  const isRoot = process.getuid?.() === 0;
  try {
    const problem = withLock(lockDir, (): string | null => {
      const state = readState(stateFile);
      state.holders = state.holders.filter((h) => alive(h.pid));
      const devices = groupRouteDevices(group);
      if (devices.some((d) => d !== 'lo'))
        return `the machine routes ${group} via ${devices.join(', ')}; not touching it`;
      const needFlag = !loMulticastOn();
      const needRoute = devices.length === 0;
      if ((needFlag || needRoute) && !isRoot)
        return `loopback multicast is not set up and setting it up needs root (ip link set lo multicast on; ip route add ${group}/32 dev lo)`;
      if (needFlag) {
        ip('link', 'set', 'dev', 'lo', 'multicast', 'on');
        state.changed.multicastFlag = true;
      }
      if (needRoute) {
        ip('route', 'add', `${group}/32`, 'dev', 'lo');
        state.changed.route = true;
      }
      state.holders.push(me);
      writeFileSync(stateFile, JSON.stringify(state));
      return null;
    });
    if (problem !== null) return { ok: false, reason: problem };
  } catch (err) {
    return { ok: false, reason: `cannot set up loopback multicast: ${(err as Error).message}` };
  }

  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    withLock(lockDir, () => {
      const state = readState(stateFile);
      state.holders = state.holders.filter((h) => h.token !== me.token && alive(h.pid));
      if (state.holders.length === 0) {
        if (state.changed.route) {
          try {
            ip('route', 'del', `${group}/32`, 'dev', 'lo');
          } catch {
            // Someone removed it already; the goal (no route of ours left) holds.
          }
        }
        if (state.changed.multicastFlag) ip('link', 'set', 'dev', 'lo', 'multicast', 'off');
        rmSync(stateFile, { force: true });
        return;
      }
      writeFileSync(stateFile, JSON.stringify(state));
    });
  };
  return { ok: true, group, interfaceAddress: LOOPBACK_ADDRESS, release };
}
