import { timestampDelta } from '../rtp.js';

// Decode times for a track whose RTP timestamps are presentation times. RTP carries one timestamp
// per access unit, the PTS (RFC 6184 5.1); units arrive in decoding order. Without B-frames PTS
// order is decoding order and DTS = PTS. With B-frames a picture decoded later may be shown
// earlier, and an MP4 sample needs a DTS that increases in decoding order.
//
// The rule used here: the n-th DTS is the n-th smallest PTS. Decoding order and presentation order
// then hold the same set of times, so DTS keeps the stream's frame spacing, the first (key) picture
// has DTS = PTS, and PTS − DTS is the composition offset, negative for some pictures (hence the
// version 1 trun with signed offsets). Knowing the n-th smallest PTS needs the pictures that follow
// within the stream's reorder depth, so units wait in a window of that many; the depth starts at
// `initialReorderDepth` (0: no latency for cameras without B-frames) and grows, up to
// `maxReorderDepth`, to how far back a late-arriving earlier picture reaches. While it grows the
// DTS is held above the last one given (monotonic before exact), so the first B-frames of a stream
// may get short durations; PTS is never altered. A sample's duration is the next sample's DTS
// minus its own, so every unit also waits for one more.
//
// Times are in the RTP clock's units, unwrapped from 32 bits and counted from `zeroRtpTime` (the
// RTP time at the start of the shared timeline, from rtp-clock.ts, so tracks start together);
// units before zero are dropped. A jump of more than `maxJump` between consecutive timestamps (a
// camera whose clock restarted, a corrupt packet that passed) is not a picture that long: the
// timeline continues one spacing after the previous unit and counts a discontinuity, so no sample
// gets an hour-long duration or a composition offset beyond 32 bits.

export interface TimedUnit<T> {
  unit: T;
  /** Decode time from the timeline's zero. */
  dts: number;
  /** PTS − DTS. */
  compositionOffset: number;
  /** Next unit's DTS − this one's. */
  duration: number;
}

export interface DecodeTimelineOptions {
  /** RTP time of the timeline's zero; the first unit's when absent. */
  zeroRtpTime?: number;
  initialReorderDepth?: number;
  maxReorderDepth?: number;
  /** Largest believable step between consecutive RTP timestamps, in clock units (default 10 s at 90 kHz). */
  maxJump?: number;
}

interface Pending<T> {
  unit: T;
  pts: number;
}

export class DecodeTimeline<T> {
  /** Units dropped: their PTS is before the timeline's zero. */
  dropped = 0;
  /** Timestamp jumps over maxJump, smoothed over. */
  discontinuities = 0;
  private readonly maxJump: number;
  private spacing = 1;
  private zero: number | null;
  private lastRtp = 0;
  private extended = 0;
  private started = false;
  private depth: number;
  private readonly maxDepth: number;
  private readonly waiting: Pending<T>[] = [];
  /** PTS of the waiting units, ascending. */
  private readonly sortedPts: number[] = [];
  /** PTS of the last units, to measure reordering. */
  private readonly recent: number[] = [];
  private dated: { unit: T; pts: number; dts: number } | null = null;
  private lastDts = -1;
  private lastDuration = 0;

  constructor(
    private readonly emit: (timed: TimedUnit<T>) => void,
    options: DecodeTimelineOptions = {},
  ) {
    this.zero = options.zeroRtpTime ?? null;
    this.maxDepth = options.maxReorderDepth ?? 4;
    this.depth = Math.min(options.initialReorderDepth ?? 0, this.maxDepth);
    this.maxJump = options.maxJump ?? 900_000;
  }

  push(unit: T, rtpTime: number): void {
    if (!this.started) {
      this.started = true;
      this.zero ??= rtpTime;
      this.extended = timestampDelta(rtpTime, this.zero);
    } else {
      const step = timestampDelta(rtpTime, this.lastRtp);
      if (Math.abs(step) > this.maxJump) {
        this.discontinuities++;
        this.extended += this.spacing;
      } else {
        this.extended += step;
        if (step > 0) this.spacing = step;
      }
    }
    this.lastRtp = rtpTime;
    const pts = this.extended;
    if (pts < 0) {
      this.dropped++;
      return;
    }
    let later = 0;
    for (const seen of this.recent) if (seen > pts) later++;
    this.depth = Math.min(this.maxDepth, Math.max(this.depth, later));
    this.recent.push(pts);
    if (this.recent.length > this.maxDepth + 1) this.recent.shift();
    this.waiting.push({ unit, pts });
    insertSorted(this.sortedPts, pts);
    while (this.waiting.length > this.depth) this.date();
  }

  /** Hands on every unit still waiting (end of stream); the last one's duration repeats the one before. */
  flush(lastDuration?: number): void {
    while (this.waiting.length > 0) this.date();
    if (this.dated) {
      this.emitDated(lastDuration ?? 0);
      this.dated = null;
    }
  }

  private date(): void {
    const next = this.waiting.shift() as Pending<T>;
    const candidate = this.sortedPts.shift() as number;
    const dts = Math.max(candidate, this.lastDts + 1);
    if (this.dated) this.emitDated(dts - this.dated.dts);
    this.lastDts = dts;
    this.dated = { unit: next.unit, pts: next.pts, dts };
  }

  private emitDated(duration: number): void {
    const d = this.dated as { unit: T; pts: number; dts: number };
    const useDuration = duration > 0 ? duration : this.lastDuration;
    this.lastDuration = useDuration;
    this.emit({ unit: d.unit, dts: d.dts, compositionOffset: d.pts - d.dts, duration: useDuration });
  }
}

function insertSorted(list: number[], value: number): void {
  let i = list.length;
  while (i > 0 && (list[i - 1] as number) > value) i--;
  list.splice(i, 0, value);
}
