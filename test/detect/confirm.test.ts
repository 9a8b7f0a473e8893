import { describe, expect, it } from 'vitest';
import { CheckQueue } from '../../src/detect/check-queue.js';
import { bestFramesSoFar, confirm, confirmSoFar, judgeCheck, median } from '../../src/detect/confirm.js';
import type { Category, Detection, RawDetection } from '../../src/detect/types.js';

const box = { x: 0.4, y: 0.3, w: 0.1, h: 0.4 };
const det = (category: Category, score: number): Detection => ({
  label: category === 'human' ? 'person' : 'car',
  category,
  score,
  box,
});

describe('median', () => {
  it.each([
    [[], 0],
    [[0.5], 0.5],
    [[0.9, 0, 0.6], 0.6],
    [[0.2, 0.8], 0.5],
  ])('median(%j) = %d', (values, expected) => expect(median(values)).toBeCloseTo(expected, 9));
});

describe('confirm: the median over the frames of the best score per frame >= threshold', () => {
  it.each([
    ['a person in all three frames', [[det('human', 0.5)], [det('human', 0.6)], [det('human', 0.55)]], 'human', 1],
    ['one lucky frame is not enough', [[det('human', 0.9)], [], []], null, null],
    ['two of three frames are', [[det('human', 0.6)], [], [det('human', 0.7)]], 'human', 2],
    [
      'scores below the threshold in most frames',
      [[det('human', 0.4)], [det('human', 0.9)], [det('human', 0.3)]],
      null,
      null,
    ],
    ['a vehicle alone', [[det('vehicle', 0.8)], [det('vehicle', 0.8)], [det('vehicle', 0.9)]], 'vehicle', 2],
    [
      'a person and a car: human is the more specific type',
      [[det('vehicle', 0.9), det('human', 0.6)], [det('vehicle', 0.9), det('human', 0.6)], [det('human', 0.5)]],
      'human',
      0,
    ],
    ['no frames', [], null, null],
  ] as const)('%s → %s', (_name, frames, type, bestFrame) => {
    const v = confirm(frames, 0.5);
    expect(v.type).toBe(type);
    expect(v.bestFrame).toBe(bestFrame);
    if (type === null) expect(v.detections).toEqual([]);
    else expect(v.detections.some((d) => d.category === type)).toBe(true);
  });
  it('carries every confirmed category of the best frame, best first', () => {
    const frames = [
      [det('vehicle', 0.9), det('human', 0.6)],
      [det('vehicle', 0.8), det('human', 0.6)],
      [det('vehicle', 0.7)],
    ];
    expect(confirm(frames, 0.5).detections.map((d) => [d.category, d.score])).toEqual([
      ['vehicle', 0.9],
      ['human', 0.6],
    ]);
  });
});

describe('confirmSoFar: the verdict of all frames, once the first ones settle it', () => {
  const h = (score: number) => [det('human', score)];
  const v = (score: number) => [det('vehicle', score)];
  it.each([
    ['one frame of three: never settled', [h(0.9)], 3, 'open'],
    ['no frame: never settled', [], 3, 'open'],
    ['two that agree on a person', [h(0.6), h(0.7)], 3, 'human'],
    ['two that agree on nothing', [[], h(0.3)], 3, null],
    ['two that disagree: the third decides', [h(0.9), []], 3, 'open'],
    [
      'a person settled, a car still open: the detections to keep are not known yet',
      [[...h(0.6), ...v(0.6)], h(0.6)],
      3,
      'open',
    ],
    ['a person in two, a car in none', [[...h(0.6), ...v(0.2)], h(0.6)], 3, 'human'],
    ['a car in two, nobody', [v(0.6), v(0.9)], 3, 'vehicle'],
    ['all three seen: confirm()', [h(0.9), [], []], 3, null],
    ['five frames, three agree', [h(0.6), h(0.6), h(0.7)], 5, 'human'],
  ] as const)('%s → %s', (_name, frames, total, expected) => {
    const verdict = confirmSoFar(frames, total, 0.5);
    if (expected === 'open') return expect(verdict).toBeNull();
    expect(verdict?.type).toBe(expected);
  });

  it('whenever it settles early, it says what confirm() says of all frames, whatever the rest score (seeded sweep)', () => {
    const scores = [0, 0.3, 0.5, 0.7];
    const frameOf = (i: number) => [...(i % 4 ? h(scores[i % 4]!) : []), ...(i >> 2 ? v(scores[i >> 2]!) : [])];
    for (let a = 0; a < 16; a++) {
      for (let b = 0; b < 16; b++) {
        const early = confirmSoFar([frameOf(a), frameOf(b)], 3, 0.5);
        if (!early) continue;
        for (let c = 0; c < 16; c++) expect(confirm([frameOf(a), frameOf(b), frameOf(c)], 0.5).type).toBe(early.type);
      }
    }
  });
});

