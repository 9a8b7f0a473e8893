import { spawn } from 'node:child_process';
import { isWholeJpeg } from '../../onvif/snapshot.js';
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
}

const DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024;

export function stillArgs(format: StillInputFormat, width: number | null): string[] {
  return [
    '-hide_banner', '-nostdin', '-v', 'error', '-threads', '1',
    '-f', format, '-i', 'pipe:0',
    '-frames:v', '1', '-an',
    // The JPEG encoder wants full-range YUV; -2 keeps the height even and the aspect ratio.
    '-vf', width === null ? 'format=yuvj420p' : `scale=${width}:-2,format=yuvj420p`,
    '-q:v', '4', '-f', 'mjpeg', 'pipe:1',
  ];
}

export function decodeStill(format: StillInputFormat, input: Buffer, width: number | null, opts: DecodeOptions): Promise<Buffer> {
  const maxBytes = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  return new Promise((resolve, reject) => {
    const child = spawn(opts.ffmpegPath, stillArgs(format, width), { stdio: ['pipe', 'pipe', 'pipe'] });
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
      const jpeg = Buffer.concat(chunks, Math.min(size, maxBytes));
      if (problem === null && code === 0 && isWholeJpeg(jpeg)) return resolve(jpeg);
      const why = problem ?? (stderr.trim().split('\n')[0] || `ffmpeg exited with ${code} and no picture`);
      reject(new StillError('decode_failed', `the picture could not be decoded: ${why}`));
    });
    child.stdin.end(input);
  });
}
