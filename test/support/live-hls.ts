import { spawn } from 'node:child_process';
import { pino } from 'pino';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { startSimulatedRtsp, type ExtraMount, type SimulatedRtsp } from '../../src/onvif/simulator/rtsp.js';
import { startTestGateway, type TestGateway } from './gateway.js';

// The started gateway with simulated cameras whose main/sub streams are the simulator's codec
// mounts, for the LL-HLS tests: "AAC" plays H.264 + AAC (main) and H.264 + G.711 (sub), "HEVC"
// plays H.265 + AAC (main).

const USER = 'admin';
const PASSWORD = 'cam-secret-hls';

export interface HlsRig {
  t: TestGateway;
  rtsp: SimulatedRtsp;
  /** Device ids by camera name. */
  devices: Record<'AAC' | 'HEVC', string>;
  stop(): Promise<void>;
}

const CAMERAS: Array<{ name: 'AAC' | 'HEVC'; main: ExtraMount; sub: ExtraMount | 'sub' }> = [
  { name: 'AAC', main: 'h264aac', sub: 'h264pcmu' },
  { name: 'HEVC', main: 'h265aac', sub: 'sub' },
];

export async function startHlsRig(config: Record<string, unknown> = {}): Promise<HlsRig> {
  const logger = pino({ level: process.env.SIM_LOG ?? 'silent' });
  const rtsp = await startSimulatedRtsp({
    cameras: 1,
    host: '127.0.0.1',
    port: 0,
    username: USER,
    password: PASSWORD,
    extraMounts: ['h264aac', 'h264pcmu', 'h265aac'],
    logger,
  });
  const cameras: SimulatedCamera[] = [];
  let t: TestGateway | null = null;
  const stop = async () => {
    await t?.stop();
    await Promise.all(cameras.map((c) => c.stop()));
    await rtsp.stop();
  };
  try {
    for (const [i, c] of CAMERAS.entries()) {
      const cam = new SimulatedCamera({
        host: '127.0.0.1',
        port: 0,
        username: USER,
        password: PASSWORD,
        identity: { model: `HLS-${c.name}`, serial: `HLS${i}` },
        endpoint: `urn:uuid:00000000-0000-4000-8000-00000000000${i}`,
        rtspMain: rtsp.url(0, c.main),
        rtspSub: rtsp.url(0, c.sub),
      });
      await cam.start();
      cameras.push(cam);
    }
    t = await startTestGateway({
      ...config,
      cameras: CAMERAS.map((c, i) => ({
        name: c.name,
        onvif_url: cameras[i]!.deviceServiceUrl,
        username: USER,
        password: PASSWORD,
      })),
    });
    const devices = await onlineDevices(t);
    return { t, rtsp, devices, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function onlineDevices(t: TestGateway): Promise<Record<'AAC' | 'HEVC', string>> {
  const headers = await t.auth('devices:read');
  for (let i = 0; i < 200; i++) {
    const { data } = (await t.request('/v1/devices', { headers })).json() as {
      data: Array<{ id: string; name: string; status: string }>;
    };
    const online = (name: string) => data.find((d) => d.name === name && d.status === 'online')?.id;
    const aac = online('AAC');
    const hevc = online('HEVC');
    if (aac && hevc) return { AAC: aac, HEVC: hevc };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the simulated cameras were not adopted');
}

/**
 * The ticket of GET /v1/devices/{id}/stream (its rtsp:// address: the ticket is the same for every
 * protocol) and the LL-HLS address under it on the API's port.
 */
export async function hlsAddress(
  t: TestGateway,
  deviceId: string,
  profile: 'main' | 'sub' = 'main',
): Promise<{ ticket: string; url: string }> {
  const res = await t.request(`/v1/devices/${deviceId}/stream?profile=${profile}`, {
    headers: await t.auth('devices:read'),
  });
  if (res.status !== 200) throw new Error(`stream address: ${res.status} ${res.text}`);
  const { stream_url } = res.json() as { stream_url: string };
  const ticket = /\/live\/([^/]+)$/.exec(stream_url)?.[1];
  if (!ticket) throw new Error(`no ticket in ${stream_url}`);
  return { ticket, url: `${t.gw.apiUrl}/live/${ticket}/index.m3u8` };
}

export interface Played {
  code: number | null;
  stderr: string;
  /** Decoded frames per stream type (ffmpeg's -f framemd5 lines). */
  frames: { video: number; audio: number };
}

/** ffmpeg plays the address for `seconds` (TLS verification off: the gateway's certificate is self-signed). */
export function ffmpegPlays(url: string, seconds: number): Promise<Played> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-tls_verify',
        '0',
        '-i',
        url,
        '-t',
        String(seconds),
        '-map',
        '0:v',
        '-map',
        '0:a?',
        '-f',
        'framemd5',
        '-',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 80_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const lines = stdout.split('\n').filter((l) => l && !l.startsWith('#'));
      // framemd5 lines start with the stream index: 0 video, 1 audio (the -map order).
      resolve({
        code,
        stderr,
        frames: {
          video: lines.filter((l) => l.startsWith('0,')).length,
          audio: lines.filter((l) => l.startsWith('1,')).length,
        },
      });
    });
  });
}
