import {
  appendFileSync,
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writevSync,
} from 'node:fs';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { backoffMs } from '../../domain/backoff.js';
import { FragmentMuxer } from '../mux/fragment-muxer.js';
import type { NewPart } from '../mux/part-assembler.js';
import type { StreamHandle } from '../relay/streams.js';
import { VIDEO_TIMESCALE } from '../fmp4/track.js';
import {
  indexLine,
  isSegmentFile,
  runOfSegmentFile,
  SEGMENT_INDEX,
  SegmentRing,
  segmentFileName,
  selectSegments,
  type Segment,
  type Selection,
} from './segments.js';

// A camera's main stream kept in RAM as short fMP4 files, one per group of pictures, read in process
// from the relay's shared camera session: no process of its own, no socket, no copy of a packet
// beyond the one into its fragment. Each file is the stream's init segment and the fragments of one
// group of pictures (one fragment, or several for a group longer than MAX_FRAGMENT_S), so every file starts on a keyframe and plays on its own, and ffmpeg joins any run of
// them into a clip. A file is listed in the ring once the next keyframe (or the end of the run)
// closes its group of pictures. When the stream ends, stalls or cannot be had, a new run starts with backoff and
// jitter; each run's files have their own prefix, so a pending clip's files are never overwritten.

/** What the recorder needs of the relay: the camera's main stream, shared (the camera keeps one session). */
export type RecorderStream = Pick<StreamHandle, 'sdp' | 'startOfNextReader' | 'attach'>;

export interface SegmenterOptions {
  deviceId: string;
  /**
   * This camera's RAM directory, emptied at start: whatever a crashed run left there was recovered
   * before (recovery.ts).
   */
  dir: string;
  /** The camera's main stream through the relay; rejects while it cannot be opened. */
  acquire: () => Promise<RecorderStream>;
  logger: BaseLogger;
  /** No new fragment for this long: the stream is stuck (or the camera silent); a new run starts. */
  stallMs?: number;
  maxBackoffMs?: number;
  random?: () => number;
  now?: () => number;
}

/**
 * Longest fragment (s), and longest sample (a longer one is pictures missing): a group of pictures
 * longer than this goes into its file in pieces as it comes, so a crash loses at most this much of
 * it (a group is otherwise held in memory until the next keyframe closes it).
 */
const MAX_FRAGMENT_S = 2;

/**
 * How often a clip whose end is not yet in looks again (the pictures of its last moment still on
 * their way), between the listings that wake it.
 */
const FOOTAGE_RETRY_MS = 100;

/** The audio the footage carries, as its muxer wrote it. */
export type FootageAudio = FragmentMuxer['audioCodec'];

/** What a clip is made of. */
export interface ClipFootage {
  selection: Selection;
  /** The audio of the run the selection starts in (a run's audio never changes). */
  audio: FootageAudio;
  /** Removes the copy of an open group of pictures the selection ends with, once the clip is written. */
  release(): void;
}

/** The file being filled: the group of pictures not yet closed by the next keyframe. */
interface OpenSegment {
  file: string;
  /** Decode time of its first picture, seconds from the run's zero. */
  startS: number;
  durationS: number;
  /** The earliest wall clock (ms) its pictures imply for its start. */
  wallClock: number;
}

/** One attachment to the relay: a muxer and the files it fills. */
interface Run {
  number: number;
  muxer: FragmentMuxer;
  detach: () => void;
  open: OpenSegment | null;
  files: number;
}

export class Segmenter {
  readonly ring = new SegmentRing();
  private run: Run | null = null;
  private runs = 0;
  /** The audio of each run that still has a segment in the ring, by run number. */
  private readonly audioOfRun = new Map<number, FootageAudio>();
  private attempt = 0;
  private lastFragmentAt = 0;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly watchdog: NodeJS.Timeout;
  private readonly now: () => number;
  /** Lines in the RAM index (index.csv): rewritten from the ring when far longer than it. */
  private indexLines = 0;
  /** Resolves the waiters of `waitForSegmentAfter`. */
  private waiters: Array<{ at: number; resolve: () => void }> = [];
  /** Copies of open groups of pictures made for clips (their names). */
  private copies = 0;
  /** Bytes of each file this segmenter wrote to the RAM directory and has not removed. */
  private readonly fileBytes = new Map<string, number>();

  constructor(private readonly opts: SegmenterOptions) {
    this.now = opts.now ?? Date.now;
    rmSync(opts.dir, { recursive: true, force: true });
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    this.watchdog = setInterval(() => this.checkStall(), 1000);
    this.watchdog.unref();
    this.start();
  }

  file(name: string): string {
    return path.join(this.opts.dir, name);
  }

