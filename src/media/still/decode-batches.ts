import type { StillInputFormat } from './decode.js';
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

export type DecodeMany = (format: StillInputFormat, inputs: readonly Buffer[], width: number | null) => Promise<Buffer[]>;

export class DecodeBatches {
  readonly stats: DecodeBatchStats = { runs: 0, pictures: 0 };
  private readonly open = new Map<string, { jobs: Job[]; timer: NodeJS.Timeout }>();

  constructor(
    private readonly slots: DecodeSlots,
    private readonly decodeMany: DecodeMany,
    private readonly windowMs: number,
    private readonly maxBatch: number,
  ) {}

  /** `group` names pictures that make JPEGs of one size (e.g. the source's width x height). */
  decode(format: StillInputFormat, input: Buffer, width: number | null, group: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const key = `${format}/${width ?? 'full'}/${group}`;
      let batch = this.open.get(key);
      if (!batch) {
        const timer = setTimeout(() => this.flush(key, format, width), this.windowMs);
        batch = { jobs: [], timer };
        this.open.set(key, batch);
      }
      batch.jobs.push({ input, resolve, reject });
      if (batch.jobs.length >= this.maxBatch) this.flush(key, format, width);
    });
  }

  private flush(key: string, format: StillInputFormat, width: number | null): void {
    const batch = this.open.get(key);
    if (!batch) return;
    this.open.delete(key);
    clearTimeout(batch.timer);
    void this.run(format, width, batch.jobs);
  }

  private async run(format: StillInputFormat, width: number | null, jobs: Job[]): Promise<void> {
    try {
      const jpegs = await this.slots.run(() => {
        this.stats.runs++;
        this.stats.pictures += jobs.length;
        return this.decodeMany(format, jobs.map((j) => j.input), width);
      });
      jobs.forEach((job, i) => {
        const jpeg = jpegs[i];
        if (jpeg) job.resolve(jpeg);
        else job.reject(new StillError('decode_failed', 'the picture could not be decoded: no picture'));
      });
    } catch (err) {
      if (jobs.length > 1 && err instanceof StillError) {
        for (const job of jobs) void this.run(format, width, [job]);
        return;
      }
      for (const job of jobs) job.reject(err);
    }
  }
}
