// The simulated cameras (dist/onvif/simulator) as the benches configure the gateway for them.
import type { SimulatedCamera } from '../../dist/onvif/simulator/camera.js';
import type { Fleet } from '../../dist/onvif/simulator/fleet.js';
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
