import { describe, expect, it } from 'vitest';
import type { BlockingRequest } from '../../../src/media/hls/blocking-request.js';
import { HlsRequestError } from '../../../src/media/hls/errors.js';
import { LiveWindow, type LiveWindowOptions } from '../../../src/media/hls/live-window.js';
import { cutBefore, type Cut } from '../../../src/media/mux/part-cutter.js';

const OPTIONS: LiveWindowOptions = { partTarget: 0.5, targetDuration: 2, maxSegments: 3, maxBytes: 1 << 20 };

/** Segments of `partsPerSegment` parts of 0.5 s, 100 bytes each, starting at 09:00:00. */
function filled(segments: number, partsPerSegment = 4, options = OPTIONS): LiveWindow {
  const w = new LiveWindow(options);
  for (let s = 0; s < segments; s++) {
    for (let p = 0; p < partsPerSegment; p++) {
      w.addPart({
        bytes: Buffer.alloc(100, s),
        duration: 0.5,
        independent: p === 0,
        startsSegment: p === 0,
        wallClock: Date.UTC(2026, 0, 1, 9) + (s * partsPerSegment + p) * 500,
      });
    }
  }
  return w;
}

describe('cutBefore', () => {
  const limits = { partTarget: 45_000, targetDuration: 180_000 };
  it.each<[string, number, number, boolean, number, Cut]>([
    ['the first sample', 0, 0, true, 3600, 'none'],
    ['a sample that fits the part', 36_000, 36_000, false, 3600, 'none'],
    ['a sample that would overfill the part', 43_200, 43_200, false, 3600, 'part'],
    ['a keyframe: a new GOP, a new segment', 10_800, 100_800, true, 3600, 'segment'],
    ['a GOP longer than the target duration', 10_800, 178_000, false, 3600, 'segment'],
    ['a keyframe at a part boundary', 0, 90_000, true, 3600, 'segment'],
  ])('%s', (_name, partElapsed, segmentElapsed, keyframe, duration, cut) => {
    expect(cutBefore({ partElapsed, segmentElapsed }, { keyframe, duration }, limits)).toBe(cut);
  });
});

