import { createHash } from 'node:crypto';
import type { BaseLogger } from 'pino';
import { createDiscoveryResponder, type DiscoveryResponder } from '../discovery/responder.js';
import { SimulatedCamera, type TopicStyle } from './camera.js';
import type { SimMotion } from './ptz.js';
import { startSimulatedRtsp, type LoopedSource, type SimulatedRtsp } from './rtsp.js';

// Many simulated cameras in one process (for the demo and the discovery benchmark). Camera i gets
// a stable endpoint reference (so the gateway keeps its device id across restarts of the simulator),
// its own HTTP port and, with discovery on, a WS-Discovery responder.

export interface FleetOptions {
  count: number;
  /** Number of the first camera (endpoint, model, serial): fleets in one process must not overlap. */
  firstIndex?: number;
  host: string;
  /** First HTTP port; camera i listens on basePort + i (0: any free port). */
  basePort: number;
  username: string;
  password: string;
  /** WS-Discovery: the port to answer on and the interface address to join the group on. null: none. */
  discovery: { port: number; interfaceAddress: string } | null;
  /** Live video (ffmpeg + gst-rtsp-server) on this port (0: any free one); null: none. */
  rtspPort: number | null;
  mainBitrateKbps?: number;
  /** The wall clock burnt into the main picture (see SimulatedRtspOptions.clockStrip); off by default. */
  clockStrip?: boolean;
  /**
   * Main and sub looped from a clip encoded once instead of encoded live (see SimulatedRtspOptions.looped); off by
   * default.
   */
  looped?: LoopedSource;
  /** Pan, tilt and zoom (default on); false: fixed cameras. */
  ptz?: boolean;
  /** The live pictures follow the cameras' pan and tilt (see SimulatedRtspOptions.ptzPicture); off by default. */
  ptzPicture?: boolean;
  logger: BaseLogger;
}

export interface Fleet {
  cameras: SimulatedCamera[];
  rtsp: SimulatedRtsp | null;
  stop(): Promise<void>;
}

const STYLES: TopicStyle[] = ['hikvision', 'tplink', 'axis'];

export function simulatedEndpoint(index: number): string {
  const h = createHash('sha256').update(`edge-gateway-simulated-camera-${index}`).digest('hex');
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export async function startFleet(opts: FleetOptions): Promise<Fleet> {
  const cameras: SimulatedCamera[] = [];
  const responders: DiscoveryResponder[] = [];
  let rtsp: SimulatedRtsp | null = null;
  const stop = async () => {
    await Promise.all(responders.map((r) => r.bye().catch(() => undefined)));
    await Promise.all(responders.map((r) => r.close()));
    await Promise.all(cameras.map((c) => c.stop()));
    await rtsp?.stop();
  };
  try {
    if (opts.rtspPort !== null) {
      rtsp = await startSimulatedRtsp({
        cameras: opts.count,
        host: opts.host,
        port: opts.rtspPort,
        username: opts.username,
        password: opts.password,
        mainBitrateKbps: opts.mainBitrateKbps,
        clockStrip: opts.clockStrip,
        looped: opts.looped,
        ptzPicture: opts.ptzPicture,
        logger: opts.logger,
      });
    }
    for (let n = 0; n < opts.count; n++) {
      const i = (opts.firstIndex ?? 0) + n;
      const cam = new SimulatedCamera({
        host: opts.host,
        port: opts.basePort === 0 ? 0 : opts.basePort + n,
        username: opts.username,
        password: opts.password,
        endpoint: simulatedEndpoint(i),
        topicStyle: STYLES[i % STYLES.length],
        identity: { model: `SIM-${i + 1}`, serial: `SIM${String(i + 1).padStart(6, '0')}` },
        ...(rtsp ? { rtspMain: rtsp.url(n, 'main'), rtspSub: rtsp.url(n, 'sub') } : {}),
        ptz: opts.ptz ?? true,
        ...(rtsp && opts.ptzPicture ? { onPtzMotion: (m: SimMotion) => rtsp?.ptz(n, m) } : {}),
      });
      await cam.start();
      cameras.push(cam);
      if (opts.discovery) {
        const responder = await createDiscoveryResponder({
          endpoint: cam.endpoint,
          xaddrs: [cam.deviceServiceUrl],
          port: opts.discovery.port,
          interfaceAddress: opts.discovery.interfaceAddress,
          address: opts.host,
          logger: opts.logger,
        });
        responders.push(responder);
        await responder.hello().catch((err: Error) => opts.logger.debug({ err: err.message }, 'hello not sent'));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { cameras, rtsp, stop };
}
