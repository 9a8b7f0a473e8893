// What the System screen shows of the gateway (GET /v1/system), as the parts that measure it hand
// it over: the daemon's look at the machine and the disks (src/daemon/system-facts.ts), the media
// side's per camera. Here, below both, so that the API's port and its implementation share them.

/**
 * A disk's state: `low`, less free than the gateway keeps free there; `read_only`, the file system
 * takes no writes; `missing`, not there (unmounted, unplugged, the directory gone); `failed`, it
 * refused writes for another reason (an I/O error).
 */
export const DISK_STATES = ['ok', 'low', 'read_only', 'missing', 'failed'] as const;
export type DiskState = (typeof DISK_STATES)[number];

/** What each disk is to the gateway: data_dir, the event clips' directory, the continuous footage's. */
export const DISK_NAMES = ['data', 'clips', 'footage'] as const;

export interface DiskFacts {
  name: (typeof DISK_NAMES)[number];
  path: string;
  /** null while the disk is missing. */
  totalBytes: number | null;
  freeBytes: number | null;
  /** What the gateway's own files there take, as its database counts them; null: not known. */
  usedByGatewayBytes: number | null;
  state: DiskState;
}

/** A failure and when it happened (ms since the epoch). */
export interface FailureAt {
  message: string;
  at: number;
}

/** What the media side measures of one camera now. */
export interface CameraFacts {
  /** The main stream as the relay receives it, over the last few seconds; null while it is not open. */
  bitrateKbps: number | null;
  fps: number | null;
  /** People watching it live (RTSP, WebRTC, HLS sessions); the gateway's own readers not counted. */
  viewers: number;
  /** The camera's last failure (ONVIF or its stream), whatever its status now. */
  lastError: FailureAt | null;
}

export interface HostFacts {
  uptimeS: number;
  load1m: number;
  cpuCores: number;
  /** The machine's busy share since the previous look; null: none recent enough to measure from. */
  cpuPct: number | null;
  memoryTotalBytes: number;
  memoryAvailableBytes: number;
  /** The hottest thermal zone's reading; null on a board without one. */
  temperatureC: number | null;
}

export interface ProcessFacts {
  uptimeS: number;
  rssBytes: number;
  /** The daemon's CPU time (its threads, not its ffmpeg children) as a share of all cores' since the previous look. */
  cpuPct: number | null;
}
