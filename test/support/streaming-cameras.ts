import { pino } from 'pino';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';

// Simulated cameras for tests of what the gateway receives from them: one streaming live H.264
// (ffmpeg and gst-rtsp-server, so the test is an integration or browser one), and one the gateway
// adopts whose stream can never be opened.

export interface CameraAccount {
  username: string;
  password: string;
}

/** One simulated camera on loopback with live video (its log at SIM_LOG, else silent). */
export function startStreamingCamera(account: CameraAccount): Promise<Fleet> {
  return startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    ...account,
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: process.env.SIM_LOG ?? 'silent' }),
  });
}

/** A simulated camera whose ONVIF answers, and whose RTSP is at a closed port: online, its stream never opens. */
export async function startCameraWithoutStream(account: CameraAccount, serial: string): Promise<SimulatedCamera> {
  const camera = new SimulatedCamera({
    ...account,
    identity: { model: 'NOSTREAM', serial },
    rtspMain: 'rtsp://127.0.0.1:1/main',
    rtspSub: 'rtsp://127.0.0.1:1/sub',
  });
  await camera.start();
  return camera;
}
