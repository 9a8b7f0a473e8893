import { Worker, type ResourceLimits } from 'node:worker_threads';
import { CheckQueue } from './check-queue.js';
import { CheckDroppedError, DetectorUnavailableError, FrameError } from './errors.js';
import { channelsOf } from './frame.js';
import type { Box, Frame, RawDetection } from './types.js';
import { isWorkerMessage, type CheckMessage, type WorkerConfig, type WorkerMessage } from './worker-protocol.js';

export interface DetectorPoolOptions {
  /** Worker threads, each with its own copy of the model, each running one inference at a time. */
  threads: number;
  /** Most checks waiting for a free worker (config detection.queue_size). */
  queueSize: number;
  /** Lowest score a worker reports at all; the rules (min_score, threshold) apply later. */
  floorScore?: number;
  /** The model's directory (null: the one in node_modules). */
  modelDir?: string | null;
  /** The worker script; the built dist/detect/worker.js beside this file by default. */
  workerUrl?: URL;
  /** Each worker's V8 heap limits (WORKER_LIMITS by default). */
  resourceLimits?: ResourceLimits;
  /** Told the seconds each check ran in a worker (queue wait excluded), for the metrics histogram. */
  onRun?: (seconds: number) => void;
}

export interface CheckRequest {
  camera: string;
  /** The few frames of one motion start, looked at in order. */
  frames: Frame[];
  /** The moving area in 0–1 coordinates, or null (ONVIF motion): the whole frame in tiles. */
  motion: Box | null;
  /** The frames come back scaled down to at least this width (shrinkFrame), for a caller that keeps them. */
  keptWidth?: number;
}

/** What a check found: the raw detections per frame, and the frames scaled down when asked (keptWidth; else none). */
export interface CheckAnswer {
  found: RawDetection[][];
  kept: Frame[];
}

export type PoolState = 'loading' | 'ready' | 'error' | 'closed';

export interface PoolStats {
  state: PoolState;
  error: string | null;
  queued: number;
  running: number;
  checked: number;
  dropped: number;
  failed: number;
}

interface Job {
  id: number;
  request: CheckRequest;
  resolve: (answer: CheckAnswer) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  startedAt: number;
}

/**
 * A worker's V8 heap limits. The old generation: a runaway worker cannot take the box. The young
 * generation: left to V8, it grows with the rate at which inference makes short-lived objects and
 * keeps what it reached (to 64 MB on a machine with plenty of RAM, after a minute of checks);
 * bounded, scavenges run more often and each stays as cheap, and the checks take as long. A
 * --max-semi-space-size flag wins over this bound in V8 (flags are the process's): under the unit's
 * NODE_OPTIONS the worker's young generation is two 8 MB halves. The model and its tensors live in
 * the WebAssembly memory, outside both.
 */
export const WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 8 };

/**
 * The detector behind a bounded queue: `threads` worker threads load the model once each at start;
 * checks wait in a CheckQueue (full: the busiest camera's oldest check is dropped and counted) and
 * run one per free worker. A model that fails to load puts the pool in the error state: every check
 * is refused with DetectorUnavailableError and nothing else stops.
 */
export class DetectorPool {
  private readonly slots: Slot[] = [];
  private readonly queue: CheckQueue<Job>;
  private nextId = 1;
  private counts = { checked: 0, dropped: 0, failed: 0 };
  private stateValue: PoolState = 'loading';
  private errorValue: string | null = null;
  private inputSizeValue: number | null = null;
  private readonly settled: Promise<void>;
  private settle!: () => void;
  private readonly onRun: (seconds: number) => void;

  constructor(opts: DetectorPoolOptions) {
    this.onRun = opts.onRun ?? (() => {});
    if (!Number.isInteger(opts.threads) || opts.threads < 1)
      throw new RangeError(`threads must be a whole number >= 1, got ${opts.threads}`);
    this.queue = new CheckQueue<Job>(opts.queueSize);
    this.settled = new Promise((resolve) => (this.settle = resolve));
    const workerData: WorkerConfig = { modelDir: opts.modelDir ?? null, floorScore: opts.floorScore ?? 0.1 };
    const url = opts.workerUrl ?? new URL('./worker.js', import.meta.url);
    for (let i = 0; i < opts.threads; i++) {
      const slot: Slot = {
        worker: new Worker(url, { workerData, resourceLimits: opts.resourceLimits ?? WORKER_LIMITS }),
        ready: false,
        job: null,
        startedAt: 0,
      };
      slot.worker.on('message', (msg: unknown) => this.onMessage(slot, msg));
      slot.worker.on('error', (err: Error) => this.onGone(slot, err.message));
      slot.worker.on('exit', (code) => this.onGone(slot, `worker exited with code ${code}`));
      this.slots.push(slot);
    }
  }

