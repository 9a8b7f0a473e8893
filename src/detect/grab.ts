import { spawn } from 'node:child_process';
import { FrameError } from './errors.js';
import { parsePpm } from './jpeg.js';
import type { Frame } from './types.js';

export interface GrabOptions {
  ffmpegPath: string;
  /** A loopback relay URL (recorder ticket) of the stream to look at (or a file, with rtsp: false). */
  inputUrl: string;
  /** RTSP input options (interleaved TCP, read timeout); true by default. */
  rtsp?: boolean;
  /** Frames wanted (3 by default). */
  count?: number;
  /** Frames a second taken from the stream (2 by default: 3 frames over ~1.5 s). */
  fps?: number;
  /** Wider pictures are scaled down to this width (the model looks at 512 px squares anyway). */
  maxWidth?: number;
  /** ffmpeg is killed after this long; the frames it gave by then are kept. */
  timeoutMs?: number;
}

/**
 * A few decoded frames (RGB) from a camera's stream through the relay: ffmpeg joins the relay's
 * session (no second session at the camera), decodes from the next keyframe, takes `fps` frames a
 * second and writes each as a binary PPM. A stream that stops mid-way, or a decoder that stalls,
 * gives the frames received until then; none at all is a FrameError.
 */
export function grabFrames(opts: GrabOptions): Promise<Frame[]> {
  const count = opts.count ?? 3;
  const maxWidth = opts.maxWidth ?? 1920;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const args = [
    '-hide_banner', '-nostdin', '-v', 'error',
    ...(opts.rtsp === false ? [] : ['-rtsp_transport', 'tcp', '-timeout', '5000000']),
    '-i', opts.inputUrl,
    '-an', '-map', '0:v:0',
    '-vf', `fps=${opts.fps ?? 2},scale='min(${maxWidth},iw)':-2`,
    '-frames:v', String(count), '-f', 'image2pipe', '-c:v', 'ppm', 'pipe:1',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(opts.ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const frames: Frame[] = [];
    const splitter = new PpmSplitter(maxWidth * 4096 * 3);
    let stderr = '';
    let problem: string | null = null;
    const timer = setTimeout(() => {
      problem = `no ${count} frames within ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      try {
        for (const frame of splitter.push(chunk)) if (frames.length < count) frames.push(frame);
      } catch (err) {
        problem = (err as Error).message;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString();
    });
    child.on('error', (err) => {
      problem = `cannot run ${opts.ffmpegPath}: ${err.message}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (frames.length > 0) return resolve(frames);
      const why = problem ?? (stderr.trim().split('\n')[0] || `ffmpeg exited with ${code}`);
      reject(new FrameError(`no frame from the stream: ${why}`));
    });
  });
}

/** Cuts a stream of binary PPM pictures into frames; refuses a picture larger than maxBytes. */
export class PpmSplitter {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): Frame[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const out: Frame[] = [];
    for (;;) {
      const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(this.buffered.subarray(0, 64).toString('latin1'));
      if (!header) {
        if (this.buffered.length >= 64) throw new FrameError('the decoder wrote something that is not a PPM picture');
        return out;
      }
      const size = Number(header[1]) * Number(header[2]) * 3;
      if (size > this.maxBytes) throw new FrameError(`picture of ${header[1]}x${header[2]} is larger than allowed`);
      const total = header[0].length + size;
      if (this.buffered.length < total) return out;
      // A copy: the frame outlives the stream's chunks and goes to a worker thread.
      out.push(parsePpm(Buffer.from(this.buffered.subarray(0, total))));
      this.buffered = this.buffered.subarray(total);
    }
  }
}
