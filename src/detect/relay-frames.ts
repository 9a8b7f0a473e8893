import { spawn, type ChildProcess } from 'node:child_process';
import type { VideoAccessUnit } from '../media/access-unit.js';
import type { FanOutReader } from '../media/relay/fanout.js';
import { createRtpHeader, readRtpHeaderInto } from '../media/rtp.js';
import { annexB, withParameterSets } from '../media/still/annex-b.js';
import { videoPlanOf, type VideoTrackPlan } from '../media/still/keyframe-picture.js';
import { VideoDepacketizer, type VideoCodec } from '../media/video-depacketizer.js';
import { FrameError } from './errors.js';
import type { Frame, FrameSource } from './types.js';

// The detection frames of a motion start, from what the relay already holds: a reader attached to
// the camera's stream gets the cached group of pictures at once (keyframe first) and then the live
// packets. Its access units go to a decoder that is already running (ffmpeg, Annex B on stdin, one
// PPM out per picture): the first frame is the newest cached picture, so it is there within a
// decode of one GOP instead of an ffmpeg start, an RTSP set-up and a probe; the next ones are the
// live pictures `spacingMs` apart. A stream that stops mid-way ends the frames early (`ended` says
// why); nothing here throws on packet bytes.

/** What this needs of a relay stream (the relay's StreamHandle). */
export interface FrameStream {
  readonly sdp: string;
  attach(reader: FanOutReader): () => void;
}

export interface RelayFramesOptions {
  /** Frames wanted (3 by default). */
  count?: number;
  /** Least stream time between two frames taken (500 ms: 3 frames over ~1 s). */
  spacingMs?: number;
  /** All frames by then, or the source ends with what it has (10 s). */
  timeoutMs?: number;
  /** No picture from the stream for this long: it stopped, the source ends (3 s). */
  stallMs?: number;
  /** Most bytes written to the decoder and not yet read by it (a stuck decoder ends the source). */
  maxPendingBytes?: number;
}

const VIDEO_CLOCK = 90_000; // RTP clock of H.264 / H.265 video (RFC 6184, RFC 7798)
// An access unit delimiter after each picture: ffmpeg's parser then knows the picture is whole and
// decodes it now, not when the next one starts.
const AUD: Record<VideoCodec, Buffer> = {
  H264: Buffer.from([0, 0, 0, 1, 0x09, 0xf0]),
  H265: Buffer.from([0, 0, 0, 1, 0x46, 0x01, 0x50]),
};

/** ffmpeg reading Annex B from stdin with no probing delay, writing every picture as a PPM. */
export function decoderArgs(codec: VideoCodec, maxWidth: number): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-threads',
    '1',
    // Probing would wait for megabytes of input before the first picture; the SPS says it all.
    '-probesize',
    '32',
    '-analyzeduration',
    '0',
    '-f',
    codec === 'H264' ? 'h264' : 'hevc',
    '-i',
    'pipe:0',
    '-an',
    '-vf',
    `scale='min(${maxWidth},iw)':-2`,
    '-fps_mode',
    'passthrough',
    '-f',
    'image2pipe',
    '-c:v',
    'ppm',
    'pipe:1',
  ];
}

/**
 * Spawns decoders and keeps one started ahead per codec: starting ffmpeg takes 0.1 s of CPU but
 * most of a second on a loaded Pi, and a decoder waiting on its stdin costs nothing but its memory.
 */
export class Decoders {
  private readonly spare = new Map<VideoCodec, ChildProcess>();
  private closed = false;

  constructor(
    private readonly ffmpegPath: string,
    private readonly maxWidth: number,
  ) {}

  take(codec: VideoCodec): ChildProcess {
    const ready = this.spare.get(codec);
    this.spare.delete(codec);
    // A spare that could not start (no pid) or has ended is replaced: its events have been missed.
    const child =
      ready?.pid !== undefined && ready.exitCode === null && ready.signalCode === null ? ready : this.spawn(codec);
    if (!this.closed) this.spare.set(codec, this.spawn(codec));
    return child;
  }

