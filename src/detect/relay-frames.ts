import { spawn, type ChildProcess } from 'node:child_process';
import type { VideoAccessUnit } from '../media/access-unit.js';
import type { FanOutReader } from '../media/relay/fanout.js';
import { createRtpHeader, readRtpHeaderInto } from '../media/rtp.js';
import { annexB, withParameterSets } from '../media/still/annex-b.js';
import { videoPlanOf } from '../media/still/keyframe-picture.js';
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
const AUD: Record<VideoCodec, Buffer> = { H264: Buffer.from([0, 0, 0, 1, 0x09, 0xf0]), H265: Buffer.from([0, 0, 0, 1, 0x46, 0x01, 0x50]) };

/** ffmpeg reading Annex B from stdin with no probing delay, writing every picture as a PPM. */
export function decoderArgs(codec: VideoCodec, maxWidth: number): string[] {
  return [
    '-hide_banner', '-nostdin', '-v', 'error', '-threads', '1',
    // Probing would wait for megabytes of input before the first picture; the SPS says it all.
    '-probesize', '32', '-analyzeduration', '0',
    '-f', codec === 'H264' ? 'h264' : 'hevc', '-i', 'pipe:0',
    '-an', '-vf', `scale='min(${maxWidth},iw)':-2`, '-fps_mode', 'passthrough',
    '-f', 'image2pipe', '-c:v', 'ppm', 'pipe:1',
  ];
}

/**
 * Spawns decoders and keeps one started ahead per codec: starting ffmpeg takes 0.1 s of CPU but
 * most of a second on a loaded Pi, and a decoder waiting on its stdin costs nothing but its memory.
 */
export class Decoders {
  private readonly spare = new Map<VideoCodec, ChildProcess>();
  private closed = false;

  constructor(private readonly ffmpegPath: string, private readonly maxWidth: number) {}

