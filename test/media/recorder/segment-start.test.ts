import { describe, expect, it } from 'vitest';
import { seamlessDurations, segmentStartSeconds } from '../../../src/media/recorder/segment-start.js';
import { muxedWithG711 } from '../mux/synthetic-camera.js';

// The concat durations of a clip's segments: each segment file's earliest sample, read from its
// boxes, and the durations that make ffmpeg's joins seamless within a run.

describe('segmentStartSeconds', () => {
  it('reads the earliest sample of a segment file the muxer made (video and G.711 tracks)', () => {
    const { init, parts } = muxedWithG711(1.5);
    expect(parts.map((p) => segmentStartSeconds(Buffer.concat([init, p])))).toEqual([0, 0.5, 1]);
  });

  it.each([
    ['nothing', Buffer.alloc(0)],
    ['not boxes', Buffer.from('half a segment of a run that died')],
    ['a box claiming more than there is', Buffer.from('000000ff6d6f6f66', 'hex')],
  ])('%s → null', (_name, bytes) => {
    expect(segmentStartSeconds(bytes)).toBeNull();
  });
});

describe('seamlessDurations', () => {
  const e = (path: string, durationS: number) => ({ path, durationS });
  it.each([
    [
      'within a run: until the next one starts (an audio frame made the second start early)',
      [e('/s/r1-000000001.mp4', 1), e('/s/r1-000000002.mp4', 1), e('/s/r1-000000003.mp4', 1)],
      [10, 10.96, 12],
      [0.96, 1.04, 1],
    ],
    [
      'across runs: the last of a run keeps its own length',
      [e('/s/r1-000000007.mp4', 1), e('/s/r2-000000001.mp4', 0.8)],
      [50, 0.2],
      [1, 0.8],
    ],
    [
      'an unreadable start: its own length',
      [e('/s/r1-000000001.mp4', 1), e('/s/r1-000000002.mp4', 1)],
      [null, 4],
      [1, 1],
    ],
    [
      'the next starting no later (clock trouble): its own length',
      [e('/s/r1-000000001.mp4', 1), e('/s/r1-000000002.mp4', 1)],
      [4, 4],
      [1, 1],
    ],
  ] as const)('%s', (_name, entries, starts, durations) => {
    const out = seamlessDurations(entries, starts);
    expect(out.map((x) => x.path)).toEqual(entries.map((x) => x.path));
    out.forEach((x, i) => expect(x.durationS).toBeCloseTo(durations[i]!, 9));
  });
});
