import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BaseLogger } from 'pino';
import type { SimMotion } from './ptz.js';
import { isCommandChatter, PtzPicture, ptzPictureFilter, PTZ_PICTURE } from './ptz-picture.js';

// Live video for simulated cameras: ffmpeg makes H.264 from its test source (a main and a sub
// stream per camera) and sends it as RTP to loopback; GStreamer's gst-rtsp-server
// (rtsp_server.py) serves each as an RTSP mount with Digest authentication, like a camera.
// Optional extra mounts carry other codecs, with audio, for the tests of the relay's codec handling.
// With `looped`, main and sub are not encoded live: a clip encoded once (and cached) is sent in a
// loop without re-encoding, so many cameras at a camera's resolution and bit rate cost little CPU.

/**
 * Mounts besides main and sub, each video plus audio as cameras send them: `h265aac` is H.265 with
 * AAC-LC (MPEG4-GENERIC, 16 kHz mono), `h264pcmu` is H.264 with G.711 µ-law (8 kHz mono),
 * `h264aac` H.264 with that AAC. All are 640x360 at 10 frames/s with a keyframe every second, made
 * by one more ffmpeg per camera.
 */
export const EXTRA_MOUNTS = ['h265aac', 'h264pcmu', 'h264aac'] as const;
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
  /**
   * Main and sub from a pre-encoded clip sent in a loop (`-stream_loop -1 -re … -c copy`) instead
   * of a live encoder per camera; off (undefined) by default. The sub stream is a 320x180 clip.
   */
  looped?: LoopedSource;
  /**
   * The wall clock burnt into the live main picture (not with `looped`), for glass-to-glass latency:
   * see CLOCK_STRIP. Off by default.
   */
  clockStrip?: boolean;
  /** Served at /camN/<name> besides main and sub; none by default (each costs encoder time). */
  extraMounts?: readonly ExtraMount[];
  /**
   * The live pictures follow their cameras' pan and tilt (ptz-picture.ts; not with `looped`), told
   * by SimulatedRtsp.ptz. Off by default: the larger test pattern costs a little more encoder time.
   */
  ptzPicture?: boolean;
  /** Debian's interpreter: the one with python3-gi (a pyenv or venv python usually lacks it). */
  pythonPath?: string;
  logger: BaseLogger;
}

/** The looped main stream: H.264 without B-frames, a keyframe every `gopS` seconds. */
export interface LoopedSource {
  /** Default 1920. */
  width?: number;
  /** Default 1080. */
  height?: number;
  /** Frames per second, default 15. */
  fps?: number;
  /** Seconds between keyframes, default 1. */
  gopS?: number;
  /** Length of the clip, default 10 s (a whole number of GOPs, so the loop point is a keyframe). */
  seconds?: number;
  /**
   * ffmpeg input options of the picture instead of the test pattern (e.g. `['-i', 'scene.mp4']`, at
   * least `seconds` long, already width × height): a scene for the detector's tests.
   */
  input?: readonly string[];
}

export interface SimulatedRtsp {
  readonly port: number;
  /** An extra mount's URL only when it was asked for in extraMounts. */
  url(camera: number, stream: 'main' | 'sub' | ExtraMount): string;
  /** Camera `camera`'s picture follows this motion from now on (with ptzPicture; otherwise nothing). */
  ptz(camera: number, motion: SimMotion): void;
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

// rtsp_server.py's AAC_CAPS describe exactly this (AAC-LC, 16 kHz, mono): keep them in step.
const AAC_AUDIO = (port: number): string[] => [
  '-c:a',
  'aac',
  '-b:a',
  '32k',
  '-ar',
  '16000',
  '-ac',
  '1',
  '-payload_type',
  '97',
  '-f',
  'rtp',
  `rtp://127.0.0.1:${port}`,
];
const X264_VIDEO = [
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  '-tune',
  'zerolatency',
  '-g',
  '10',
  '-sc_threshold',
  '0',
];

const EXTRA: Record<ExtraMount, ExtraMountSpec> = {
  h265aac: {
    tracks: ['h265', 'aac'],
    // repeat-headers: parameter sets before every keyframe, as x264 does by itself; rtsp_server.py has no parser to add
    // them.
    videoCodec: [
      '-c:v',
      'libx265',
      '-preset',
      'ultrafast',
      '-tune',
      'zerolatency',
      '-x265-params',
      'log-level=error:keyint=10:min-keyint=10:scenecut=0:repeat-headers=1',
    ],
    audio: AAC_AUDIO,
  },
  h264pcmu: {
    tracks: ['h264', 'pcmu'],
    videoCodec: X264_VIDEO,
    // RTP with the static payload type 0, as cameras send G.711.
    audio: (port) => ['-c:a', 'pcm_mulaw', '-ar', '8000', '-ac', '1', '-f', 'rtp', `rtp://127.0.0.1:${port}`],
  },
  h264aac: { tracks: ['h264', 'aac'], videoCodec: X264_VIDEO, audio: AAC_AUDIO },
};

/** ffmpeg output options of one extra mount: video as RTP to one port, audio to the other. */
function extraOutputs(mount: ExtraMount, videoPort: number, audioPort: number): string[] {
  const spec = EXTRA[mount];
  return [
    '-map',
    '0:v',
    '-pix_fmt',
    'yuv420p',
    ...spec.videoCodec,
    '-b:v',
    '300k',
    '-f',
    'rtp',
    `rtp://127.0.0.1:${videoPort}`,
    '-map',
    '1:a',
    ...spec.audio(audioPort),
  ];
}

interface LoopedClips {
  main: string;
  sub: string;
  /** ms between keyframes (to spread the cameras' keyframes over one GOP). */
  gopMs: number;
}

/** Bumped when the encoding below changes, so a cached clip made the old way is not reused. */
const CLIP_RECIPE = 1;

function runFfmpeg(ffmpeg: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.once('error', (err) => reject(new Error(`cannot run ${ffmpeg}: ${err.message}`)));
    child.once('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${ffmpeg} exited with ${code} making the looped clip: ${stderr.trim()}`)),
    );
  });
}