  take(codec: VideoCodec): ChildProcess {
    const ready = this.spare.get(codec);
    this.spare.delete(codec);
    // A spare that could not start (no pid) or has ended is replaced: its events have been missed.
    const child = ready?.pid !== undefined && ready.exitCode === null && ready.signalCode === null ? ready : this.spawn(codec);
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
  const count = opts.count ?? 3;
  const spacing = Math.round(((opts.spacingMs ?? 500) * VIDEO_CLOCK) / 1000);
  const plan = videoPlanOf(stream.sdp);
  const depacketizer = new VideoDepacketizer({ codec: plan.codec, donl: plan.donl }, (unit) => onUnit(unit));
  const header = createRtpHeader();
  const frames: Frame[] = [];
  const waiters: Array<(f: Frame | null) => void> = [];
  /** RTP time of each access unit given to the decoder, in decoding order (its output frame numbers). */
  const times: number[] = [];
  const pending: VideoAccessUnit[] = [];
  let child: ChildProcess | null = null;
  let first = -1; // the decoder's output number of the first frame wanted (the newest cached picture)
  let lastTaken: number | null = null;
  let taken = 0;
  let done = false;
  let ended: string | null = null;
  let detach: (() => void) | null = null;
  let stderr = '';

  const finish = (why: string | null): void => {
    if (done) return;
    done = true;
    if (taken < count) ended = why ?? 'the frames ended';
    clearTimeout(timer);
    clearTimeout(stall);
    child?.kill('SIGKILL');
    // Leaving from inside deliver() would change the fan-out's reader list while it loops over it.
    queueMicrotask(() => detach?.());
    for (const w of waiters.splice(0)) w(null);
  };
  const timer = setTimeout(() => finish(`no ${count} frames within ${opts.timeoutMs ?? 10_000} ms`), opts.timeoutMs ?? 10_000);
  const stallMs = opts.stallMs ?? 3000;
  /**
   * The stream ends (stopped, or the relay let it go): the decoder is told there is no more input
   * and ends once it has written the pictures it has, which are still taken.
   */
  const streamEnded = (why: string): void => {
    if (done || streamEnd !== null) return;
    streamEnd = why;
    clearTimeout(stall);
    queueMicrotask(() => detach?.());
    if (child?.stdin) child.stdin.end();
    else finish(why);
  };
  let streamEnd: string | null = null;
  let stall = setTimeout(() => streamEnded(`no picture from the stream for ${stallMs} ms`), stallMs);

  function onUnit(unit: VideoAccessUnit): void {
    if (done || streamEnd !== null || (times.length === 0 && pending.length === 0 && !unit.keyframe)) return;
    clearTimeout(stall);
    stall = setTimeout(() => streamEnded(`no picture from the stream for ${stallMs} ms`), stallMs);
    if (child) write(unit);
    else pending.push(unit);
  }

  function write(unit: VideoAccessUnit): void {
    const stdin = child?.stdin;
    if (!stdin) return;
    const nalus = times.length === 0 ? withParameterSets(plan.codec, unit.nalus, plan.fmtp) : unit.nalus;
    if (!nalus) return finish(`the stream's keyframe has no parameter sets`);
    times.push(unit.rtpTime);
    stdin.write(annexB(nalus));
    stdin.write(AUD[plan.codec]);
    if (stdin.writableLength > (opts.maxPendingBytes ?? 16 * 1024 * 1024)) finish('the decoder does not keep up');
  }

  /** Whether the decoder's picture number `n` is one to look at: the newest cached, then one every spacing. */
  const wanted = (n: number): boolean => {
    if (n < first || taken >= count) return false;
    const at = times[n];
    if (at === undefined) return false;
    if (lastTaken !== null && ((at - lastTaken) >>> 0) < spacing) return false;
    lastTaken = at;
    return true;
  };

  const reader: FanOutReader = {
    pendingBytes: () => 0,
    deliver: (track, packet) => {
      if (done || track !== plan.track || !readRtpHeaderInto(packet, header)) return;
      depacketizer.push(packet, header);
    },
    deliverRtcp: () => undefined,
    evict: (reason) => streamEnded(`the relay let the stream go: ${reason}`),
  };
  try {
    // The cached group of pictures comes within attach(): those units wait in `pending`.
    detach = stream.attach(reader);
  } catch (err) {
    finish(`the stream cannot be read: ${(err as Error).message}`);
  }
  if (!done) {
    first = Math.max(0, pending.length - 1);
    child = decoders.take(plan.codec);
    const splitter = new PpmSplitter(4096 * 4096 * 3, (n) => wanted(n));
    child.stdout?.on('data', (chunk: Buffer) => {
      try {
        for (const frame of splitter.push(chunk)) {
          taken++;
          const w = waiters.shift();
          if (w) w(frame);
          else frames.push(frame);
          if (taken >= count) finish(null);
        }
      } catch (err) {
        finish((err as Error).message);
      }
    });
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 2000) stderr += d.toString();
    });
    child.once('error', (err) => finish(`cannot run the decoder: ${err.message}`));
    child.once('close', (code) => finish(streamEnd ?? (stderr.trim().split('\n')[0] || `the decoder exited with ${code}`)));
    for (const unit of pending.splice(0)) write(unit);
  }

  return {
    next: () => {
      const frame = frames.shift();
      if (frame) return Promise.resolve(frame);
      if (done) return Promise.resolve(null);
      return new Promise((resolve) => waiters.push(resolve));
    },
    get ended() {
      return ended;
    },
    close: () => finish('closed'),
  };
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
        if (Number(header[3]) !== 255 || this.width < 1 || this.height < 1) throw new FrameError(`unexpected PPM ${this.width}x${this.height} maxval ${header[3]}`);
        this.size = this.width * this.height * 3;
        if (this.size > this.maxBytes) throw new FrameError(`picture of ${this.width}x${this.height} is larger than allowed`);
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
        if (this.body) out.push({ data: new Uint8Array(this.body.buffer, this.body.byteOffset, this.size), width: this.width, height: this.height });
        this.body = null;
        this.size = 0;
      }
    }
    return out;
  }
}
