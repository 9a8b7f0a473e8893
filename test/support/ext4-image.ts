import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseMountInfo } from '../../src/media/footage/disk.js';

// A small ext4 file system in a sparse image file, mounted through a loop device, as a disk that can
// really turn read-only while files on it are open for writing: tmpfs and ext4 refuse
// `mount -o remount,ro` then (EBUSY), but an ext4 mounted with errors=remount-ro goes read-only at
// once when told of an error, as it would on a real I/O error (ext4's trigger_fs_error test hook in
// /sys/fs/ext4/<device>/). Writes and creates then fail with EROFS. The disk "comes back" as a real
// one would: unmounted, checked by e2fsck, mounted again. Needs root, loop devices and e2fsprogs
// (mkfs.ext4, e2fsck); tests that need one skip with the reason ext4ImageUnavailable() gives.

export interface Ext4Image {
  /** The image file, in os.tmpdir(). */
  readonly image: string;
  /** Where it is mounted. */
  readonly dir: string;
  /** The loop device it is mounted through ("loop3"), null while it is not mounted. */
  loop: string | null;
}

// mkfs.ext4, e2fsck and losetup live in /usr/sbin, which a non-login root shell may not have on PATH.
const ENV = { ...process.env, PATH: [process.env.PATH, '/usr/sbin', '/sbin'].filter(Boolean).join(':') };

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
  /** A one-line account of a failed run; null when it exited 0. */
  problem: string | null;
}

function command(args: string[]): Ran {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', timeout: 30_000, env: ENV });
  const problem = r.error
    ? `${args.join(' ')}: ${r.error.message}`
    : r.status !== 0
      ? `${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`
      : null;
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', problem };
}

