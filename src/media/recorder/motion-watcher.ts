import { spawn, type ChildProcess } from 'node:child_process';
import type { BaseLogger } from 'pino';
import type { Box } from '../../detect/types.js';
import { backoffMs } from '../../domain/backoff.js';
import type { Polygon } from '../../domain/polygon.js';
import { motionArgs } from './ffmpeg-args.js';
import { GrayFrameSplitter, MotionDetector } from './motion.js';
import { RateLimitedLines } from './process.js';

// Software motion detection for cameras without events of their own: ffmpeg decodes the sub
// stream (through the relay) at a few frames a second into small grey frames, and the frame
// difference detector turns them into motion starts and stops. Supervised like the segmenter.

/** The grey frames compared, unless told otherwise (the web app's mask editor shows this grid: web/src/polygon.ts). */
export const MOTION_FRAME_SIZE = { width: 160, height: 90 } as const;

export interface MotionWatcherOptions {
  deviceId: string;
  ffmpegPath: string;
  /** A fresh relay URL (recorder ticket) for the stream to watch, the sub stream if there is one. */
  inputUrl: () => string;
  /** `where` (on a start) tells where the picture moves, asked when wanted: the area grows as motion goes on. */
  onMotion: (phase: 'start' | 'stop', at: number, where?: () => Box | null) => void;
  logger: BaseLogger;
  /** Fraction of pixels that must change (0–1]. */
  threshold: number;
  fps: number;
  /** Where changes never count (cameras[].motion_mask). */
  mask?: readonly Polygon[];
  width?: number;
  height?: number;
  now?: () => number;
}

export class MotionWatcher {
  private child: ChildProcess | null = null;
  private readonly detector: MotionDetector;
  private readonly splitter: GrayFrameSplitter;
  private readonly width: number;
  private readonly height: number;
  private readonly now: () => number;
  private attempt = 0;
  private frames = 0;
  private lastFrameAt = 0;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly watchdog: NodeJS.Timeout;

  constructor(private readonly opts: MotionWatcherOptions) {
    this.width = opts.width ?? MOTION_FRAME_SIZE.width;
    this.height = opts.height ?? MOTION_FRAME_SIZE.height;
    this.now = opts.now ?? Date.now;
    this.detector = new MotionDetector({
      width: this.width,
      height: this.height,
      threshold: opts.threshold,
      mask: opts.mask ?? [],
    });
    this.splitter = new GrayFrameSplitter(this.width * this.height);
    // No frame for 15 s: the decoder is stuck (or the camera silent); start it again.
    this.watchdog = setInterval(() => {
      if (this.child && this.now() - this.lastFrameAt > 15_000) this.child.kill('SIGKILL');
    }, 5000);
    this.watchdog.unref();
    this.spawn();
  }

  private spawn(): void {
    const args = motionArgs({
      inputUrl: this.opts.inputUrl(),
      fps: this.opts.fps,
      width: this.width,
      height: this.height,
      readTimeoutS: 5,
    });
    const child = spawn(this.opts.ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.lastFrameAt = this.now();
    this.splitter.reset();
    const stderr = new RateLimitedLines(this.opts.logger, 'motion detector ffmpeg says');
    child.stderr?.on('data', (d: Buffer) => stderr.push(d));
    child.stdout?.on('data', (chunk: Buffer) =>
      this.splitter.push(chunk, (frame) => {
        const at = this.now();
        this.lastFrameAt = at;
        this.attempt = 0;
        const change = this.detector.push(frame, at);
        if (++this.frames % 120 === 0)
          this.opts.logger.debug(
            { device: this.opts.deviceId, score: this.detector.lastScore, active: this.detector.active },
            'motion detector',
          );
        if (change === 'start') this.opts.onMotion(change, at, () => this.detector.movingArea());
        else if (change) this.opts.onMotion(change, at);
      }),
    );
    child.once('error', (err) =>
      this.opts.logger.error(
        { device: this.opts.deviceId, err: err.message },
        'cannot run ffmpeg for motion detection',
      ),
    );
    child.once('close', () => {
      if (this.child !== child) return;
      this.child = null;
      this.endMotion();
      if (this.stopped) return;
      const wait = Math.max(500, backoffMs(this.attempt++, 10_000, Math.random));
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (!this.stopped) this.spawn();
      }, wait);
    });
  }

  /** A motion in progress ends when the picture goes away (a stop, not a dangling start). */
  private endMotion(): void {
    if (this.detector.active) this.opts.onMotion('stop', this.now());
    this.detector.reset();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.watchdog);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.child?.kill('SIGTERM');
    this.endMotion();
  }
}
