import type { BlockingRequest } from './blocking-request.js';
import type { KeptPart } from '../mux/part-assembler.js';
import { HlsRequestError } from './errors.js';
import type { MediaPlaylist, PlaylistPart, PlaylistSegment } from './playlist.js';

// The parts and segments of one live HLS stream, in memory and bounded: the state a media playlist
// is written from, what a part or segment request is answered with, and whether a blocking request
// can be answered now (RFC 8216bis 6.2.5.2). Pure: the server feeds parts in (each a moof+mdat from
// fmp4/fragment.ts) and holds blocked requests until readiness says 'ready'.
//
// Parts are numbered by one counter over the whole stream (URIs part<id>.mp4), so the preload hint
// names the next part before anyone knows whether it starts a new segment. A segment's bytes are
// its parts' bytes in order.

export interface LiveWindowOptions {
  /** PART-TARGET, seconds. */
  partTarget: number;
  /** EXT-X-TARGETDURATION, whole seconds: no segment is longer (see mux/part-cutter.ts). */
  targetDuration: number;
  /** Complete segments kept. */
  maxSegments: number;
  /** Bytes of parts kept; the oldest complete segments go first. */
  maxBytes: number;
  /**
   * Seconds of complete segments kept when that takes fewer than maxSegments: the oldest goes once
   * the others still hold this much (RFC 8216bis 6.2.2 wants three target durations listed).
   */
  keepSeconds?: number;
}

export interface LivePart {
  id: number;
  msn: number;
  /** Place in its segment, from 0 (the _HLS_part of a blocking request). */
  index: number;
  duration: number;
  independent: boolean;
  bytes: Buffer;
}

interface LiveSegment {
  msn: number;
  parts: LivePart[];
  duration: number;
  programDateTime: number;
  complete: boolean;
}

export interface LiveNames {
  init: string;
  segment(msn: number): string;
  part(id: number): string;
}

export const DEFAULT_NAMES: LiveNames = {
  init: 'init.mp4',
  segment: (msn) => `seg${msn}.mp4`,
  part: (id) => `part${id}.mp4`,
};

export type Readiness = 'ready' | 'wait';

export class LiveWindow {
  private readonly segments: LiveSegment[] = [];
  private readonly partsById = new Map<number, LivePart>();
  private nextPartId = 0;
  private bytes = 0;
  /** Segments and parts dropped to stay in bounds (for /metrics). */
  evictedSegments = 0;

  constructor(private readonly options: LiveWindowOptions) {
    if (
      !(options.partTarget > 0) ||
      !Number.isInteger(options.targetDuration) ||
      options.targetDuration < 1 ||
      options.partTarget > options.targetDuration
    ) {
      throw new RangeError('partTarget must be above 0 and at most the whole-second targetDuration');
    }
    if (!Number.isInteger(options.maxSegments) || options.maxSegments < 1)
      throw new RangeError('maxSegments must be at least 1');
  }

  get stats(): { segments: number; parts: number; bytes: number } {
    return { segments: this.segments.length, parts: this.partsById.size, bytes: this.bytes };
  }

  addPart(part: Omit<KeptPart, 'decodeTime' | 'closedBy' | 'closedAt'>): LivePart {
    if (!(part.duration > 0) || part.duration > this.options.partTarget + 1e-9)
      throw new RangeError(`part of ${part.duration} s with PART-TARGET ${this.options.partTarget}`);
    const last = this.segments[this.segments.length - 1];
    if (last && !last.complete && part.startsSegment) last.complete = true;
    let open = last;
    if (!open || open.complete) {
      open = { msn: last ? last.msn + 1 : 0, parts: [], duration: 0, programDateTime: part.wallClock, complete: false };
      this.segments.push(open);
    }
    if (open.duration + part.duration > this.options.targetDuration + 1e-6)
      throw new RangeError(`segment ${open.msn} would pass the target duration`);
    const stored: LivePart = {
      id: this.nextPartId++,
      msn: open.msn,
      index: open.parts.length,
      duration: part.duration,
      independent: part.independent,
      bytes: part.bytes,
    };
    open.parts.push(stored);
    open.duration += part.duration;
    this.partsById.set(stored.id, stored);
    this.bytes += part.bytes.length;
    this.evict();
    return stored;
  }