  get state(): PoolState {
    return this.stateValue;
  }

  /** The model's square input side in pixels, once a worker has loaded it (null before). */
  get inputSize(): number | null {
    return this.inputSizeValue;
  }

  /** Resolves once the pool is ready or has failed (never rejects: see state and stats().error). */
  async started(): Promise<PoolState> {
    await this.settled;
    return this.stateValue;
  }

  stats(): PoolStats {
    return {
      state: this.stateValue,
      error: this.errorValue,
      queued: this.queue.size,
      running: this.slots.filter((s) => s.job !== null).length,
      ...this.counts,
    };
  }

  /**
   * The worker threads' V8 heaps, summed (bytes in use, and the memory they hold from the system):
   * each thread is a JavaScript engine of its own, which the process's heap figures do not count.
   * Their WebAssembly memory (the model and its tensors) is outside these heaps.
   */
  async heapBytes(): Promise<{ used: number; physical: number }> {
    const stats = await Promise.all(this.slots.map((s) => s.worker.getHeapStatistics().catch(() => null)));
    let used = 0;
    let physical = 0;
    for (const h of stats) {
      used += h?.used_heap_size ?? 0;
      physical += h?.total_physical_size ?? 0;
    }
    return { used, physical };
  }

  /**
   * Queues a check. Resolves with the raw detections per frame (and the frames scaled down, when
   * asked); rejects with FrameError (a frame
   * whose bytes do not match its size, or that the worker could not use), CheckDroppedError (pushed
   * out of the full queue) or DetectorUnavailableError (the model is not loaded, or the pool closed).
   */
  check(request: CheckRequest): Promise<CheckAnswer> {
    if (this.stateValue === 'error' || this.stateValue === 'closed') {
      return Promise.reject(
        new DetectorUnavailableError(`the detector is not running: ${this.errorValue ?? this.stateValue}`),
      );
    }
    try {
      request.frames.forEach(channelsOf);
    } catch (err) {
      this.counts.failed++;
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return new Promise((resolve, reject) => {
      const job: Job = { id: this.nextId++, request, resolve, reject };
      for (const old of this.queue.push(request.camera, job)) {
        this.counts.dropped++;
        old.reject(
          new CheckDroppedError(
            `check of ${old.request.camera} dropped: the detection queue is full (${this.queue.capacity})`,
          ),
        );
      }
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.stateValue === 'closed') return;
    this.stateValue = 'closed';
    this.settle();
    for (const job of this.queue.drain()) job.reject(new DetectorUnavailableError('the detector was closed'));
    for (const slot of this.slots) {
      slot.job?.reject(new DetectorUnavailableError('the detector was closed'));
      slot.job = null;
    }
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.job !== null) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.job = job;
      slot.startedAt = performance.now();
      const { frames, motion, keptWidth } = job.request;
      const msg: CheckMessage = { type: 'check', id: job.id, frames, motion, keptWidth: keptWidth ?? null };
      slot.worker.postMessage(msg);
    }
  }

  private onMessage(slot: Slot, raw: unknown): void {
    if (!isWorkerMessage(raw)) return;
    const msg: WorkerMessage = raw;
    switch (msg.type) {
      case 'ready':
        slot.ready = true;
        this.inputSizeValue = msg.inputSize;
        if (this.stateValue === 'loading') {
          this.stateValue = 'ready';
          this.settle();
        }
        this.pump();
        return;
      case 'load-failed':
        this.errorValue = msg.message;
        return;
      case 'result':
      case 'failed': {
        const job = slot.job;
        if (!job || job.id !== msg.id) return;
        slot.job = null;
        this.onRun((performance.now() - slot.startedAt) / 1000);
        if (msg.type === 'result') {
          this.counts.checked++;
          job.resolve({ found: msg.frames, kept: msg.kept });
        } else {
          this.counts.failed++;
          job.reject(msg.frameError ? new FrameError(msg.message) : new Error(msg.message));
        }
        this.pump();
        return;
      }
    }
  }

  /** A worker that ended (failed load, crash): its check fails; with no worker left the pool is in error. */
  private onGone(slot: Slot, reason: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    if (slot.job) {
      this.counts.failed++;
      slot.job.reject(new DetectorUnavailableError(`the detector worker stopped during the check: ${reason}`));
    }
    if (this.slots.length > 0 || this.stateValue === 'closed') return;
    this.stateValue = 'error';
    this.errorValue ??= reason;
    this.settle();
    for (const job of this.queue.drain())
      job.reject(new DetectorUnavailableError(`the detector is not running: ${this.errorValue}`));
  }
}
