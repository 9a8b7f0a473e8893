import type { AudioFrame, VideoAccessUnit } from '../access-unit.js';
import type { TimedUnit } from '../fmp4/decode-timeline.js';
import { fragmentChunks, type FragmentSample, type FragmentTrackRun, type LaidOutSample } from '../fmp4/fragment.js';
import { SampleData } from '../fmp4/sample-data.js';
import { audioSample } from '../fmp4/samples.js';
import type { Fmp4Track } from '../fmp4/track.js';
import { cutBefore } from './part-cutter.js';

// Dated samples of one camera profile into parts: the video track decides the cuts (part-cutter.ts),
// each part is one fragment (moof + mdat) holding the video samples and the audio frames that start
// before the part's video ends, and goes to the sink (LL-HLS's live window, a footage file). Both tracks' decode
// times count from the same instant (decode-timeline.ts with a zero from rtp-clock.ts), so comparing
// them in seconds lines the audio up with the video. Nothing is output before the first keyframe.
// A picture's bytes go into the part's sample data as it comes (sample-data.ts): nothing of it is
// held until the part is cut.
// Audio that arrives before the first keyframe waits for it, and what starts earlier is dropped.
// The caller chooses a PART-TARGET at least one frame interval long (a part holds one sample at least).

export interface PartAssemblerStats {
  parts: number;
  /** Video samples before the first keyframe, and audio frames that start before it. */
  droppedBeforeKeyframe: number;
  /** Audio frames dropped because no video came to close a part for them. */
  droppedAudio: number;
}

/** Audio frames waiting for a part at most (about 10 s of AAC at 48 kHz): bounded if the video stalls. */
const MAX_PENDING_AUDIO = 500;

/** One fragment cut from the stream. */
export interface NewPart {
  /**
   * The fragment (moof + mdat) as a list of buffers, the video's bytes a view of the assembler's
   * buffer, which the next part reuses: valid only until addPart returns. A sink that keeps the part
   * keeps a copy (keepPart); one that writes it at once writes the list.
   */
  chunks: readonly Buffer[];
  /** Bytes of the fragment. */
  length: number;
  /** Seconds. */
  duration: number;
  /** Starts with a keyframe. */
  independent: boolean;
  /**
   * The part-cutter said 'segment': the part starts a new segment (a new group of pictures, or a cut inside a long
   * one).
   */
  startsSegment: boolean;
  /** Wall clock of its first sample, ms since the epoch (pushVideo says how it is told). */
  wallClock: number;
  /** Decode time of its first video sample from the timeline's zero, in the video timescale. */
  decodeTime: number;
  /**
   * What closed it: the next keyframe or the end of the stream (its group of pictures is complete),
   * or its length, or a reader that wanted what had come so far (cut()): more of the same group of
   * pictures follows in the next part.
   */
  closedBy: 'keyframe' | 'length' | 'cut' | 'flush';
  /**
   * When the keyframe that closed it reached the gateway (wall clock, ms): the part was all there by
   * then. Null when closed otherwise, or when pushVideo is not told arrivals.
   */
  closedAt: number | null;
}

/** Where the parts go. */
export interface PartSink {
  addPart(part: NewPart): unknown;
}

/** A part with its own copy of the fragment, for a sink that keeps it beyond addPart. */
export interface KeptPart extends Omit<NewPart, 'chunks' | 'length'> {
  bytes: Buffer;
}

export function keepPart({ chunks, length, ...rest }: NewPart): KeptPart {
  return { ...rest, bytes: Buffer.concat(chunks, length) };
}

export class PartAssembler {
  readonly stats: PartAssemblerStats = { parts: 0, droppedBeforeKeyframe: 0, droppedAudio: 0 };
  private readonly partTarget: number;
  private readonly targetDuration: number;
  private video: Array<{ dts: number; sample: LaidOutSample }> = [];
  private readonly videoData = new SampleData();
  private audio: Array<{ dts: number; sample: FragmentSample }> = [];
  private started = false;
  private partElapsed = 0;
  private segmentElapsed = 0;
  private nextStartsSegment = true;
  private sequence = 1;
  private partWallClock = 0;

  constructor(
    private readonly sink: PartSink,
    private readonly tracks: { video: Fmp4Track; audio: Fmp4Track | null },
    options: { partTarget: number; targetDuration: number },
    private readonly wallClock: () => number,
  ) {
    this.partTarget = Math.round(options.partTarget * tracks.video.timescale);
    this.targetDuration = Math.round(options.targetDuration * tracks.video.timescale);
  }

