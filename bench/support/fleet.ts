// The simulated cameras (dist/onvif/simulator) as the benches configure the gateway for them.
import type { SimulatedCamera } from '../../dist/onvif/simulator/camera.js';
import { pino, type Logger } from 'pino';
import { startFleet, type Fleet } from '../../dist/onvif/simulator/fleet.js';
import type { SimulatedRtsp } from '../../dist/onvif/simulator/rtsp.js';

/**
 * The config's `cameras:` entries (YAML) for a fleet's cameras: camera i named `name(i)`, account admin and `password`.
 */
export const cameraEntries = (fleet: Fleet, password: string, name: (i: number) => string): string =>
  fleet.cameras
    .map(
      (c, i) =>
        `  - name: ${name(i)}\n    onvif_url: ${c.deviceServiceUrl}\n    username: admin\n    password: ${password}\n`,
    )
    .join('');

/** Camera `i` of the fleet. */
export function cameraOf(fleet: Fleet, i: number): SimulatedCamera {
  const camera = fleet.cameras[i];
  if (!camera) throw new Error(`the fleet has no camera ${i}`);
  return camera;
}

/** The fleet's RTSP server (a fleet started with an rtspPort). */
export function rtspOf(fleet: Fleet): SimulatedRtsp {
  if (!fleet.rtsp) throw new Error('the fleet has no RTSP server');
  return fleet.rtsp;
}

/** How a bench wants its simulated cameras; every field has the common default. */
export interface BenchFleetOptions {
  /** How many cameras (default 1). */
  readonly count?: number;
  /** The main stream's bit rate (default: the simulator's own). */
  readonly mainKbps?: number;
  /**
   * A 1080p15 10 s loop (1 s GOP) encoded once and replayed, so the cameras cost little CPU of their own
   * (default false: live x264 encoders).
   */
  readonly looped?: boolean;
  /** The running clock strip the latency benches read off the picture. */
  readonly clockStrip?: boolean;
  /** Default: silent. */
  readonly logger?: Logger;
}

/** Simulated cameras, account admin / bench, on loopback with ports of the system's choosing. */
export function startBenchFleet(options: BenchFleetOptions = {}): Promise<Fleet> {
  return startFleet({
    count: options.count ?? 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'bench',
    discovery: null,
    rtspPort: 0,
    ...(options.mainKbps === undefined ? {} : { mainBitrateKbps: options.mainKbps }),
    ...(options.looped ? { looped: { width: 1920, height: 1080, fps: 15, gopS: 1, seconds: 10 } } : {}),
    ...(options.clockStrip ? { clockStrip: true } : {}),
    logger: options.logger ?? pino({ level: 'silent' }),
  });
}