  /** The segment being filled, if a part has come. */
  private openSegment(): LiveSegment | undefined {
    const last = this.segments[this.segments.length - 1];
    return last && !last.complete ? last : undefined;
  }

  private evict(): void {
    const complete = (): number => this.segments.filter((s) => s.complete).length;
    const keep = this.options.keepSeconds;
    const moreThanKept = (): boolean => {
      if (keep === undefined) return false;
      const oldest = this.segments[0] as LiveSegment;
      const rest = this.segments.reduce((sum, s) => sum + (s.complete && s !== oldest ? s.duration : 0), 0);
      return rest >= keep;
    };
    while (
      (complete() > this.options.maxSegments || this.bytes > this.options.maxBytes || moreThanKept()) &&
      this.segments[0]?.complete
    ) {
      const gone = this.segments.shift() as LiveSegment;
      for (const p of gone.parts) {
        this.partsById.delete(p.id);
        this.bytes -= p.bytes.length;
      }
      this.evictedSegments++;
    }
  }

  /**
   * Whether a blocking playlist request can be answered now. An HlsRequestError (→ 400) when it asks
   * for a segment more than two past the last one in the playlist, or for a part further ahead than
   * the Advance Part Limit (three parts' worth of PART-TARGET, RFC 8216bis 6.2.5.2).
   */
  readiness(request: BlockingRequest): Readiness {
    const last = this.segments[this.segments.length - 1];
    const lastMsn = last ? last.msn : -1;
    if (request.msn > lastMsn + 2)
      throw new HlsRequestError(`_HLS_msn ${request.msn} is beyond the live edge (${lastMsn})`);
    const advanceParts = this.options.partTarget < 1 ? Math.floor(3 / this.options.partTarget) : 3;
    if (request.part !== null) {
      const lastPart = last && request.msn === last.msn && !last.complete ? last.parts.length - 1 : -1;
      const partsAhead =
        request.msn > lastMsn || (last?.complete ?? false) ? request.part + 1 : request.part - lastPart;
      if (partsAhead > advanceParts) throw new HlsRequestError(`_HLS_part ${request.part} is beyond the live edge`);
    }
    if (!last) return 'wait';
    if (request.msn < last.msn) return 'ready';
    if (request.msn > last.msn) return 'wait';
    if (last.complete) return 'ready';
    return request.part !== null && request.part < last.parts.length ? 'ready' : 'wait';
  }

  /** A part by id: its bytes, or 'wait' for the next one (the preload hint), or undefined when gone or unknown. */
  part(id: number): LivePart | 'wait' | undefined {
    if (id === this.nextPartId) return 'wait';
    return this.partsById.get(id);
  }

  /** A complete segment's parts, in order; undefined when not (or no longer) in the window. */
  segment(msn: number): LivePart[] | undefined {
    const s = this.segments.find((x) => x.msn === msn);
    return s?.complete ? s.parts : undefined;
  }

  /** The media playlist of the window now. */
  playlist(names: LiveNames = DEFAULT_NAMES): MediaPlaylist {
    const toPart = (p: LivePart): PlaylistPart => ({
      duration: p.duration,
      uri: names.part(p.id),
      independent: p.independent,
    });
    const complete = this.segments.filter((s) => s.complete);
    const open = this.openSegment();
    // Parts stay listed for the last three target durations of media (RFC 8216bis 4.4.4.9).
    const partHistory = 3 * this.options.targetDuration;
    let age = open?.duration ?? 0;
    const listed: PlaylistSegment[] = [];
    for (let i = complete.length - 1; i >= 0; i--) {
      const s = complete[i] as LiveSegment;
      listed.unshift({
        duration: s.duration,
        uri: names.segment(s.msn),
        programDateTime: s.programDateTime,
        parts: age < partHistory ? s.parts.map(toPart) : [],
      });
      age += s.duration;
    }
    const first = this.segments[0];
    const playlist: MediaPlaylist = {
      targetDuration: this.options.targetDuration,
      partTarget: this.options.partTarget,
      partHoldBack: 3 * this.options.partTarget,
      mediaSequence: first ? first.msn : 0,
      mapUri: names.init,
      segments: listed,
      openParts: open ? open.parts.map(toPart) : [],
      preloadHintUri: names.part(this.nextPartId),
    };
    if (open) playlist.openProgramDateTime = open.programDateTime;
    return playlist;
  }
}
