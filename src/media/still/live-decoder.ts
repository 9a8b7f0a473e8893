import { jpegOutputArgs } from './decode.js';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { JpegStreamError, LiveDecoderError, type LiveFailure } from './errors.js';
import { JpegSplitter } from './jpeg-stream.js';

// One ffmpeg kept running for still pictures of one codec and width, from keyframes of one SPS (one
// size and pixel format: a format change makes ffmpeg rebuild its filters, and after a few it drops
// a picture or fails on timestamps; keyframe-picture.ts): a keyframe in on
// stdin (Annex B with its parameter sets), one JPEG out on stdout. Starting ffmpeg costs ~0.2 s of
// CPU on a small machine, decoding a sub stream's keyframe a tenth of that, so a page refreshing
// many cameras' pictures should not pay the start each time (docs/api.md "Snapshots").
//
// ffmpeg hands a picture on only when nothing holds it back: the h264/hevc parser ends an access
// unit when it sees the next one begin, so each keyframe is followed by an access unit delimiter;
// one thread each for the decoder and the JPEG encoder (frame threads hold a picture back until the
// next); a small probe. A decoder that reorders pictures (B-frames declared in the SPS) still holds
// one back: the caller sends only pictures it knows decode alone, and a picture that does not come
// within the deadline ends this process (the pool starts another, the caller uses a short-lived run).
//
// One picture at a time, and any output that no picture asked for ends the process: a JPEG can
// never be handed to the wrong request (another camera's picture).

export interface LiveDecoderOptions {
  ffmpegPath: string;
  format: 'h264' | 'hevc';
  /** Width of the JPEG (height keeps the aspect ratio); null: the picture's own size. */
  width: number | null;
  /** ffmpeg's JPEG quantiser (DEFAULT_JPEG_QUALITY when absent). */
  quality?: number;
  /** A picture not out within this many ms ends the process. */
  timeoutMs: number;
  /** A larger JPEG is refused (and ends the process). */
  maxOutputBytes: number;
}

// An access unit delimiter after each keyframe: the parser ends the keyframe's access unit there.
const AUD: Record<LiveDecoderOptions['format'], Buffer> = {
  h264: Buffer.from([0, 0, 0, 1, 0x09, 0xf0]), // primary_pic_type 7
  hevc: Buffer.from([0, 0, 0, 1, 0x46, 0x01, 0x50]), // AUD_NUT, pic_type 2
};

export function liveDecoderArgs(
  format: LiveDecoderOptions['format'],
  width: number | null,
  quality?: number,
): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-probesize',
    '32',
    '-analyzeduration',
    '0',
    '-flags',
    'low_delay',
    '-threads',
    '1',
    '-f',
    format,
    '-i',
    'pipe:0',
    '-threads',
    '1',
    ...jpegOutputArgs(width, quality),
  ];
}

interface Pending {
  resolve: (jpeg: Buffer) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class LiveDecoder {
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly splitter: JpegSplitter;
  private current: Pending | null = null;
  private readonly queue: Array<{ input: Buffer; resolve: (jpeg: Buffer) => void; reject: (err: Error) => void }> = [];
  private failure: LiveDecoderError | null = null;
  private stderr = '';
  private readonly endHandlers: Array<(err: LiveDecoderError | null) => void> = [];

  constructor(private readonly opts: LiveDecoderOptions) {
    this.splitter = new JpegSplitter(opts.maxOutputBytes);
    this.child = spawn(opts.ffmpegPath, liveDecoderArgs(opts.format, opts.width, opts.quality), {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.onOutput(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-2000);
    });
    // A process that died mid-write: its exit says why.
    this.child.stdin.on('error', () => undefined);
    this.child.on('error', (err) => this.fail('spawn', `cannot run ${opts.ffmpegPath}: ${err.message}`));
    this.child.on('close', (code, signal) =>
      this.fail('exited', `the decoder exited (${signal ?? code})${this.lastError()}`),
    );
  }

  /** Whether it still takes pictures. */
  get alive(): boolean {
    return this.failure === null;
  }

  /** Pictures waiting and being decoded. */
  get load(): number {
    return this.queue.length + (this.current ? 1 : 0);
  }

  /** Called once when it takes no more pictures, with why (null: stopped). */
  onEnd(handler: (err: LiveDecoderError | null) => void): void {
    this.endHandlers.push(handler);
  }

  /** One keyframe (Annex B, parameter sets included) as a JPEG. Rejects with LiveDecoderError. */
  decode(input: Buffer): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.next();
    });
  }

  /** Ends the process; pictures not yet out fail. */
  stop(): void {
    this.fail('exited', 'the decoder was stopped', true);
  }

  private next(): void {
    if (this.current || this.failure) return;
    const job = this.queue.shift();
    if (!job) return;
    const timer = setTimeout(
      () => this.fail('timeout', `no picture within ${this.opts.timeoutMs} ms${this.lastError()}`),
      this.opts.timeoutMs,
    );
    this.current = { resolve: job.resolve, reject: job.reject, timer };
    this.child.stdin.write(job.input);
    this.child.stdin.write(AUD[this.opts.format]);
  }

  private onOutput(chunk: Buffer): void {
    if (this.failure) return;
    let jpegs: Buffer[];
    try {
      jpegs = this.splitter.push(chunk);
    } catch (err) {
      if (!(err instanceof JpegStreamError)) throw err;
      return this.fail('bad_output', `the decoder wrote ${err.message}`);
    }
    for (const jpeg of jpegs) {
      const job = this.current;
      if (!job) return this.fail('stray_output', 'the decoder wrote a picture nobody asked for');
      clearTimeout(job.timer);
      this.current = null;
      job.resolve(jpeg);
    }
    this.next();
  }

  private lastError(): string {
    const line = this.stderr.trim().split('\n').pop();
    return line ? `: ${line}` : '';
  }

  private fail(reason: LiveFailure, message: string, stopped = false): void {
    if (this.failure) return;
    this.failure = new LiveDecoderError(reason, `the picture could not be decoded: ${message}`);
    if (this.current) {
      clearTimeout(this.current.timer);
      this.current.reject(this.failure);
      this.current = null;
    }
    for (const job of this.queue.splice(0)) job.reject(this.failure);
    this.child.kill('SIGKILL');
    for (const handler of this.endHandlers) handler(stopped ? null : this.failure);
  }
}
