import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { backoffMs } from '../../domain/backoff.js';
import { segmenterArgs } from './ffmpeg-args.js';
import { RateLimitedLines } from './process.js';
import {
  indexLine,
  isSegmentFile,
  parseSegmentLine,
  SEGMENT_INDEX,
  SegmentRing,
  segmentPattern,
  type Segment,
} from './segments.js';

// One supervised ffmpeg per camera copying the main stream (through the relay) into short NUT
// segments in RAM. Restarted with backoff and jitter when it exits or stalls (no new segment for
// stallMs), so recording resumes within seconds of the camera coming back.

export interface SegmenterOptions {
  deviceId: string;
  ffmpegPath: string;
  /**
   * This camera's RAM directory, emptied at start: whatever a crashed run left there was
   * recovered before (recovery.ts).
   */
  dir: string;
  /** A fresh relay URL for each run (tickets are short-lived). */
  inputUrl: () => string;
  /**
   * Resolves when the camera stream can be opened (the relay's session is up), rejects when not:
   * ffmpeg is only started for a stream that plays, so a dead camera costs a TCP connect per
   * retry, not an ffmpeg process.
   */
  streamReady?: () => Promise<void>;
  logger: BaseLogger;
  /**
   * Shorter than any camera's GOP, so every keyframe starts a segment and a clip can open on the
   * keyframe nearest before its pre-roll (the segment muxer cuts at the first keyframe past each
   * multiple of this).
   */
  segmentSeconds?: number;
  /** No new segment for this long: ffmpeg is stuck (or the camera silent); it is restarted. */
  stallMs?: number;
  maxBackoffMs?: number;
  random?: () => number;
  now?: () => number;
}

export class Segmenter {
  readonly ring = new SegmentRing();
  private child: ChildProcess | null = null;
  private run = 0;
  private attempt = 0;
  private lastSegmentAt = 0;
  private stopped = false;
  /** stop() is done: nothing more will be listed, so nobody waits for footage. */
  private finished = false;
  /** The run being ended, so a second endRun() waits for it instead of signalling again. */
  private ending: { child: ChildProcess; done: Promise<void> } | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly watchdog: NodeJS.Timeout;
  private readonly now: () => number;
  /** Lines in the RAM index (index.csv): rewritten from the ring when far longer than it. */
  private indexLines = 0;
  /** Resolves the waiters of `waitForSegmentAfter`. */
  private waiters: Array<{ at: number; resolve: () => void }> = [];

  constructor(private readonly opts: SegmenterOptions) {
    this.now = opts.now ?? Date.now;
    rmSync(opts.dir, { recursive: true, force: true });
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    this.watchdog = setInterval(() => this.checkStall(), 1000);
    this.watchdog.unref();
    this.start();
  }

  private start(): void {
    if (this.stopped) return;
    const ready = this.opts.streamReady?.() ?? Promise.resolve();
    ready.then(
      () => {
        if (!this.stopped) this.spawn();
      },
      (err: Error) => {
        this.opts.logger.debug(
          { device: this.opts.deviceId, err: err.message },
          'recorder: camera stream not available yet',
        );
        this.retryLater();
      },
    );
  }

