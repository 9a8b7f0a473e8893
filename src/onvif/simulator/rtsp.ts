import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { fileURLToPath } from 'node:url';
import type { BaseLogger } from 'pino';

// Live video for simulated cameras: ffmpeg makes H.264 from its test source (a main and a sub
// stream per camera) and sends it as RTP to loopback; GStreamer's gst-rtsp-server
// (rtsp_server.py) serves each as an RTSP mount with Digest authentication, like a camera.
// Optional extra mounts carry other codecs, with audio, for the tests of the relay's codec handling.

/**
 * Mounts besides main and sub, each video plus audio as cameras send them: `h265aac` is H.265 with
 * AAC-LC (MPEG4-GENERIC, 16 kHz mono), `h264pcmu` is H.264 with G.711 µ-law (8 kHz mono). Both are
 * 640x360 at 10 frames/s with a keyframe every second, made by one more ffmpeg per camera.
 */
export const EXTRA_MOUNTS = ['h265aac', 'h264pcmu'] as const;
export type ExtraMount = (typeof EXTRA_MOUNTS)[number];

export interface SimulatedRtspOptions {
  cameras: number;
  host: string;
  /** 0: any free port. */
  port: number;
  username: string;
  password: string;
  ffmpegPath?: string;
  /** Main stream bit rate (default 1500 kbit/s). */
  mainBitrateKbps?: number;
  /** Served at /camN/<name> besides main and sub; none by default (each costs encoder time). */
  extraMounts?: readonly ExtraMount[];
  /** Debian's interpreter: the one with python3-gi (a pyenv or venv python usually lacks it). */
  pythonPath?: string;
  logger: BaseLogger;
}

export interface SimulatedRtsp {
  readonly port: number;
  /** An extra mount's URL only when it was asked for in extraMounts. */
  url(camera: number, stream: 'main' | 'sub' | ExtraMount): string;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('../../../src/onvif/simulator/rtsp_server.py', import.meta.url));

/**
 * Free even UDP ports on loopback below the kernel's ephemeral range (32768+), where ffmpeg's own
 * sockets land: a released ephemeral port could be taken by ffmpeg before the RTSP server binds it.
 * Even, because ffmpeg sends RTCP to port + 1, which must not be another stream's port.
 */
async function freeUdpPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const port = 20_000 + 2 * Math.floor(Math.random() * 5000);
    if (ports.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const s = createSocket('udp4');
      s.once('error', () => resolve(false));
      s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) ports.push(port);
  }
  return ports;
}

interface ExtraMountSpec {
  /** Track kinds for rtsp_server.py's --mount, video then audio. */
  tracks: readonly [string, string];
  videoCodec: readonly string[];
  /** ffmpeg output options and URL of the audio, sent to `port`. */
  audio: (port: number) => string[];
}

const EXTRA: Record<ExtraMount, ExtraMountSpec> = {
  h265aac: {
    tracks: ['h265', 'aac'],
    // repeat-headers: parameter sets before every keyframe, as x264 does by itself; rtsp_server.py has no parser to add them.
    videoCodec: ['-c:v', 'libx265', '-preset', 'ultrafast', '-tune', 'zerolatency', '-x265-params', 'log-level=error:keyint=10:min-keyint=10:scenecut=0:repeat-headers=1'],
    // rtsp_server.py's AAC_CAPS describe exactly this (AAC-LC, 16 kHz, mono): keep them in step.
    audio: (port) => ['-c:a', 'aac', '-b:a', '32k', '-ar', '16000', '-ac', '1', '-payload_type', '97', '-f', 'rtp', `rtp://127.0.0.1:${port}`],
  },
  h264pcmu: {
    tracks: ['h264', 'pcmu'],
    videoCodec: ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-sc_threshold', '0'],
    // RTP with the static payload type 0, as cameras send G.711.
    audio: (port) => ['-c:a', 'pcm_mulaw', '-ar', '8000', '-ac', '1', '-f', 'rtp', `rtp://127.0.0.1:${port}`],
  },
};

/** ffmpeg output options of one extra mount: video as RTP to one port, audio to the other. */
function extraOutputs(mount: ExtraMount, videoPort: number, audioPort: number): string[] {
  const spec = EXTRA[mount];
  return ['-map', '0:v', '-pix_fmt', 'yuv420p', ...spec.videoCodec, '-b:v', '300k', '-f', 'rtp', `rtp://127.0.0.1:${videoPort}`, '-map', '1:a', ...spec.audio(audioPort)];
}

