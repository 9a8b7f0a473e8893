// ffmpeg command lines of the recorder, as pure functions (spawned without a shell elsewhere).
// Video is only ever copied (-c copy): a Pi cannot re-encode 16 cameras, and copying keeps the
// camera's own quality. The only decoding is one frame for a thumbnail and the optional motion
// detector's small grey frames.

const QUIET = ['-hide_banner', '-nostdin', '-loglevel', 'warning'];

/** The relay's stream as input: interleaved TCP, and a read timeout (µs) so a silent relay ends ffmpeg. */
function relayInput(url: string, readTimeoutS: number): string[] {
  return ['-rtsp_transport', 'tcp', '-timeout', String(Math.round(readTimeoutS * 1_000_000)), '-i', url];
}

export interface AssembleArgs {
  /** An ffconcat file listing the segments (see concatList). */
  listFile: string;
  output: string;
  /**
   * From the first segment's start (a keyframe: a clip never starts anywhere else, since output
   * seeking in a copied stream would begin on pictures that cannot be decoded).
   */
  durationS: number;
  /**
   * copy: AAC (MP4 takes it as is); aac: G.711 and other audio MP4 cannot hold, encoded (audio
   * only, a few kbit/s, cheap); none: no audio track.
   */
  audio: 'copy' | 'aac' | 'none';
}

/** Segments → one MP4 with the index at the front (+faststart), so players start before the end. */
export function assembleArgs(o: AssembleArgs): string[] {
  const audio = o.audio === 'none' ? ['-an'] : o.audio === 'copy' ? ['-c:a', 'copy'] : ['-c:a', 'aac', '-b:a', '64k'];
  return [
    ...QUIET,
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    o.listFile,
    '-t',
    o.durationS.toFixed(3),
    '-map',
    '0:v:0',
    '-map',
    '0:a:0?',
    '-c:v',
    'copy',
    ...audio,
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    '-y',
    o.output,
  ];
}

export interface ConcatEntry {
  path: string;
  /** The segment's length in stream time. */
  durationS: number;
}

/**
 * ffconcat listing of segment files, each with its duration: without it the concat demuxer offsets
 * each file by its probed duration, which for a fragmented segment (no sample tables, only its
 * fragments) is an estimate that can be off, leaving gaps that -t then counts as footage. Paths are
 * quoted with ffconcat's rules: inside single quotes, a quote is written as '\'' (shell style).
 */
export function concatList(entries: readonly ConcatEntry[]): string {
  const lines = entries.map((e) => `file '${e.path.replaceAll("'", "'\\''")}'\nduration ${e.durationS.toFixed(6)}\n`);
  return `ffconcat version 1.0\n${lines.join('')}`;
}

export interface ThumbnailArgs {
  input: string;
  /** Seconds into the input of the picture wanted. */
  offsetS: number;
  output: string;
  width: number;
}

/** One JPEG from the event's moment (the only video decoding a clip costs). */
export function thumbnailArgs(o: ThumbnailArgs): string[] {
  return [
    ...QUIET,
    '-ss',
    o.offsetS.toFixed(3),
    '-i',
    o.input,
    '-frames:v',
    '1',
    '-vf',
    `scale=${o.width}:-2`,
    '-q:v',
    '5',
    '-f',
    'image2',
    '-update',
    '1',
    '-y',
    o.output,
  ];
}

export interface MotionArgs {
  inputUrl: string;
  fps: number;
  width: number;
  height: number;
  readTimeoutS: number;
}

/** Small grey frames of the sub stream on stdout, for the software motion detector. */
export function motionArgs(o: MotionArgs): string[] {
  return [
    ...QUIET,
    ...relayInput(o.inputUrl, o.readTimeoutS),
    '-an',
    '-vf',
    `fps=${o.fps},scale=${o.width}:${o.height},format=gray`,
    '-f',
    'rawvideo',
    'pipe:1',
  ];
}

/**
 * Decodes a clip's video to nowhere, stopping at the first error (-xerror), with progress lines on
 * stdout whose last `out_time_us` is how far it decoded: the start-up check of a clip a crash left.
 */
export function checkArgs(input: string): string[] {
  return [
    ...QUIET.slice(0, 2),
    '-loglevel',
    'error',
    '-xerror',
    '-progress',
    'pipe:1',
    '-nostats',
    '-i',
    input,
    '-map',
    '0:v:0',
    '-f',
    'null',
    '-',
  ];
}

/** The decoded length (seconds) in `-progress` output: its last `out_time_us`, or null. */
export function decodedSeconds(progress: string): number | null {
  const all = [...progress.matchAll(/^out_time_us=(\d+)$/gm)];
  const last = all.at(-1)?.[1];
  return last === undefined ? null : Number(last) / 1_000_000;
}