  close(): void {
    this.closed = true;
    for (const child of this.spare.values()) child.kill('SIGKILL');
    this.spare.clear();
  }

  private spawn(codec: VideoCodec): ChildProcess {
    const child = spawn(this.ffmpegPath, decoderArgs(codec, this.maxWidth), { stdio: ['pipe', 'pipe', 'pipe'] });
    // A spare that dies (no ffmpeg) is found dead when taken; its error is the taker's.
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    return child;
  }
}

/** Frames of `stream` from its newest cached picture on (see the file's comment). */
export function relayFrames(stream: FrameStream, decoders: Decoders, opts: RelayFramesOptions = {}): FrameSource {
  const run = new RelayFrameRun(videoPlanOf(stream.sdp), settingsOf(opts));
  run.start(stream, decoders);
  return {
    next: () => run.next(),
    get ended() {
      return run.ended;
    },
    close: () => run.close(),
  };
}

/** RelayFramesOptions with their defaults; `spacing` in RTP clock ticks. */
interface RelayFramesSettings {
  count: number;
  spacing: number;
  timeoutMs: number;
  stallMs: number;
  maxPendingBytes: number;
}

function settingsOf(opts: RelayFramesOptions): RelayFramesSettings {
  return {
    count: opts.count ?? 3,
    spacing: Math.round(((opts.spacingMs ?? 500) * VIDEO_CLOCK) / 1000),
    timeoutMs: opts.timeoutMs ?? 10_000,
    stallMs: opts.stallMs ?? 3000,
    maxPendingBytes: opts.maxPendingBytes ?? 16 * 1024 * 1024,
  };
}

/**
 * Which of the decoder's pictures become frames, by their output numbers: the newest cached
 * picture, then one every `spacing` of stream time, `count` in all.
 */
class FramePicker {
  /** RTP time of each access unit given to the decoder, in decoding order (its output frame numbers). */
  private readonly times: number[] = [];
  private first = -1; // the decoder's output number of the first frame wanted (the newest cached picture)
  private lastTaken: number | null = null;
  private taken = 0;

  constructor(
    private readonly count: number,
    private readonly spacing: number,
  ) {}

  /** Whether the decoder has been given an access unit yet. */
  get started(): boolean {
    return this.times.length > 0;
  }

  /** Whether all `count` frames have been taken. */
  get complete(): boolean {
    return this.taken >= this.count;
  }

  /** The first frame wanted is the decoder's output number `n`. */
  startAt(n: number): void {
    this.first = n;
  }

  /** The decoder was given the access unit of RTP time `rtpTime` (its next output number). */
  given(rtpTime: number): void {
    this.times.push(rtpTime);
  }

  /** Whether the decoder's picture number `n` is one to look at: the newest cached, then one every spacing. */
  wanted(n: number): boolean {
    if (n < this.first || this.taken >= this.count) return false;
    const at = this.times[n];
    if (at === undefined) return false;
    if (this.lastTaken !== null && (at - this.lastTaken) >>> 0 < this.spacing) return false;
    this.lastTaken = at;
    return true;
  }

  /** A wanted picture came out of the decoder as a frame. */
  took(): void {
    this.taken++;
  }
}

/** Frames taken and not yet asked for, and the next() calls waiting for one. */
class FrameQueue {
  private readonly frames: Frame[] = [];
  private readonly waiters: Array<(f: Frame | null) => void> = [];

  put(frame: Frame): void {
    const w = this.waiters.shift();
    if (w) w(frame);
    else this.frames.push(frame);
  }