function must(args: string[]): string {
  const r = command(args);
  if (r.problem) throw new Error(r.problem);
  return r.stdout;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The mount at exactly `dir` (the newest, if several are stacked there), from the kernel's own table. */
function mountAt(dir: string) {
  const real = realpathSync(dir);
  const mounts = parseMountInfo(readFileSync('/proc/self/mountinfo', 'utf8'));
  return mounts.filter((m) => m.mountPoint === real).at(-1) ?? null;
}

/** The loop device ("loop3") of the ext4 mounted at `dir`; throws when `dir` holds anything else. */
function loopAt(dir: string): string {
  const mount = mountAt(dir);
  const loop = /^\/dev\/(loop\d+)$/.exec(mount?.source ?? '')?.[1];
  // Never anything but a loop device: the hook would turn the machine's own disk read-only.
  if (!mount || mount.fsType !== 'ext4' || !loop)
    throw new Error(
      `${dir} is not an ext4 on a loop device (${mount ? `${mount.fsType} ${mount.source}` : 'not mounted'})`,
    );
  return loop;
}

/** Mounts the image at its dir, read-write, going read-only at the first error the file system has. */
function mount(image: string, dir: string): string {
  must(['mount', '-o', 'loop,errors=remount-ro', image, dir]);
  return loopAt(dir);
}

/** A new image of `sizeBytes` (sparse: it takes what is written), made ext4 and mounted at `dir` (which must exist). */
export function createExt4Image(dir: string, sizeBytes: number): Ext4Image {
  const image = path.join(mkdtempSync(path.join(os.tmpdir(), 'eg-ext4-')), 'disk.img');
  try {
    writeFileSync(image, '');
    truncateSync(image, sizeBytes);
    must(['mkfs.ext4', '-q', '-F', image]);
    return { image, dir, loop: mount(image, dir) };
  } catch (err) {
    rmSync(path.dirname(image), { recursive: true, force: true });
    throw err;
  }
}

/** Mounts the image again at its dir (after unmountExt4Image), read-write. */
export function mountExt4Image(disk: Ext4Image): void {
  disk.loop = mount(disk.image, disk.dir);
}

/**
 * Turns the ext4 mounted at `dir` read-only now, as its first error would (errors=remount-ro): open
 * files stay open, and their next write, like every create, fails with EROFS. Throws unless it did.
 */
export function makeReadOnly(dir: string): void {
  const loop = loopAt(dir);
  writeFileSync(`/sys/fs/ext4/${loop}/trigger_fs_error`, 'test');
  try {
    writeFileSync(path.join(dir, '.edge-gateway-read-only-check'), '');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EROFS') return;
    throw err;
  }
  throw new Error(`${dir} (${loop}) still takes writes after trigger_fs_error`);
}

function attachedLoops(image: string): string[] {
  return must(['losetup', '-j', image])
    .split('\n')
    .map((line) => /^(\/dev\/loop\d+):/.exec(line)?.[1])
    .filter((dev): dev is string => dev !== undefined);
}

/**
 * Unmounts the image: plainly when nothing holds a file on it (tried for a while: a directory being
 * read keeps it busy for a moment), else lazily. Either way it then waits, up to `timeoutMs`, for the
 * loop device to be let go (the last file on it closed): the image must not be checked or mounted
 * again while the old mount lives on. Async, so a gateway in this process can close its files
 * meanwhile. Says whether the unmount had to be lazy.
 */
export async function unmountExt4Image(disk: Ext4Image, timeoutMs = 30_000): Promise<{ lazy: boolean }> {
  let lazy = false;
  if (mountAt(disk.dir)) {
    let r = command(['umount', disk.dir]);
    for (let i = 0; r.problem && /busy/i.test(r.stderr) && i < 20; i++) {
      await sleep(250);
      r = command(['umount', disk.dir]);
    }
    if (r.problem && /busy/i.test(r.stderr)) {
      lazy = true;
      must(['umount', '-l', disk.dir]);
    } else if (r.problem) {
      throw new Error(r.problem);
    }
  }
  disk.loop = null;
  const deadline = Date.now() + timeoutMs;
  while (attachedLoops(disk.image).length > 0) {
    if (Date.now() > deadline)
      throw new Error(
        `${disk.image} is still attached (${attachedLoops(disk.image).join(', ')}) ${timeoutMs} ms after its ` +
          `${lazy ? 'lazy ' : ''}unmount: a file on it is still open`,
      );
    // mount -o loop attaches with autoclear: the device is let go when its last user closes it.
    await sleep(200);
  }
  return { lazy };
}

/** e2fsck -fy on the unmounted image, as a disk is checked before it is mounted again; its report. Throws on errors left. */
export function repairExt4Image(disk: Ext4Image): string {
  const r = command(['e2fsck', '-f', '-y', disk.image]);
  // 0: clean; 1: errors corrected. Anything more is a file system e2fsck could not mend, or its own failure.
  if (r.status !== 0 && r.status !== 1) throw new Error(r.problem ?? `e2fsck exited ${r.status}`);
  return `${r.stdout}${r.stderr}`;
}

/** Unmounts (see unmountExt4Image), detaches any loop device still on the image, and removes it. */
export async function removeExt4Image(disk: Ext4Image): Promise<void> {
  try {
    await unmountExt4Image(disk);
  } finally {
    for (const loop of attachedLoops(disk.image)) command(['losetup', '-d', loop]);
    rmSync(path.dirname(disk.image), { recursive: true, force: true });
  }
}

/**
 * Why an ext4 image cannot be mounted and turned read-only here, or null when it can: tried once with
 * a small one (made, mounted, checked for the kernel's hook, unmounted, checked by e2fsck, removed).
 */
export function ext4ImageUnavailable(): string | null {
  if (process.getuid?.() !== 0) return `mounting an ext4 image needs root (uid ${process.getuid?.() ?? 'unknown'})`;
  for (const tool of ['mkfs.ext4', 'e2fsck', 'losetup']) {
    const r = command([tool, '-V']);
    if (r.problem && r.status === null) return `${tool} is missing (Debian's e2fsprogs, mount): ${r.problem}`;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-ext4-probe-'));
  let disk: Ext4Image | null = null;
  try {
    disk = createExt4Image(dir, 16 * 1024 * 1024);
    if (!existsSync(`/sys/fs/ext4/${disk.loop}/trigger_fs_error`))
      return `this kernel has no /sys/fs/ext4/${disk.loop}/trigger_fs_error`;
    must(['umount', dir]);
    repairExt4Image(disk);
    return null;
  } catch (err) {
    return `cannot mount and check an ext4 image: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    if (disk) {
      if (mountAt(dir)) command(['umount', '-l', dir]);
      for (const loop of attachedLoops(disk.image)) command(['losetup', '-d', loop]);
      rmSync(path.dirname(disk.image), { recursive: true, force: true });
    }
    rmdirSync(dir);
  }
}
