import { rmdirSync } from 'node:fs';
import { pino } from 'pino';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from './gateway.js';
import { tempDir } from './temp-dir.js';
import { mountTmpfs, unmountTmpfs } from './tmpfs.js';

// What the continuous-footage tests start: one simulated camera, a tmpfs mounted as the footage
// disk (another device than the system's, as a USB disk would be), and the started gateway
// recording the camera around the clock onto it in 10 s files, the index flushed every second.

export interface FootageSpan {
  start: string;
  end: string;
}

export interface FootageRig {
  fleet: Fleet;
  t: TestGateway;
  /** The footage disk's mount point (recording.continuous.storage_dir). */
  disk: string;
  deviceId: string;
  /** The spans of footage kept in the last hour (GET /v1/devices/{id}/footage). */
  spans(): Promise<FootageSpan[]>;
  stop(): Promise<void>;
}

export async function startFootageRig(opts: {
  name: string;
  password: string;
  diskBytes?: number;
  /** The camera burns its wall clock into the main picture. */
  clockStrip?: boolean;
  /** More of the camera's cameras[] entry (continuous_profile …). */
  camera?: Record<string, unknown>;
  /** More of the gateway's config, beside cameras and recording.continuous. */
  gateway?: Record<string, unknown>;
  /** More of recording (pre_roll_s …), beside continuous. */
  recording?: Record<string, unknown>;
}): Promise<FootageRig> {
  const disk = tempDir();
  mountTmpfs(disk, opts.diskBytes ?? 256 * 1024 * 1024);
  let fleet: Fleet | null = null;
  let t: TestGateway | null = null;
  const stop = async () => {
    await t?.stop();
    await fleet?.stop();
    unmountTmpfs(disk);
    rmdirSync(disk);
  };
  try {
    fleet = await startFleet({
      count: 1,
      host: '127.0.0.1',
      basePort: 0,
      username: 'admin',
      password: opts.password,
      discovery: null,
      rtspPort: 0,
      ...(opts.clockStrip ? { clockStrip: true } : {}),
      logger: pino({ level: process.env.SIM_LOG ?? 'silent' }),
    });
    t = await startTestGateway({
      ...opts.gateway,
      cameras: [
        {
          name: opts.name,
          onvif_url: fleet.cameras[0]!.deviceServiceUrl,
          username: 'admin',
          password: opts.password,
          ...opts.camera,
        },
      ],
      recording: {
        ...opts.recording,
        continuous: { enabled: true, storage_dir: disk, file_s: 10, flush_s: 1, min_free_bytes: 0 },
      },
    });
    const gateway = t;
    const deviceId = await firstOnlineDevice(gateway);
    return {
      fleet,
      t: gateway,
      disk,
      deviceId,
      async spans() {
        const now = Date.now();
        const q = `start=${new Date(now - 3_600_000).toISOString()}&end=${new Date(now + 60_000).toISOString()}`;
        const res = await gateway.request(`/v1/devices/${deviceId}/footage?${q}`, {
          headers: await gateway.auth('recordings:read'),
        });
        return (res.json() as { data: FootageSpan[] }).data;
      },
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