  /** The next frame, or null once there is none and no more will come (`over`). */
  next(over: boolean): Promise<Frame | null> {
    const frame = this.frames.shift();
    if (frame) return Promise.resolve(frame);
    if (over) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** No more frames will come: those waiting get null. */
  end(): void {
    for (const w of this.waiters.splice(0)) w(null);
  }
}

/** What the decoder's process tells: pictures out, that it cannot run, that it exited and why. */
interface DecoderEvents {
  output(chunk: Buffer): void;
  failed(err: Error): void;
  exited(why: string): void;
}

/** Listens to the decoder `child`; why it exited is its first error line, else its exit code. */
function watchDecoder(child: ChildProcess, on: DecoderEvents): void {
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => on.output(chunk));
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 2000) stderr += d.toString();
  });
  child.once('error', (err) => on.failed(err));
  child.once('close', (code) => on.exited(stderr.trim().split('\n')[0] || `the decoder exited with ${code}`));
}

/**
 * One relayFrames source: reads the stream's access units, writes them to the decoder and takes
 * the pictures it writes, until all are taken or something ends it (finish, once).
 */
class RelayFrameRun {
  private readonly picker: FramePicker;
  private readonly queue = new FrameQueue();
  private readonly depacketizer: VideoDepacketizer;
  private readonly header = createRtpHeader();
  private readonly pending: VideoAccessUnit[] = [];
  private readonly timer: NodeJS.Timeout;
  private stall: NodeJS.Timeout;
  private child: ChildProcess | null = null;
  private done = false;
  private endedWhy: string | null = null;
  private streamEnd: string | null = null;
  private detach: (() => void) | null = null;

  constructor(
    private readonly plan: VideoTrackPlan,
    private readonly settings: RelayFramesSettings,
  ) {
    this.picker = new FramePicker(settings.count, settings.spacing);
    this.depacketizer = new VideoDepacketizer({ codec: plan.codec, donl: plan.donl }, (unit) => this.onUnit(unit));
    this.timer = setTimeout(
      () => this.finish(`no ${settings.count} frames within ${settings.timeoutMs} ms`),
      settings.timeoutMs,
    );
    this.stall = this.stallTimer();
  }

  get ended(): string | null {
    return this.endedWhy;
  }

  /** Reads the stream and, unless it cannot be read, decodes it with a decoder of `decoders`. */
  start(stream: FrameStream, decoders: Decoders): void {
    try {
      // The cached group of pictures comes within attach(): those units wait in `pending`.
      this.detach = stream.attach(this.reader());
    } catch (err) {
      this.finish(`the stream cannot be read: ${(err as Error).message}`);
    }
    if (!this.done) this.decodeWith(decoders.take(this.plan.codec));
  }

  next(): Promise<Frame | null> {
    return this.queue.next(this.done);
  }

  close(): void {
    this.finish('closed');
  }

  private reader(): FanOutReader {
    return {
      pendingBytes: () => 0,
      deliver: (track, packet) => {
        if (this.done || track !== this.plan.track || !readRtpHeaderInto(packet, this.header)) return;
        this.depacketizer.push(packet, this.header);
      },
      deliverRtcp: () => undefined,
      evict: (reason) => this.streamEnded(`the relay let the stream go: ${reason}`),
    };
  }

  /** The cached units first: the newest of them is the first frame wanted. */
  private decodeWith(child: ChildProcess): void {
    this.picker.startAt(Math.max(0, this.pending.length - 1));
    this.child = child;
    const splitter = new PpmSplitter(4096 * 4096 * 3, (n) => this.picker.wanted(n));
    watchDecoder(child, {
      output: (chunk) => this.onPictures(splitter, chunk),
      failed: (err) => this.finish(`cannot run the decoder: ${err.message}`),
      exited: (why) => this.finish(this.streamEnd ?? why),
    });
    for (const unit of this.pending.splice(0)) this.write(unit);
  }

  private onUnit(unit: VideoAccessUnit): void {
    // A decoder can start at a keyframe only: the units before the first are of no use to it.
    if (this.done || this.streamEnd !== null || (!this.picker.started && this.pending.length === 0 && !unit.keyframe))
      return;
    clearTimeout(this.stall);
    this.stall = this.stallTimer();
    if (this.child) this.write(unit);
    else this.pending.push(unit);
  }