  /**
   * `arrivedMs`: the wall clock at which the picture reached the gateway (the timeline hands a picture on
   * only once the next one, and any it reorders with, has come: the clock now would date it a frame or
   * more late). A part is dated by the earliest start its pictures imply, each one's arrival less its
   * media time into the part: a picture held up on its way (the group of pictures a relay caches and
   * hands a new reader at once, a busy moment of the event loop) does not date the part late. Without
   * arrival times, by the clock when its first picture is pushed.
   */
  pushVideo(timed: TimedUnit<VideoAccessUnit>, arrivedMs?: number): void {
    if (!this.started) {
      if (!timed.unit.keyframe) {
        this.stats.droppedBeforeKeyframe++;
        return;
      }
      this.started = true;
      // Audio waiting from before the first picture has nothing to play with.
      const startSeconds = timed.dts / this.tracks.video.timescale;
      const audioTrack = this.tracks.audio;
      const before = audioTrack ? this.audio.findIndex((a) => a.dts / audioTrack.timescale >= startSeconds) : 0;
      const drop = before < 0 ? this.audio.length : before;
      this.audio.splice(0, drop);
      this.stats.droppedBeforeKeyframe += drop;
    }
    const cut = cutBefore(
      { partElapsed: this.partElapsed, segmentElapsed: this.segmentElapsed },
      { keyframe: timed.unit.keyframe, duration: timed.duration },
      { partTarget: this.partTarget, targetDuration: this.targetDuration },
    );
    if (cut !== 'none')
      this.closePart(
        cut === 'segment',
        timed.unit.keyframe ? 'keyframe' : 'length',
        timed.unit.keyframe ? (arrivedMs ?? null) : null,
      );
    const first = this.video[0];
    if (!first) this.partWallClock = arrivedMs ?? this.wallClock();
    else if (arrivedMs !== undefined) {
      const intoPart = ((timed.dts - first.dts) * 1000) / this.tracks.video.timescale;
      this.partWallClock = Math.min(this.partWallClock, arrivedMs - intoPart);
    }
    const size = this.videoData.appendNalus(timed.unit.nalus);
    this.video.push({
      dts: timed.dts,
      sample: {
        duration: timed.duration,
        compositionOffset: timed.compositionOffset,
        keyframe: timed.unit.keyframe,
        size,
      },
    });
    this.partElapsed += timed.duration;
    this.segmentElapsed += timed.duration;
  }

  pushAudio(timed: TimedUnit<AudioFrame>): void {
    this.audio.push({ dts: timed.dts, sample: audioSample(timed) });
    if (this.audio.length > MAX_PENDING_AUDIO) {
      this.audio.shift();
      this.stats.droppedAudio++;
    }
  }

  /**
   * Closes the part being filled now, its group of pictures going on in the next part: for a reader
   * that needs the pictures received so far without waiting for the keyframe that ends the group.
   */
  cut(): void {
    if (this.video.length > 0) this.closePart(false, 'cut', null);
  }

  /** Closes the part being filled (end of stream, or a test that wants what it has). */
  flush(): void {
    if (this.video.length > 0) this.closePart(false, 'flush', null);
  }

  private closePart(segmentEnds: boolean, closedBy: NewPart['closedBy'], closedAt: number | null): void {
    const first = this.video[0];
    if (!first) {
      // Nothing since a cut(): the segment still ends here.
      if (segmentEnds) {
        this.nextStartsSegment = true;
        this.segmentElapsed = 0;
      }
      return;
    }
    const video = this.tracks.video;
    const endSeconds = (first.dts + this.partElapsed) / video.timescale;
    const runs: FragmentTrackRun[] = [
      {
        track: video,
        baseDecodeTime: first.dts,
        samples: this.video.map((v) => v.sample),
        data: this.videoData.view(),
      },
    ];
    const audioTrack = this.tracks.audio;
    if (audioTrack) {
      let n = 0;
      while (n < this.audio.length && (this.audio[n] as { dts: number }).dts / audioTrack.timescale < endSeconds) n++;
      const taken = this.audio.splice(0, n);
      const head = taken[0];
      if (head) runs.push({ track: audioTrack, baseDecodeTime: head.dts, samples: taken.map((a) => a.sample) });
    }
    const chunks = fragmentChunks(this.sequence++, runs);
    this.sink.addPart({
      chunks,
      length: chunks.reduce((sum, c) => sum + c.length, 0),
      duration: this.partElapsed / video.timescale,
      independent: first.sample.keyframe,
      startsSegment: this.nextStartsSegment,
      wallClock: this.partWallClock,
      decodeTime: first.dts,
      closedBy,
      closedAt,
    });
    this.stats.parts++;
    this.videoData.clear();
    this.video = [];
    this.partElapsed = 0;
    this.nextStartsSegment = segmentEnds;
    if (segmentEnds) this.segmentElapsed = 0;
  }
}