describe("bestFramesSoFar: the frames that may still be a category's best", () => {
  it.each([
    [[], []],
    [[[]], []],
    [[[det('human', 0.6)], [det('human', 0.6)]], [0]], // a tie: the first, as the thumbnail takes it
    [[[det('human', 0.6)], [det('human', 0.8)], []], [1]],
    [
      [[det('human', 0.6)], [det('vehicle', 0.5)], [det('human', 0.7), det('vehicle', 0.4)]],
      [1, 2],
    ],
    [[[det('human', 0.9), det('vehicle', 0.9)], [det('human', 0.5)]], [0]],
  ])('%j → %j', (frames, best) => {
    expect([...bestFramesSoFar(frames)].sort()).toEqual(best);
  });

  it('a frame left out is never the best of more frames (random frames, the full argmax as reference)', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let run = 0; run < 300; run++) {
      const frames: Detection[][] = Array.from({ length: 1 + Math.floor(rand() * 5) }, () =>
        (['human', 'vehicle'] as const).filter(() => rand() < 0.5).map((c) => det(c, Math.round(rand() * 4) / 4)),
      );
      const dropped = new Set<number>();
      for (let n = 1; n <= frames.length; n++) {
        const best = bestFramesSoFar(frames.slice(0, n));
        for (let i = 0; i < n; i++) if (!best.has(i)) dropped.add(i);
      }
      for (const i of bestFramesSoFar(frames)) expect(dropped.has(i)).toBe(false);
    }
  });
});

describe('judgeCheck', () => {
  const labels = { human: ['person'], vehicle: ['car', 'truck'] };
  const raw = (label: string, score: number, b = box): RawDetection => ({ label, score, box: b });
  const rules = {
    labels,
    minScore: 0.3,
    threshold: 0.5,
    zones: {
      porch: [
        [0, 0.5],
        [0.5, 0.5],
        [0.5, 1],
        [0, 1],
      ] as [number, number][],
    },
    requiredZones: [] as string[],
  };

  it('maps labels, merges car and truck on one object, and confirms', () => {
    const frames = [[raw('car', 0.6), raw('truck', 0.55), raw('dog', 0.9)], [raw('car', 0.6)], [raw('truck', 0.5)]];
    const v = judgeCheck(frames, rules);
    expect(v.type).toBe('vehicle');
    expect(v.detections.map((d) => d.label)).toEqual(['car']);
  });
  it('drops detections below min_score before the median', () => {
    expect(
      judgeCheck([[raw('person', 0.29)], [raw('person', 0.29)], [raw('person', 0.29)]], { ...rules, threshold: 0.2 })
        .type,
    ).toBeNull();
  });
  it('with required_zones, a person standing outside them does not count', () => {
    const onPorch = { x: 0.1, y: 0.3, w: 0.2, h: 0.6 };
    const onSidewalk = { x: 0.7, y: 0.3, w: 0.2, h: 0.6 };
    const zoned = { ...rules, requiredZones: ['porch'] };
    expect(judgeCheck([[raw('person', 0.7, onSidewalk)], [raw('person', 0.7, onSidewalk)]], zoned).type).toBeNull();
    expect(judgeCheck([[raw('person', 0.7, onPorch)], [raw('person', 0.7, onPorch)]], zoned).type).toBe('human');
  });
});

describe('CheckQueue', () => {
  it('drops the oldest pending check of the busiest camera when full', () => {
    const q = new CheckQueue<string>(4);
    expect(q.push('a', 'a1')).toEqual([]);
    expect(q.push('b', 'b1')).toEqual([]);
    expect(q.push('a', 'a2')).toEqual([]);
    expect(q.push('a', 'a3')).toEqual([]);
    expect(q.push('c', 'c1')).toEqual(['a1']);
    // a and b have 2 each: b1 waited longer than a2.
    expect(q.push('b', 'b2')).toEqual(['b1']);
    // a and c have 2 each: a2 is the oldest.
    expect(q.push('c', 'c2')).toEqual(['a2']);
    expect(q.size).toBe(4);
    expect(q.drain()).toEqual(['a3', 'c1', 'b2', 'c2']);
  });
  it('ties go to the camera whose oldest check is oldest', () => {
    const q = new CheckQueue<string>(2);
    q.push('a', 'a1');
    q.push('b', 'b1');
    expect(q.push('c', 'c1')).toEqual(['a1']);
    expect(q.shift()).toBe('b1');
    expect(q.perCamera()).toEqual(new Map([['c', 1]]));
  });
  it('refuses a capacity below 1', () => {
    expect(() => new CheckQueue(0)).toThrow(RangeError);
  });
});