describe('LiveWindow', () => {
  it('numbers segments and parts and lists the window as a media playlist', () => {
    const w = filled(2);
    w.addPart({
      bytes: Buffer.alloc(10),
      duration: 0.5,
      independent: true,
      startsSegment: true,
      wallClock: Date.UTC(2026, 0, 1, 9, 0, 4),
    });
    const p = w.playlist();
    expect(p.mediaSequence).toBe(0);
    expect(p.segments.map((s) => [s.uri, s.duration, s.parts.map((x) => x.uri)])).toEqual([
      ['seg0.mp4', 2, ['part0.mp4', 'part1.mp4', 'part2.mp4', 'part3.mp4']],
      ['seg1.mp4', 2, ['part4.mp4', 'part5.mp4', 'part6.mp4', 'part7.mp4']],
    ]);
    expect(p.openParts).toEqual([{ duration: 0.5, uri: 'part8.mp4', independent: true }]);
    expect(p.openProgramDateTime).toBe(Date.UTC(2026, 0, 1, 9, 0, 4));
    expect(p.preloadHintUri).toBe('part9.mp4');
    expect(p.partHoldBack).toBe(1.5);
    expect(w.part(9)).toBe('wait');
    expect(w.part(8)).toMatchObject({ msn: 2, index: 0 });
    expect(w.segment(1)!.map((x) => x.id)).toEqual([4, 5, 6, 7]);
    expect(w.segment(2)).toBeUndefined(); // still open
  });

  it('keeps at most maxSegments complete segments and drops the parts of older ones from the playlist', () => {
    const w = filled(6); // segments 0–4 complete, 5 open
    const p = w.playlist();
    expect(p.mediaSequence).toBe(2);
    expect(p.segments.map((s) => s.uri)).toEqual(['seg2.mp4', 'seg3.mp4', 'seg4.mp4']);
    expect(w.stats).toEqual({ segments: 4, parts: 16, bytes: 1600 });
    expect(w.evictedSegments).toBe(2);
    expect(w.part(7)).toBeUndefined();
    expect(w.segment(1)).toBeUndefined();
    expect(w.part(8)).toMatchObject({ msn: 2, index: 0 });
    // Parts for the last 3 target durations (6 s) of media: 2 s open, then seg4 and seg3; not seg2.
    expect(p.segments.map((s) => s.parts.length)).toEqual([0, 4, 4]);
  });

  it('stays within maxBytes by dropping the oldest complete segments', () => {
    const w = filled(5, 4, { ...OPTIONS, maxSegments: 10, maxBytes: 1000 });
    expect(w.stats.bytes).toBeLessThanOrEqual(1000);
    expect(w.playlist().mediaSequence).toBe(3);
  });

  it('keeps keepSeconds of complete segments when that is fewer than maxSegments', () => {
    // 2 s segments, 4.5 s to keep: the oldest goes once the others hold 4.5 s, so three stay.
    const w = filled(8, 4, { ...OPTIONS, maxSegments: 10, keepSeconds: 4.5 });
    expect(w.playlist().segments.map((s) => s.uri)).toEqual(['seg4.mp4', 'seg5.mp4', 'seg6.mp4']);
    expect(w.evictedSegments).toBe(4);
  });

  it('lists parts only for the last three target durations of media', () => {
    const w = filled(4, 4, { ...OPTIONS, targetDuration: 2, partTarget: 0.5, maxSegments: 10 });
    // Segments 0..2 complete (+ segment 3 open, 2 s): parts kept while less than 6 s of media is newer.
    expect(w.playlist().segments.map((s) => s.parts.length)).toEqual([0, 4, 4]);
  });

  it.each<[string, BlockingRequest, 'ready' | 'wait']>([
    ['a segment already complete', { msn: 1, part: null }, 'ready'],
    ['a segment older than the window', { msn: 0, part: 2 }, 'ready'],
    ['a part already in the open segment', { msn: 2, part: 1 }, 'ready'],
    ['the next part of the open segment', { msn: 2, part: 2 }, 'wait'],
    ['the open segment whole', { msn: 2, part: null }, 'wait'],
    ['the next segment', { msn: 3, part: null }, 'wait'],
    ['the first part of the segment after next', { msn: 4, part: 0 }, 'wait'],
  ])('blocking request for %s: %s', (_name, request, expected) => {
    const w = filled(2);
    w.addPart({ bytes: Buffer.alloc(1), duration: 0.5, independent: true, startsSegment: true, wallClock: 0 });
    w.addPart({ bytes: Buffer.alloc(1), duration: 0.5, independent: false, startsSegment: false, wallClock: 0 });
    expect(w.readiness(request)).toBe(expected);
  });

  it.each<[string, BlockingRequest]>([
    ['a segment three past the live edge', { msn: 5, part: null }],
    ['an absurd segment', { msn: 2 ** 53 - 1, part: null }],
    ['a part past the Advance Part Limit', { msn: 2, part: 9 }],
    ['an absurd part', { msn: 3, part: 1_000_000 }],
  ])('refuses %s with an HlsRequestError', (_name, request) => {
    const w = filled(2);
    w.addPart({ bytes: Buffer.alloc(1), duration: 0.5, independent: true, startsSegment: true, wallClock: 0 });
    expect(() => w.readiness(request)).toThrow(HlsRequestError);
  });

  it('waits for the first part of an empty window, and refuses a request far past it', () => {
    const w = new LiveWindow(OPTIONS);
    expect(w.readiness({ msn: 0, part: 0 })).toBe('wait');
    expect(() => w.readiness({ msn: 2, part: null })).toThrow(HlsRequestError);
    expect(w.playlist().preloadHintUri).toBe('part0.mp4');
  });

  it('leaves the window as it was when it refuses a part', () => {
    const w = filled(1);
    const before = { stats: w.stats, playlist: w.playlist() };
    expect(() =>
      w.addPart({ bytes: Buffer.alloc(5), duration: 0.5, independent: false, startsSegment: false, wallClock: 0 }),
    ).toThrow(RangeError);
    expect({ stats: w.stats, playlist: w.playlist() }).toEqual(before);
  });

  it.each<[string, () => unknown]>([
    [
      'a part longer than PART-TARGET',
      () =>
        new LiveWindow(OPTIONS).addPart({
          bytes: Buffer.alloc(1),
          duration: 0.6,
          independent: true,
          startsSegment: true,
          wallClock: 0,
        }),
    ],
    ['a segment longer than the target duration', () => filled(1, 5)],
    ['a fractional target duration', () => new LiveWindow({ ...OPTIONS, targetDuration: 1.5 })],
    ['a part target above the target duration', () => new LiveWindow({ ...OPTIONS, partTarget: 3 })],
  ])('refuses %s', (_name, make) => {
    expect(make).toThrow(RangeError);
  });
});
