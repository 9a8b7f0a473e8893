import { spawn } from 'node:child_process';
import { StillError } from './errors.js';

// One still picture out of a short-lived ffmpeg: an Annex B keyframe (or a camera's JPEG, to
// scale it) in on stdin, one JPEG out on stdout. A single decode, bounded in time and output;
// ffmpeg is killed at the deadline.

export type StillInputFormat = 'h264' | 'hevc' | 'mjpeg';

export interface DecodeOptions {
  ffmpegPath: string;
  timeoutMs: number;
  /** A larger output is refused (a 3840-wide JPEG stays well under 4 MB). */
  maxOutputBytes?: number;
  /** ffmpeg's JPEG quantiser, 2 (best) to 31 (smallest); default 4. */
  quality?: number;
}

const DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024;
/** ffmpeg's JPEG quantiser of the snapshots: 2 (best) … 31 (smallest). */
export const DEFAULT_JPEG_QUALITY = 4;

export function stillArgs(
  format: StillInputFormat,
  width: number | null,
  pictures = 1,
  quality = DEFAULT_JPEG_QUALITY,
): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-threads',
    '1',
    '-f',
    format,
    '-i',
    'pipe:0',
    // One JPEG per picture in, none repeated or dropped for timing.
    '-frames:v',
    String(pictures),
    ...jpegOutputArgs(width, quality),
  ];
}

/** Every picture decoded as it comes (none repeated or dropped for timing), as JPEGs on stdout. */
export function jpegOutputArgs(width: number | null, quality = DEFAULT_JPEG_QUALITY): string[] {
  return [
    '-fps_mode',
    'passthrough',
    '-an',
    // The JPEG encoder wants full-range YUV; -2 keeps the height even and the aspect ratio.
    '-vf',
    width === null ? 'format=yuvj420p' : `scale=${width}:-2,format=yuvj420p`,
    '-q:v',
    String(quality),
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    'pipe:1',
  ];
}

/** One picture (a keyframe, or a camera's JPEG to scale) as a JPEG. */
export async function decodeStill(
  format: StillInputFormat,
  input: Buffer,
  width: number | null,
  opts: DecodeOptions,
): Promise<Buffer> {
  const [jpeg] = await decodeStills(format, [input], width, opts);
  if (!jpeg) throw new StillError('decode_failed', 'the picture could not be decoded: no picture');
  return jpeg;
}

/**
 * Several pictures of one size (keyframes of cameras alike) in one ffmpeg run, one JPEG each in
 * order: starting ffmpeg costs more CPU than decoding a small keyframe, so a page asking for many
 * cameras at once pays it once. Each keyframe carries its own parameter sets, so they follow one
 * another in one Annex B stream. Fewer JPEGs than inputs (a keyframe that did not decode) fails
 * the whole run.
 */
export function decodeStills(
  format: StillInputFormat,
  inputs: readonly Buffer[],
  width: number | null,
  opts: DecodeOptions,
): Promise<Buffer[]> {
  const maxBytes = (opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT) * inputs.length;
  return new Promise((resolve, reject) => {
    const child = spawn(opts.ffmpegPath, stillArgs(format, width, inputs.length, opts.quality), {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let problem: string | null = null;
    const timer = setTimeout(() => {
      problem = `no picture within ${opts.timeoutMs} ms`;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        problem ??= `the picture is larger than ${maxBytes} bytes`;
        child.kill('SIGKILL');
      } else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString();
    });
    // ffmpeg may exit before reading all of stdin (a broken picture): EPIPE is its answer, not ours.
    child.stdin.on('error', () => undefined);
    child.on('error', (err) => {
      problem ??= `cannot run ${opts.ffmpegPath}: ${err.message}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const jpegs = problem === null && code === 0 ? splitJpegs(Buffer.concat(chunks, Math.min(size, maxBytes))) : null;
      if (jpegs && jpegs.length === inputs.length) return resolve(jpegs);
      const why =
        problem ??
        (stderr.trim().split('\n')[0] ||
          `ffmpeg exited with ${code} and ${jpegs?.length ?? 0} of ${inputs.length} pictures`);
      reject(new StillError('decode_failed', `the picture could not be decoded: ${why}`));
    });
    child.stdin.end(inputs.length === 1 ? inputs[0] : Buffer.concat(inputs));
  });
}

/**
 * ffmpeg's JPEGs one after another, cut at each EOI (FF D9 cannot occur inside a JPEG's coded
 * data, where FF is followed by 00, and ffmpeg writes no thumbnails); null when the output is not
 * whole JPEGs.
 */
export function splitJpegs(data: Buffer): Buffer[] | null {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    if (data[at] !== 0xff || data[at + 1] !== 0xd8) return null;
    const end = data.indexOf(EOI, at + 2);
    if (end < 0) return null;
    out.push(data.subarray(at, end + 2));
    at = end + 2;
  }
  return out;
}

const EOI = Buffer.from([0xff, 0xd9]);