/**
 * The clips of `looped` in os.tmpdir(), encoded on first use and then reused (by name: a hash of
 * everything that shapes them), so a benchmark pays the encoder once, not once per camera or run.
 */
async function loopedClips(ffmpeg: string, source: LoopedSource, mainKbps: number): Promise<LoopedClips> {
  const width = source.width ?? 1920;
  const height = source.height ?? 1080;
  const fps = source.fps ?? 15;
  const gopS = source.gopS ?? 1;
  const gop = Math.max(1, Math.round(fps * gopS));
  // Whole GOPs: the loop then restarts on a keyframe, as a camera's stream would continue.
  const frames = Math.max(1, Math.round(((source.seconds ?? 10) * fps) / gop)) * gop;
  const input = source.input ?? ['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${fps}`];
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        CLIP_RECIPE,
        width,
        height,
        fps,
        gop,
        frames,
        mainKbps,
        ...(source.input ? { input: source.input } : {}),
      }),
    )
    .digest('hex')
    .slice(0, 16);
  const base = path.join(tmpdir(), `edge-gateway-sim-clip-${key}`);
  const clips = { main: `${base}-main.mp4`, sub: `${base}-sub.mp4`, gopMs: (gop / fps) * 1000 };
  if (existsSync(clips.main) && existsSync(clips.sub)) return clips;
  // Written under names of this process and renamed when whole: another process making the same
  // clips at the same time, or one killed half-way, never leaves a partial file under the final name.
  const tmp = { main: `${base}-main.${process.pid}.tmp.mp4`, sub: `${base}-sub.${process.pid}.tmp.mp4` };
  // -bf 0: no B-frames, as most cameras. repeat-headers: SPS and PPS before every keyframe (MP4
  // would otherwise keep them only in its header); rtsp_server.py reads them from the stream and a
  // looped copy cannot add them (ffmpeg 5's h264_mp4toannexb filter is flushed at the first loop
  // point and then drops every packet). Rate-capped like a camera's encoder (maxrate/bufsize).
  const x264 = (g: number) => [
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-bf',
    '0',
    '-g',
    String(g),
    '-keyint_min',
    String(g),
    '-sc_threshold',
    '0',
    '-x264-params',
    'repeat-headers=1',
    '-pix_fmt',
    'yuv420p',
  ];
  const rate = (kbps: number) => ['-b:v', `${kbps}k`, '-maxrate', `${Math.round(kbps * 1.1)}k`, '-bufsize', `${kbps}k`];
  try {
    await runFfmpeg(ffmpeg, [
      '-hide_banner',
      '-loglevel',
      'error',
      '-nostdin',
      '-y',
      ...input,
      '-filter_complex',
      `[0:v]fps=${fps},split=2[main][s];[s]scale=320:180[sub]`,
      '-map',
      '[main]',
      '-frames:v',
      String(frames),
      ...x264(gop),
      ...rate(mainKbps),
      '-an',
      '-f',
      'mp4',
      tmp.main,
      '-map',
      '[sub]',
      '-frames:v',
      String(frames),
      ...x264(gop),
      ...rate(200),
      '-an',
      '-f',
      'mp4',
      tmp.sub,
    ]);
    renameSync(tmp.sub, clips.sub);
    renameSync(tmp.main, clips.main);
  } finally {
    rmSync(tmp.main, { force: true });
    rmSync(tmp.sub, { force: true });
  }
  return clips;
}