  private write(unit: VideoAccessUnit): void {
    const stdin = this.child?.stdin;
    if (!stdin) return;
    const nalus = this.picker.started ? unit.nalus : withParameterSets(this.plan.codec, unit.nalus, this.plan.fmtp);
    if (!nalus) return this.finish(`the stream's keyframe has no parameter sets`);
    this.picker.given(unit.rtpTime);
    stdin.write(annexB(nalus));
    stdin.write(AUD[this.plan.codec]);
    if (stdin.writableLength > this.settings.maxPendingBytes) this.finish('the decoder does not keep up');
  }

  private onPictures(splitter: PpmSplitter, chunk: Buffer): void {
    try {
      for (const frame of splitter.push(chunk)) {
        this.picker.took();
        this.queue.put(frame);
        if (this.picker.complete) this.finish(null);
      }
    } catch (err) {
      this.finish((err as Error).message);
    }
  }

  private stallTimer(): NodeJS.Timeout {
    return setTimeout(
      () => this.streamEnded(`no picture from the stream for ${this.settings.stallMs} ms`),
      this.settings.stallMs,
    );
  }

  /**
   * The stream ends (stopped, or the relay let it go): the decoder is told there is no more input
   * and ends once it has written the pictures it has, which are still taken.
   */
  private streamEnded(why: string): void {
    if (this.done || this.streamEnd !== null) return;
    this.streamEnd = why;
    clearTimeout(this.stall);
    this.leaveStream();
    if (this.child?.stdin) this.child.stdin.end();
    else this.finish(why);
  }

  private finish(why: string | null): void {
    if (this.done) return;
    this.done = true;
    if (!this.picker.complete) this.endedWhy = why ?? 'the frames ended';
    clearTimeout(this.timer);
    clearTimeout(this.stall);
    this.child?.kill('SIGKILL');
    this.leaveStream();
    this.queue.end();
  }

  private leaveStream(): void {
    // Leaving from inside deliver() would change the fan-out's reader list while it loops over it.
    queueMicrotask(() => this.detach?.());
  }
}

/**
 * Cuts a stream of binary PPM pictures into frames; refuses a picture larger than maxBytes. A
 * picture `want` refuses (by its number from 0) is skipped without being copied.
 */
export class PpmSplitter {
  private head: Buffer = Buffer.alloc(0);
  private body: Buffer | null = null;
  private filled = 0;
  private size = 0;
  private width = 0;
  private height = 0;
  private keep = false;
  private index = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly want: (index: number) => boolean = () => true,
  ) {}

  push(chunk: Buffer): Frame[] {
    const out: Frame[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.size === 0) {
        const had = this.head.length;
        this.head = Buffer.concat([this.head, chunk.subarray(at, at + 64)]);
        const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(this.head.toString('latin1'));
        if (!header) {
          if (this.head.length >= 64) throw new FrameError('the decoder wrote something that is not a PPM picture');
          at += this.head.length - had;
          continue;
        }
        this.width = Number(header[1]);
        this.height = Number(header[2]);
        if (Number(header[3]) !== 255 || this.width < 1 || this.height < 1)
          throw new FrameError(`unexpected PPM ${this.width}x${this.height} maxval ${header[3]}`);
        this.size = this.width * this.height * 3;
        if (this.size > this.maxBytes)
          throw new FrameError(`picture of ${this.width}x${this.height} is larger than allowed`);
        at += header[0].length - had;
        this.head = Buffer.alloc(0);
        this.keep = this.want(this.index++);
        // A copy of its own: the frame outlives the stream's chunks and goes to a worker thread.
        this.body = this.keep ? Buffer.allocUnsafe(this.size) : null;
        this.filled = 0;
      }
      const n = Math.min(this.size - this.filled, chunk.length - at);
      if (this.body) chunk.copy(this.body, this.filled, at, at + n);
      this.filled += n;
      at += n;
      if (this.filled === this.size) {
        if (this.body)
          out.push({
            data: new Uint8Array(this.body.buffer, this.body.byteOffset, this.size),
            width: this.width,
            height: this.height,
          });
        this.body = null;
        this.size = 0;
      }
    }
    return out;
  }
}