function ended(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

export async function startSimulatedRtsp(opts: SimulatedRtspOptions): Promise<SimulatedRtsp> {
  const children: ChildProcess[] = [];
  // Children must not outlive this process (a test runner exiting early): kill them on exit too.
  const killAll = () => {
    for (const c of children) c.kill('SIGTERM');
  };
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    killAll();
    await Promise.all(children.map(ended));
  };
  try {
    const extras = [...new Set(opts.extraMounts ?? [])];
    const udp = await freeUdpPorts(opts.cameras * (2 + 2 * extras.length));
    // Main and sub keep the first ports, as without extra mounts; each extra mount adds a video and an audio port.
    const extraPorts = (camera: number, k: number): [number, number] => {
      const at = 2 * opts.cameras + 2 * (camera * extras.length + k);
      return [udp[at] as number, udp[at + 1] as number];
    };
    const mounts = Array.from({ length: opts.cameras }, (_, i) => [
      `/cam${i}/main=${udp[2 * i]}`,
      `/cam${i}/sub=${udp[2 * i + 1]}`,
      ...extras.map((name, k) => {
        const [video, audio] = extraPorts(i, k);
        const [videoKind, audioKind] = EXTRA[name].tracks;
        return `/cam${i}/${name}=${videoKind}:${video},${audioKind}:${audio}`;
      }),
    ]).flat();
    const server = spawn(
      opts.pythonPath ?? '/usr/bin/python3',
      [SCRIPT, '--host', opts.host, '--port', String(opts.port), '--user', opts.username, '--password', opts.password, ...mounts.flatMap((m) => ['--mount', m])],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(server);
    server.stderr?.on('data', (d: Buffer) => opts.logger.debug({ stderr: d.toString().trim().slice(0, 500) }, 'simulated RTSP server'));
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      server.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (!line) return;
        const msg = JSON.parse(line) as { listening?: number; error?: string };
        if (msg.listening) resolve(msg.listening);
        else reject(new Error(msg.error ?? 'RTSP server failed'));
      });
      server.once('error', (err) => reject(new Error(`cannot run ${opts.pythonPath ?? '/usr/bin/python3'}: ${err.message} (apt-get install python3-gi gir1.2-gst-rtsp-server-1.0)`)));
      server.once('exit', (code) => reject(new Error(`simulated RTSP server exited with ${code}; are python3-gi and gir1.2-gst-rtsp-server-1.0 installed?`)));
    });
    for (let i = 0; i < opts.cameras; i++) {
      // One encoder process per camera; -re paces the test source in real time like a sensor.
      const ffmpeg = spawn(
        opts.ffmpegPath ?? 'ffmpeg',
        [
          '-hide_banner', '-loglevel', 'error', '-nostdin', '-re',
          '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=15',
          '-filter_complex', '[0:v]split=2[main][s];[s]scale=320:180[sub]',
          '-map', '[main]', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15', '-b:v', `${opts.mainBitrateKbps ?? 1500}k`, '-f', 'rtp', `rtp://127.0.0.1:${udp[2 * i]}`,
          '-map', '[sub]', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15', '-b:v', '200k', '-f', 'rtp', `rtp://127.0.0.1:${udp[2 * i + 1]}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(ffmpeg);
      ffmpeg.stderr?.on('data', (d: Buffer) => opts.logger.warn({ camera: i, stderr: d.toString().trim().slice(0, 500) }, 'simulated camera encoder'));
      ffmpeg.once('error', (err) => opts.logger.error({ err: err.message }, 'cannot run ffmpeg for the simulated camera'));
      if (extras.length === 0) continue;
      // A separate process, so that main and sub are made exactly as without extra mounts.
      const extra = spawn(
        opts.ffmpegPath ?? 'ffmpeg',
        [
          '-hide_banner', '-loglevel', 'error', '-nostdin',
          '-re', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=10',
          '-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=16000',
          ...extras.flatMap((name, k) => extraOutputs(name, ...extraPorts(i, k))),
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(extra);
      extra.stderr?.on('data', (d: Buffer) => opts.logger.warn({ camera: i, stderr: d.toString().trim().slice(0, 500) }, 'simulated camera encoder (extra mounts)'));
      extra.once('error', (err) => opts.logger.error({ err: err.message }, 'cannot run ffmpeg for the simulated camera'));
    }
    const url = (camera: number, stream: 'main' | 'sub' | ExtraMount): string => {
      if (stream !== 'main' && stream !== 'sub' && !extras.includes(stream)) throw new Error(`the simulated cameras have no ${stream} mount (see extraMounts)`);
      return `rtsp://${opts.host}:${port}/cam${camera}/${stream}`;
    };
    return { port, url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