/**
 * One camera's main and sub from the looped clips. -stream_loop offsets each pass by the clip's
 * length, so RTP timestamps keep rising across the loop point; -re paces each input in real time.
 */
function loopedArgs(clips: LoopedClips, mainPort: number, subPort: number): string[] {
  return [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    '-stream_loop',
    '-1',
    '-re',
    '-i',
    clips.main,
    '-stream_loop',
    '-1',
    '-re',
    '-i',
    clips.sub,
    '-map',
    '0:v',
    '-c',
    'copy',
    '-f',
    'rtp',
    `rtp://127.0.0.1:${mainPort}`,
    '-map',
    '1:v',
    '-c',
    'copy',
    '-f',
    'rtp',
    `rtp://127.0.0.1:${subPort}`,
  ];
}

/**
 * The instant each main picture is made (wall clock, ms modulo 2^20), drawn over its top-left
 * corner as CLOCK_BITS white-or-black squares of 30 px, least significant bit first, 34 px apart,
 * from x = 0, y = 5: a reader of the decoded picture (a page drawing it on a canvas) compares it
 * with its own clock. The picture's time base is switched to ms of the wall clock (RTCTIME) for the
 * drawing, then back to frame numbers for the encoder.
 */
export const CLOCK_STRIP = { bits: 20, pitch: 34, size: 30, y: 5 } as const;
const CLOCK_FILTER =
  `settb=1/1000,setpts=RTCTIME/1000,split[pic][strip];` +
  `[strip]crop=${CLOCK_STRIP.bits * CLOCK_STRIP.pitch}:${CLOCK_STRIP.y * 2 + CLOCK_STRIP.size}:0:0,` +
  `geq=lum='if(lt(mod(X,${CLOCK_STRIP.pitch}),${CLOCK_STRIP.size})*gte(Y,${CLOCK_STRIP.y})*lt(Y,${CLOCK_STRIP.y + CLOCK_STRIP.size})*mod(floor(T*1000/pow(2,floor(X/${CLOCK_STRIP.pitch}))),2),235,16)':cb=128:cr=128[bits];` +
  `[pic][bits]overlay=0:0,settb=1/15,setpts=N`;

/** ffmpeg, quiet, reading a lavfi test source in real time (its source follows). */
const LAVFI_INPUT = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-re', '-f', 'lavfi', '-i'];
/** The same for a picture that follows PTZ: commands on stdin, progress on stdout (ptz-picture.ts). */
const PTZ_LAVFI_INPUT = [
  '-hide_banner',
  '-loglevel',
  'error',
  '-progress',
  'pipe:1',
  '-stats_period',
  '0.5',
  '-re',
  '-f',
  'lavfi',
  '-i',
];

/** One mapped picture encoded as a camera would (a keyframe a second at 15 fps), sent as RTP to a local port. */
function x264Rtp(bitrate: string, port: number): string[] {
  return [
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-g',
    '15',
    '-b:v',
    bitrate,
    '-f',
    'rtp',
    `rtp://127.0.0.1:${port}`,
  ];
}

/**
 * The live encoder of one camera: main and sub from ffmpeg's test source. With `ptz`, the picture
 * is a window of a larger pattern that follows the camera (ptz-picture.ts): ffmpeg then reads its
 * commands on stdin and writes its progress to stdout.
 */
function liveArgs(mainKbps: number, mainPort: number, subPort: number, clockStrip: boolean, ptz: boolean): string[] {
  const source = ptz ? `${PTZ_PICTURE.sourceWidth}x${PTZ_PICTURE.sourceHeight}` : '1280x720';
  const split = clockStrip
    ? `split=2[m][s];[s]scale=320:180[sub];[m]${CLOCK_FILTER}[main]`
    : 'split=2[main][s];[s]scale=320:180[sub]';
  return [
    ...(ptz ? PTZ_LAVFI_INPUT : LAVFI_INPUT),
    `testsrc2=size=${source}:rate=15`,
    '-filter_complex',
    ptz ? `${ptzPictureFilter('[0:v]', '[ptz]')};[ptz]${split}` : `[0:v]${split}`,
    '-map',
    '[main]',
    ...x264Rtp(`${mainKbps}k`, mainPort),
    '-map',
    '[sub]',
    ...x264Rtp('200k', subPort),
  ];
}

