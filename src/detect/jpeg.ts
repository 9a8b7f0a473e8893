import { spawn } from 'node:child_process';
import { FrameError } from './errors.js';
import type { Frame } from './types.js';

export interface DecodeOptions {
  ffmpegPath: string;
  /** Scale to this size while decoding (null: the picture's own size). */
  size?: { width: number; height: number } | null;
  /** ffmpeg is killed after this long (a stuck decoder must not hold a check). */
  timeoutMs?: number;
  /** Largest picture accepted, in pixels (a hostile header must not make ffmpeg allocate gigabytes). */
  maxPixels?: number;
}

/**
 * Decodes one JPEG (a camera snapshot, a frame from the relay) to RGB with ffmpeg. ffmpeg writes a
 * binary PPM, which is raw rgb24 with a one-line header giving the size, so the size need not be
 * known beforehand. -xerror and -err_detect explode make a corrupt or truncated JPEG an error
 * instead of a half-grey picture that would be looked at as if it were real.
 */
export function decodeJpeg(jpeg: Uint8Array, opts: DecodeOptions): Promise<Frame> {
  const args = [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-xerror',
    '-err_detect',
    'explode',
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    '-i',
    'pipe:0',
  ];
  if (opts.size) args.push('-vf', `scale=${opts.size.width}:${opts.size.height}`);
  args.push('-frames:v', '1', '-f', 'image2pipe', '-c:v', 'ppm', 'pipe:1');
  const maxPixels = opts.maxPixels ?? 4096 * 4096;
  return new Promise((resolve, reject) => {
    const child = spawn(opts.ffmpegPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let failure: FrameError | null = null;
    const fail = (message: string): void => {
      failure ??= new FrameError(message);
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => fail(`ffmpeg took longer than ${opts.timeoutMs ?? 10_000} ms to decode the frame`),
      opts.timeoutMs ?? 10_000,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxPixels * 3 + 64) return fail(`decoded picture larger than ${maxPixels} pixels`);
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString();
    });
    child.on('error', (err) => fail(`cannot run ${opts.ffmpegPath}: ${err.message}`));
    // ffmpeg may stop reading a corrupt input early; the broken pipe is its error to report, not ours.
    child.stdin.on('error', () => {});
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure) return reject(failure);
      if (code !== 0)
        return reject(
          new FrameError(`not a decodable JPEG (ffmpeg: ${stderr.trim().split('\n')[0] || `exit ${code}`})`),
        );
      try {
        resolve(parsePpm(Buffer.concat(out)));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    child.stdin.end(jpeg);
  });
}

/** A binary PPM (P6, maxval 255) as an RGB frame. */
export function parsePpm(buf: Buffer): Frame {
  const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(buf.subarray(0, 64).toString('latin1'));
  if (!header) throw new FrameError('ffmpeg gave no picture');
  const [width, height, maxval] = [Number(header[1]), Number(header[2]), Number(header[3])];
  const start = header[0].length;
  if (maxval !== 255 || width < 1 || height < 1)
    throw new FrameError(`unexpected PPM ${width}x${height} maxval ${maxval}`);
  const size = width * height * 3;
  if (buf.length - start < size) throw new FrameError(`picture cut short: ${buf.length - start} of ${size} bytes`);
  return { data: new Uint8Array(buf.buffer, buf.byteOffset + start, size), width, height };
}
