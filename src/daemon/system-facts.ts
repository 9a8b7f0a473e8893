import { constants } from 'node:fs';
import { access, stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { CameraFacts, DiskFacts, DiskState, FailureAt, HostFacts, ProcessFacts } from '../domain/system-facts.js';
import { MachineLoad } from './machine.js';

// The figures of the System screen (GET /v1/system), gathered when it asks from what the parts
// already keep: the machine and this process (machine.ts), the disks by statfs with what the
// database says the gateway's files there take, and per camera what the relay, the live-view
// sessions and the camera manager know. Nothing here runs between two looks.

/** What the footage recorder says of its disk (media/footage: FootageRecorder.diskProblem). */
export type FootageDiskProblem = 'disk_missing' | 'disk_full' | 'read_only' | 'io' | 'other';

export interface SystemFactsDeps {
  /** The database: its file (data_dir's share) and the sums of its clips' and footage files' sizes. */
  store: { readonly file: string; recordingBytes(): number; footageBytes(): number };
  /** Where the event clips are (recording.storage_dir, else data_dir/recordings). */
  clipsDir: string;
  /** Continuous recording; null when it is off. */
  footage: { diskProblem(): FootageDiskProblem | null } | null;
  /** The camera's main stream as the relay receives it now; null while no session is open. */
  traffic(deviceId: string): { kbps: number; fps: number } | null;
  /** Each kind of live view's sessions of a camera, summed. */
  viewers: ReadonlyArray<(deviceId: string) => number>;
  /** Each part's last failure with a camera; the newest is shown. */
  errors: ReadonlyArray<(deviceId: string) => FailureAt | null>;
}

/**
 * A disk counts as low below half of what the gateway keeps free there: retention removes the
 * oldest clips or footage whenever free space falls under the floor, so a disk kept full of them
 * hovers at the floor itself; below half of it, retention has nothing left to remove, or something
 * else fills the disk.
 */
const LOW_SHARE_OF_FLOOR = 0.5;

/** The API's SystemFacts (src/api/ports.ts). */
export function createSystemFacts(config: Config, deps: SystemFactsDeps, machine = new MachineLoad()) {
  const dataDir = path.resolve(config.gateway.data_dir);
  const clipsDir = path.resolve(deps.clipsDir);
  const clipsInData = isInside(clipsDir, dataDir);
  const clipsFloor = config.recording.retention.min_free_bytes * LOW_SHARE_OF_FLOOR;
  const footageDir = config.recording.continuous.storage_dir;
  const footageFloor = config.recording.continuous.min_free_bytes * LOW_SHARE_OF_FLOOR;
  const databaseBytes = async () => {
    const sizes = await Promise.all(
      ['', '-wal', '-shm'].map((suffix) =>
        stat(`${deps.store.file}${suffix}`).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    return sizes.reduce((a, b) => a + b, 0);
  };
  return {
    async machine(): Promise<{ host: HostFacts; process: ProcessFacts }> {
      const host = await machine.host();
      return { host, process: machine.process(host.cpuCores) };
    },
    async storage(): Promise<DiskFacts[]> {
      const disks = [
        await readDisk(
          'data',
          dataDir,
          clipsFloor,
          null,
          async () => (await databaseBytes()) + (clipsInData ? deps.store.recordingBytes() : 0),
        ),
      ];
      if (!clipsInData)
        disks.push(await readDisk('clips', clipsDir, clipsFloor, null, async () => deps.store.recordingBytes()));
      const footage = deps.footage;
      if (footage && footageDir !== null) {
        const problem = footage.diskProblem();
        const known = problem === null ? null : FOOTAGE_STATE[problem];
        disks.push(await readDisk('footage', footageDir, footageFloor, known, async () => deps.store.footageBytes()));
      }
      return disks;
    },
    camera(deviceId: string): CameraFacts {
      const rate = deps.traffic(deviceId);
      let lastError: FailureAt | null = null;
      for (const errorOf of deps.errors) {
        const e = errorOf(deviceId);
        if (e && (!lastError || e.at > lastError.at)) lastError = e;
      }
      return {
        bitrateKbps: rate ? Math.round(rate.kbps) : null,
        fps: rate ? Math.round(rate.fps * 10) / 10 : null,
        viewers: deps.viewers.reduce((n, viewersOf) => n + viewersOf(deviceId), 0),
        lastError,
      };
    },
  };
}

const FOOTAGE_STATE: Record<FootageDiskProblem, DiskState> = {
  disk_missing: 'missing',
  disk_full: 'low',
  read_only: 'read_only',
  io: 'failed',
  other: 'failed',
};

/**
 * A disk by the directory the gateway writes there: its size and free space (statfs, what the
 * gateway's writes may use), and its state: `known` (what a part found writing there), else
 * missing or read-only as the directory says, else low or ok by its free space.
 */
export async function readDisk(
  name: DiskFacts['name'],
  dir: string,
  lowBelowBytes: number,
  known: DiskState | null,
  usedByGateway: () => Promise<number>,
): Promise<DiskFacts> {
  const used = await usedByGateway().catch(() => null);
  const facts = { name, path: dir, usedByGatewayBytes: used };
  // An unmounted disk leaves its mount point on the system disk: its figures would be the SD card's.
  if (known === 'missing') return { ...facts, totalBytes: null, freeBytes: null, state: 'missing' };
  let totalBytes: number;
  let freeBytes: number;
  try {
    const s = await statfs(dir);
    totalBytes = s.blocks * s.bsize;
    freeBytes = s.bavail * s.bsize;
  } catch (err) {
    const state = isGone(err) ? 'missing' : 'failed';
    return { ...facts, totalBytes: null, freeBytes: null, state };
  }
  const state = known ?? (await writeState(dir)) ?? (freeBytes < lowBelowBytes ? 'low' : 'ok');
  return { ...facts, totalBytes, freeBytes, state };
}

/** read_only when the file system takes no writes (access(2) answers EROFS), missing when the directory is gone. */
async function writeState(dir: string): Promise<DiskState | null> {
  try {
    await access(dir, constants.W_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return 'read_only';
    return isGone(err) ? 'missing' : null;
  }
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENODEV' || code === 'ENXIO';
}

function isInside(dir: string, parent: string): boolean {
  const rel = path.relative(parent, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
