import { readFile, stat, statfs } from 'node:fs/promises';

// Which disk holds the footage. Continuous footage writes all day: on the system's SD card or eMMC it
// would wear the card out, so a footage directory on the same block device as the root file system
// or the gateway's data directory is refused unless the owner says otherwise. The same check runs
// before recording resumes after the disk went away: an unmounted disk leaves its empty mount point
// on the root file system, and footage written there would land on the SD card.

export interface MountEntry {
  /** "major:minor" of the file system's device. */
  device: string;
  mountPoint: string;
  fsType: string;
  /** What was mounted: /dev/sda1, tmpfs, … */
  source: string;
}

/** Decodes the octal escapes (\040 for a space) mountinfo uses in paths. */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** /proc/self/mountinfo (proc(5)): one entry per line that parses, others skipped. */
export function parseMountInfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 6 || fields.length < dash + 3) continue;
    const device = fields[2] as string;
    if (!/^\d+:\d+$/.test(device)) continue;
    out.push({
      device,
      mountPoint: unescapeMountPath(fields[4] as string),
      fsType: fields[dash + 1] as string,
      source: unescapeMountPath(fields[dash + 2] as string),
    });
  }
  return out;
}

/** Linux's dev_t as stat gives it, as "major:minor". */
export function majorMinor(dev: number): string {
  const n = BigInt(dev);
  const major = ((n >> 8n) & 0xfffn) | ((n >> 32n) & ~0xfffn);
  const minor = (n & 0xffn) | ((n >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

export interface DiskOf {
  /** "major:minor" */
  device: string;
  /** What the file system was mounted from, and where; null when mountinfo does not say. */
  source: string | null;
  mountPoint: string | null;
}

/** The disk a path is on: its device, and the mount it comes from. */
export async function diskOf(dir: string, mountInfo = '/proc/self/mountinfo'): Promise<DiskOf> {
  const device = majorMinor((await stat(dir)).dev);
  let mounts: MountEntry[] = [];
  try {
    mounts = parseMountInfo(await readFile(mountInfo, 'utf8'));
  } catch {
    // Without /proc the device number alone still answers "same disk or not".
  }
  const mount = mounts
    .filter(
      (m) =>
        m.device === device &&
        (dir === m.mountPoint || dir.startsWith(m.mountPoint.endsWith('/') ? m.mountPoint : `${m.mountPoint}/`)),
    )
    .sort((a, b) => b.mountPoint.length - a.mountPoint.length)[0];
  return { device, source: mount?.source ?? null, mountPoint: mount?.mountPoint ?? null };
}

export function describeDisk(disk: DiskOf): string {
  return disk.source
    ? `${disk.source} (device ${disk.device}, mounted at ${disk.mountPoint})`
    : `device ${disk.device}`;
}

/** Bytes free for this process's writes on the file system holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}