  private retryLater(): number {
    const wait = Math.max(
      500,
      backoffMs(this.attempt++, this.opts.maxBackoffMs ?? 5000, this.opts.random ?? Math.random),
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.start();
    }, wait);
    return wait;
  }

  file(name: string): string {
    return path.join(this.opts.dir, name);
  }

  /** Resolves once a segment ending at or after `at` is known, or after `timeoutMs`. */
  waitForSegmentAfter(at: number, timeoutMs: number): Promise<void> {
    if ((this.ring.latestEndAt ?? Number.NEGATIVE_INFINITY) >= at) return Promise.resolve();
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { at, resolve };
      this.waiters.push(waiter);
      setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      }, timeoutMs).unref();
    });
  }

  /** Deletes segments the ring no longer holds. */
  prune(before: number, keepFrom: number | null): void {
    for (const name of this.ring.prune(before, keepFrom)) this.remove(name);
    if (this.indexLines > 2 * this.ring.size + 64) this.rewriteIndex();
  }

  private appendIndex(segment: Segment): void {
    try {
      appendFileSync(this.file(SEGMENT_INDEX), indexLine(segment));
      this.indexLines++;
    } catch (err) {
      this.opts.logger.warn(
        { device: this.opts.deviceId, err: (err as Error).message },
        'recorder: cannot write the RAM segment index',
      );
    }
  }

  /** The index holds what the ring holds (written aside and renamed: a crash never sees half of it). */
  private rewriteIndex(): void {
    const tmp = this.file(`.${SEGMENT_INDEX}.tmp`);
    try {
      writeFileSync(tmp, this.ring.list().map(indexLine).join(''));
      renameSync(tmp, this.file(SEGMENT_INDEX));
      this.indexLines = this.ring.size;
    } catch (err) {
      this.opts.logger.warn(
        { device: this.opts.deviceId, err: (err as Error).message },
        'recorder: cannot write the RAM segment index',
      );
    }
  }

  private remove(name: string): void {
    try {
      unlinkSync(this.file(name));
    } catch {
      // already gone (a restart emptied the directory)
    }
  }

  private spawn(): void {
    const run = ++this.run;
    this.ring.newRun();
    // A run that died mid-segment leaves a file no line ever named: nothing will ask for it. Only
    // segments: a clip being written keeps its concat list here too.
    const held = new Set(this.ring.files());
    for (const f of readdirSync(this.opts.dir)) if (isSegmentFile(f) && !held.has(f)) this.remove(f);
    const args = segmenterArgs({
      inputUrl: this.opts.inputUrl(),
      pattern: path.join(this.opts.dir, segmentPattern(run)),
      segmentSeconds: this.opts.segmentSeconds ?? 0.5,
      readTimeoutS: 5,
    });
    const child = spawn(this.opts.ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    // Not its arguments: the input URL holds a ticket.
    this.opts.logger.debug({ device: this.opts.deviceId, run, pid: child.pid }, 'recorder ffmpeg started');
    this.lastSegmentAt = this.now();
    const stderr = new RateLimitedLines(this.opts.logger, 'recorder ffmpeg says');
    child.stderr?.on('data', (d: Buffer) => stderr.push(d));
    let pending = '';
    child.stdout?.on('data', (d: Buffer) => {
      const lines = (pending + d.toString()).split('\n');
      pending = (lines.pop() ?? '').slice(-1000);
      for (const line of lines) {
        const parsed = parseSegmentLine(line);
        if (!parsed) continue;
        this.appendIndex(this.ring.add(parsed, this.now()));
        this.lastSegmentAt = this.now();
        this.attempt = 0;
        const end = this.ring.latestEndAt ?? 0;
        const ready = this.waiters.filter((w) => w.at <= end);
        this.waiters = this.waiters.filter((w) => w.at > end);
        for (const w of ready) w.resolve();
      }
    });
    child.once('error', (err) =>
      this.opts.logger.error({ err: err.message, device: this.opts.deviceId }, 'cannot run ffmpeg for recording'),
    );
    child.once('close', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      if (this.stopped) return;
      const wait = this.retryLater();
      this.opts.logger.warn(
        { device: this.opts.deviceId, code, signal, retryInMs: wait },
        'recorder ffmpeg ended; restarting',
      );
    });
  }

  private checkStall(): void {
    if (!this.child || this.now() - this.lastSegmentAt <= (this.opts.stallMs ?? 10_000)) return;
    // Already being ended (ffmpeg blocked on a silent input acts on SIGTERM only when its read times out).
    if (this.ending?.child === this.child) return;
    this.opts.logger.warn({ device: this.opts.deviceId }, 'recorder ffmpeg stalled; restarting');
    void this.endRun();
  }

  /** Stops ffmpeg (SIGTERM lets it finish and list its last segment); the files stay for pending clips. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.endRun();
    this.finished = true;
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }

  /**
   * Ends the current ffmpeg run gracefully, so that it lists its unfinished segment (ffmpeg blocked
   * on a silent input only acts on SIGTERM when its read times out); SIGKILL only as a last resort.
   */
  endRun(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    // One SIGTERM only: a second signal makes ffmpeg abandon its trailer (and the last segment).
    if (this.ending?.child === child) return this.ending.done;
    const done = new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      // 'close', not 'exit': the lines of its last segment are read by then.
      child.once('close', () => {
        clearTimeout(kill);
        resolve();
      });
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    });
    this.ending = { child, done };
    return done;
  }

  /** Removes the directory and every segment (after stop and the last clips). */
  removeFiles(): void {
    rmSync(this.opts.dir, { recursive: true, force: true });
  }
}