function ended(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

export async function startSimulatedRtsp(opts: SimulatedRtspOptions): Promise<SimulatedRtsp> {
  const children: ChildProcess[] = [];
  const pictures: Array<PtzPicture | null> = [];
  // Children must not outlive this process (a test runner exiting early): kill them on exit too.
  const killAll = () => {
    for (const p of pictures) p?.stop();
    for (const c of children) c.kill('SIGTERM');
  };
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    killAll();
    await Promise.all(children.map(ended));
  };
  try {
    const ffmpegPath = opts.ffmpegPath ?? 'ffmpeg';
    const mainKbps = opts.mainBitrateKbps ?? 1500;
    // Before any server or port: encoding a new clip takes seconds, and the ports could be taken meanwhile.
    const clips = opts.looped ? await loopedClips(ffmpegPath, opts.looped, mainKbps) : null;
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
      [
        SCRIPT,
        '--host',
        opts.host,
        '--port',
        String(opts.port),
        '--user',
        opts.username,
        '--password',
        opts.password,
        ...mounts.flatMap((m) => ['--mount', m]),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(server);
    server.stderr?.on('data', (d: Buffer) =>
      opts.logger.debug({ stderr: d.toString().trim().slice(0, 500) }, 'simulated RTSP server'),
    );
    const port = await listeningPort(server, opts.pythonPath ?? '/usr/bin/python3');
    for (let i = 0; i < opts.cameras; i++) {
      if (clips && i > 0) {
        // Cameras are not in step: starting camera i at i/N of a GOP spreads the keyframes (the
        // large packets) over the GOP instead of sending all of them in the same instant.
        await new Promise((r) => setTimeout(r, clips.gopMs / opts.cameras));
      }
      // One process per camera; -re paces it in real time like a sensor.
      const ptz = !clips && (opts.ptzPicture ?? false);
      const ffmpeg = spawn(
        ffmpegPath,
        clips
          ? loopedArgs(clips, udp[2 * i] as number, udp[2 * i + 1] as number)
          : liveArgs(mainKbps, udp[2 * i] as number, udp[2 * i + 1] as number, opts.clockStrip ?? false, ptz),
        { stdio: [ptz ? 'pipe' : 'ignore', ptz ? 'pipe' : 'ignore', 'pipe'] },
      );
      children.push(ffmpeg);
      pictures.push(ptz ? new PtzPicture(ffmpeg) : null);
      ffmpeg.stderr?.on('data', (d: Buffer) => {
        const text = d
          .toString()
          .split('\n')
          .filter((l) => !isCommandChatter(l))
          .join('\n')
          .trim();
        if (text) opts.logger.warn({ camera: i, stderr: text.slice(0, 500) }, 'simulated camera encoder');
      });
      ffmpeg.once('error', (err) =>
        opts.logger.error({ err: err.message }, 'cannot run ffmpeg for the simulated camera'),
      );
      if (extras.length === 0) continue;
      // A separate process, so that main and sub are made exactly as without extra mounts.
      children.push(spawnExtraMounts(ffmpegPath, extras, (n) => extraPorts(i, n), i, opts.logger));
    }
    const url = (camera: number, stream: 'main' | 'sub' | ExtraMount): string => {
      if (stream !== 'main' && stream !== 'sub' && !extras.includes(stream))
        throw new Error(`the simulated cameras have no ${stream} mount (see extraMounts)`);
      return `rtsp://${opts.host}:${port}/cam${camera}/${stream}`;
    };
    return { port, url, ptz: (camera, motion) => pictures[camera]?.follow(motion), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The port the simulated RTSP server says it listens on (its first JSON line), or why it did not start. */
function listeningPort(server: ChildProcess, pythonPath: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let out = '';
    server.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      const msg = JSON.parse(line) as { listening?: number; error?: string };
      if (msg.listening) resolve(msg.listening);
      else reject(new Error(msg.error ?? 'RTSP server failed'));
    });
    server.once('error', (err) =>
      reject(
        new Error(`cannot run ${pythonPath}: ${err.message} (apt-get install python3-gi gir1.2-gst-rtsp-server-1.0)`),
      ),
    );
    server.once('exit', (code) =>
      reject(
        new Error(
          `simulated RTSP server exited with ${code}; are python3-gi and gir1.2-gst-rtsp-server-1.0 installed?`,
        ),
      ),
    );
  });
}

/** One ffmpeg for a camera's extra mounts (other codecs and audio), apart from main and sub. */
function spawnExtraMounts(
  ffmpegPath: string,
  extras: readonly ExtraMount[],
  portsOf: (k: number) => [number, number],
  camera: number,
  logger: SimulatedRtspOptions['logger'],
): ChildProcess {
  const extra = spawn(
    ffmpegPath,
    [
      ...LAVFI_INPUT,
      'testsrc2=size=640x360:rate=10',
      '-re',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=16000',
      ...extras.flatMap((name, k) => extraOutputs(name, ...portsOf(k))),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  extra.stderr?.on('data', (d: Buffer) =>
    logger.warn({ camera, stderr: d.toString().trim().slice(0, 500) }, 'simulated camera encoder (extra mounts)'),
  );
  extra.once('error', (err) => logger.error({ err: err.message }, 'cannot run ffmpeg for the simulated camera'));
  return extra;
}
