import { pino } from 'pino';
import { startSimulatedRtsp, type SimulatedRtsp } from '../../src/onvif/simulator/rtsp.js';

// A plain RTSP camera for the tests that add one by its URL: the simulator's gst-rtsp-server with
// Digest authentication (user admin), one camera on loopback at a free port, live H.264 main
// (1280x720) and sub (320x180) from ffmpeg's moving test picture.

export function startDigestCamera(password: string): Promise<SimulatedRtsp> {
  return startSimulatedRtsp({
    cameras: 1,
    host: '127.0.0.1',
    port: 0,
    username: 'admin',
    password,
    logger: pino({ level: 'silent' }),
  });
}