  /** Resolves once a segment ending at or after `at` is known, or after `timeoutMs`. */
  private waitForSegmentAfter(at: number, timeoutMs: number): Promise<void> {
    if ((this.ring.latestEndAt ?? Number.NEGATIVE_INFINITY) >= at || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { at, resolve };
      this.waiters.push(waiter);
      setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      }, timeoutMs).unref();
    });
  }

  /**
   * The footage of [from, to) for a clip, as soon as its end is in: the segments listed, and when `to`
   * lies in the group of pictures still being received, what came of that group so far (the part being
   * filled is cut off and the file copied aside), so a clip never waits for the keyframe that closes
   * its last group (up to a GOP, 1–4 s on most cameras). Waits at most `timeoutMs` for the end; a
   * stream that stalled gives what was received (its run is ended, which lists the open group). Null
   * when no footage covers the clip.
   */
  async footageFor(from: number, to: number, timeoutMs: number): Promise<ClipFootage | null> {
    for (let waited = 0; ; waited += FOOTAGE_RETRY_MS) {
      if ((this.ring.latestEndAt ?? Number.NEGATIVE_INFINITY) >= to || this.stopped) break;
      const early = this.cutOpenGroup(from, to);
      if (early) return early;
      if (waited >= timeoutMs) break;
      await this.waitForSegmentAfter(to, Math.min(FOOTAGE_RETRY_MS, timeoutMs - waited));
    }
    if ((this.ring.latestEndAt ?? Number.NEGATIVE_INFINITY) < to) await this.endRun();
    const selection = this.ring.select(from, to);
    return selection && { selection, audio: this.audioOf(selection, null), release: () => undefined };
  }

  /** The clip's footage through the open group of pictures as received so far, if that reaches `to`. */
  private cutOpenGroup(from: number, to: number): ClipFootage | null {
    const run = this.run;
    if (!run) return null;
    run.muxer.cut();
    const open = run.open;
    if (!open) return null;
    const line = { file: open.file, startS: open.startS, endS: open.startS + open.durationS };
    const part = this.ring.preview(line, this.now());
    if (part.endAt < to) return null;
    // A copy: the open file grows by the rest of its group while ffmpeg reads it.
    const copy = `.clip-${++this.copies}.mp4`;
    try {
      copyFileSync(this.file(open.file), this.file(copy));
      this.wrote(copy, this.fileBytes.get(open.file) ?? 0);
    } catch (err) {
      this.opts.logger.warn(
        { device: this.opts.deviceId, err: (err as Error).message },
        'recorder: cannot copy the open RAM segment',
      );
      return null;
    }
    const release = () => this.remove(copy);
    const selection = selectSegments([...this.ring.list(), { ...part, file: copy }], from, to);
    if (!selection) release();
    return selection && { selection, audio: this.audioOf(selection, { file: copy, run: run.number }), release };
  }

  /** The audio of the run a selection starts in; `copy`, a copy of the open file and its run. */
  private audioOf(selection: Selection, copy: { file: string; run: number } | null): FootageAudio {
    const first = selection.segments[0]?.file ?? '';
    const run = first === copy?.file ? copy.run : runOfSegmentFile(first);
    return (run !== null && this.audioOfRun.get(run)) || null;
  }

  /** Deletes segments the ring no longer holds. */
  prune(before: number, keepFrom: number | null): void {
    for (const name of this.ring.prune(before, keepFrom)) this.remove(name);
    const oldest = runOfSegmentFile(this.ring.files()[0] ?? '') ?? this.runs;
    for (const run of this.audioOfRun.keys()) if (run < oldest) this.audioOfRun.delete(run);
    if (this.indexLines > 2 * this.ring.size + 64) this.rewriteIndex();
  }

  /**
   * Ends the current run: the group of pictures being filled is closed and listed (a dead camera
   * gives what was received), and a new run starts a moment later.
   */
  endRun(): Promise<void> {
    const run = this.run;
    if (!run) return Promise.resolve();
    this.closeRun(run);
    this.retryLater();
    return Promise.resolve();
  }

  /** Stops reading the stream and lists what was received; the files stay for pending clips. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.run) this.closeRun(this.run);
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
    await Promise.resolve();
  }

  /** Removes the directory and every segment (after stop and the last clips). */
  removeFiles(): void {
    rmSync(this.opts.dir, { recursive: true, force: true });
    this.fileBytes.clear();
  }

  /** Bytes of footage this camera holds in the RAM directory now (its segments and clips' copies). */
  get ramBytes(): number {
    let bytes = 0;
    for (const b of this.fileBytes.values()) bytes += b;
    return bytes;
  }

  private wrote(name: string, bytes: number): void {
    this.fileBytes.set(name, (this.fileBytes.get(name) ?? 0) + bytes);
  }

  private start(): void {
    if (this.stopped) return;
    this.opts.acquire().then(
      (stream) => {
        if (this.stopped || this.run) return;
        this.attach(stream);
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

  private attach(stream: RecorderStream): void {
    const number = ++this.runs;
    this.ring.newRun();
    // A run that ended mid-file (a crash) leaves a file no run listed: nothing will ask for it. Only
    // segments: a clip being written keeps its concat list here too.
    const held = new Set(this.ring.files());
    for (const f of readdirSync(this.opts.dir)) if (isSegmentFile(f) && !held.has(f)) this.remove(f);
    let muxer: FragmentMuxer;
    try {
      muxer = new FragmentMuxer(
        stream.sdp,
        { partTarget: MAX_FRAGMENT_S, targetDuration: MAX_FRAGMENT_S, g711: true, wallClock: this.now },
        {
          addPart: (part) => this.addPart(run, part),
          ended: (reason) => this.ended(run, reason),
        },
      );
    } catch (err) {
      this.opts.logger.warn(
        { device: this.opts.deviceId, err: (err as Error).message },
        'recorder: the camera stream cannot be recorded',
      );
      this.retryLater();
      return;
    }
    this.audioOfRun.set(number, muxer.audioCodec);
    muxer.setStarts(stream.startOfNextReader());
    const run: Run = { number, muxer, detach: () => undefined, open: null, files: 0 };
    this.run = run;
    this.lastFragmentAt = this.now();
    run.detach = stream.attach(muxer);
    this.opts.logger.debug({ device: this.opts.deviceId, run: number }, 'recorder: reading the camera stream');
  }

  private addPart(run: Run, part: NewPart): void {
    if (this.run !== run) return;
    this.lastFragmentAt = this.now();
    this.attempt = 0;
    const startS = part.decodeTime / VIDEO_TIMESCALE;
    try {
      const open = run.open;
      if (part.independent) {
        // A keyframe right after a cut() closes the open group with no part of its own: the keyframe
        // starting this part is the one that closed it.
        if (open) this.list(open, part.wallClock);
        run.open = null;
        const init = run.muxer.init;
        if (!init) return;
        const file = segmentFileName(run.number, ++run.files);
        writeChunks(this.file(file), 'w', [init, ...part.chunks], init.length + part.length);
        this.wrote(file, init.length + part.length);
        run.open = { file, startS, durationS: part.duration, wallClock: part.wallClock };
      } else if (open) {
        // More of a group of pictures longer than a fragment: into the same file.
        writeChunks(this.file(open.file), 'a', part.chunks, part.length);
        this.wrote(open.file, part.length);
        open.wallClock = Math.min(open.wallClock, part.wallClock - (startS - open.startS) * 1000);
        open.durationS = startS + part.duration - open.startS;
      } else return; // the rest of a group of pictures whose start could not be written
    } catch (err) {
      // tmpfs full, or the directory gone: this group of pictures is lost, the next one is tried.
      run.open = null;
      this.opts.logger.warn(
        { device: this.opts.deviceId, err: (err as Error).message },
        'recorder: cannot write a RAM segment',
      );
      return;
    }
    // The next keyframe closed it (or the stream ended): the group of pictures is whole.
    if ((part.closedBy === 'keyframe' || part.closedBy === 'flush') && run.open) {
      this.list(run.open, part.closedAt);
      run.open = null;
    }
  }

  /**
   * A closed file into the ring and the RAM index, all there when the keyframe after it arrived
   * (`closedAt`), or, closed otherwise, by its first pictures' arrivals and its length.
   */
  private list(open: OpenSegment, closedAt: number | null): void {
    const endS = open.startS + open.durationS;
    const segment = this.ring.add(
      { file: open.file, startS: open.startS, endS },
      closedAt ?? open.wallClock + open.durationS * 1000,
    );
    this.appendIndex(segment);
    const end = this.ring.latestEndAt ?? 0;
    const ready = this.waiters.filter((w) => w.at <= end);
    this.waiters = this.waiters.filter((w) => w.at > end);
    for (const w of ready) w.resolve();
  }

  private ended(run: Run, reason: string): void {
    if (this.run !== run || this.stopped) return;
    this.closeRun(run);
    const wait = this.retryLater();
    this.opts.logger.warn({ device: this.opts.deviceId, reason, retryInMs: wait }, 'recorder: camera stream ended');
  }

  /** Detaches the run and lists the group of pictures it was filling. */
  private closeRun(run: Run): void {
    if (this.run !== run) return;
    run.detach();
    run.muxer.flush();
    this.run = null;
    if (run.open) this.list(run.open, null);
    run.open = null;
  }

  private retryLater(): number {
    if (this.stopped || this.retryTimer) return 0;
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

  private checkStall(): void {
    const run = this.run;
    if (!run || this.now() - this.lastFragmentAt <= (this.opts.stallMs ?? 10_000)) return;
    this.opts.logger.warn(
      { device: this.opts.deviceId },
      'recorder: no picture from the camera stream; reading it anew',
    );
    this.closeRun(run);
    this.retryLater();
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
    this.fileBytes.delete(name);
    try {
      unlinkSync(this.file(name));
    } catch {
      // already gone (a restart emptied the directory)
    }
  }
}

/**
 * Buffers written to a new file ('w') or the end of one ('a') as they are, with no joined copy: the
 * fragment's chunks are views of the muxer's buffers, valid only now.
 */
function writeChunks(file: string, flags: 'w' | 'a', chunks: readonly Buffer[], length: number): void {
  const fd = openSync(file, flags, 0o600);
  try {
    // A regular file takes all of it or fails; fewer bytes means the RAM disk is full.
    if (writevSync(fd, chunks) < length) throw new Error('the RAM disk is full');
  } finally {
    closeSync(fd);
  }
}
