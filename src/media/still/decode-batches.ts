import { DEFAULT_JPEG_QUALITY, type StillInputFormat } from './decode.js';
import type { DecodeSlots } from './decode-slots.js';
import { StillError } from './errors.js';

// Keyframes to decode are gathered for windowMs per (format, width, picture size) and decoded in
// one ffmpeg run (decodeStills) under one decode slot: a page that asks for its 16 cameras at once
// starts ffmpeg once, not 16 times. A run that fails is retried picture by picture, so one broken
// keyframe does not cost the others their picture.

export interface DecodeBatchStats {
  /** ffmpeg runs started. */
  runs: number;
  /** Pictures those runs were asked for. */
  pictures: number;
}

interface Job {
  input: Buffer;
  resolve: (jpeg: Buffer) => void;
  reject: (err: unknown) => void;
}

export type DecodeMany = (
  format: StillInputFormat,
  inputs: readonly Buffer[],
  width: number | null,
  quality: number,
) => Promise<Buffer[]>;

interface Batch {
  jobs: Job[];
  timer: NodeJS.Timeout | null;
}

export class DecodeBatches {
  readonly stats: DecodeBatchStats = { runs: 0, pictures: 0 };
  /** Batches still taking pictures: until full, or until their run gets a decode slot. */
  private readonly open = new Map<string, Batch>();

  constructor(
    private readonly slots: DecodeSlots,
    private readonly decodeMany: DecodeMany,
    private readonly windowMs: number,
    private readonly maxBatch: number,
  ) {}

  /** `group` names pictures that make JPEGs of one size (e.g. the source's width x height). */
  decode(
    format: StillInputFormat,
    input: Buffer,
    width: number | null,
    group: string,
    quality = DEFAULT_JPEG_QUALITY,
  ): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const key = `${format}/${width ?? 'full'}/q${quality}/${group}`;
      let batch = this.open.get(key);
      if (!batch) {
        const created: Batch = { jobs: [], timer: null };
        created.timer = setTimeout(() => this.queue(key, created, format, width, quality), this.windowMs);
        this.open.set(key, created);
        batch = created;
      }
      batch.jobs.push({ input, resolve, reject });
      if (batch.jobs.length >= this.maxBatch) {
        this.open.delete(key);
        this.queue(key, batch, format, width, quality);
      }
    });
  }

  /**
   * Asks for a decode slot for the batch. It keeps taking pictures while it waits for one (all
   * slots busy: a burst of requests joins the batch already waiting rather than queueing more runs).
   */
  private queue(key: string, batch: Batch, format: StillInputFormat, width: number | null, quality: number): void {
    if (batch.timer === null) return; // already queued
    clearTimeout(batch.timer);
    batch.timer = null;
    this.runJobs(format, width, quality, () => {
      if (this.open.get(key) === batch) this.open.delete(key);
      return batch.jobs;
    });
  }

  /** One ffmpeg run in a slot for the jobs `take` gives when the slot is had. */
  private runJobs(format: StillInputFormat, width: number | null, quality: number, take: () => Job[]): void {
    let jobs: Job[] = [];
    this.slots
      .run(() => {
        jobs = take();
        this.stats.runs++;
        this.stats.pictures += jobs.length;
        return this.decodeMany(
          format,
          jobs.map((j) => j.input),
          width,
          quality,
        );
      })
      .then(
        (jpegs) => {
          jobs.forEach((job, i) => {
            const jpeg = jpegs[i];
            if (jpeg) job.resolve(jpeg);
            else job.reject(new StillError('decode_failed', 'the picture could not be decoded: no picture'));
          });
        },
        (err: unknown) => {
          if (jobs.length === 0) jobs = take(); // refused before the run began
          if (jobs.length > 1 && err instanceof StillError) {
            for (const job of jobs) this.runJobs(format, width, quality, () => [job]);
            return;
          }
          for (const job of jobs) job.reject(err);
        },
      );
  }
}
