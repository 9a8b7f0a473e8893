import { describe, expect, it } from 'vitest';
import { encodeFragmentTable, type FragmentEntry } from '../../../src/media/footage/fragment-table.js';
import { footageSpans, planExport } from '../../../src/media/footage/range-plan.js';
import type { IndexedFootageFile } from '../../../src/store/footage.js';

// Files of 2 s fragments (keyframe each), 10 s a file, as the writer makes them.
let nextId = 1;
function file(startMs: number, fragments: FragmentEntry[], zeroMs = startMs): IndexedFootageFile {
  const ms = fragments.reduce((sum, f) => sum + f.duration / 90, 0);
  return {
    id: nextId++,
    deviceId: 'd',
    profile: 'sub',
    name: `d/x/sub-${startMs}.mp4`,
    startMs,
    endMs: startMs + ms,
    zeroMs,
    bytes: 100 + fragments.reduce((s, f) => s + f.bytes, 0),
    initBytes: 100,
    fragments: encodeFragmentTable(fragments),
  };
}
const gop = (keyframe = true): FragmentEntry => ({ bytes: 1000, duration: 180_000, keyframe });
const T = 1_800_000_000_000;

describe('footageSpans', () => {
  it('merges files that touch, keeps gaps, clips to the window', () => {
    const files = [file(T, [gop(), gop()]), file(T + 4000, [gop()]), file(T + 10_000, [gop()])];
    expect(footageSpans(files, T - 1000, T + 100_000)).toEqual([
      { startMs: T, endMs: T + 6000 },
      { startMs: T + 10_000, endMs: T + 12_000 },
    ]);
    expect(footageSpans(files, T + 1000, T + 11_000)).toEqual([
      { startMs: T + 1000, endMs: T + 6000 },
      { startMs: T + 10_000, endMs: T + 11_000 },
    ]);
    expect(footageSpans(files, T + 6000, T + 10_000)).toEqual([]);
  });
});

describe('planExport', () => {
  const same = () => true;

  it('starts at the keyframe at or before start and ends with the last fragment starting before end', () => {
    const a = file(T, [gop(), gop(false), gop()]);
    const b = file(T + 6000, [gop(), gop()]);
    const plan = planExport([a, b], T + 3000, T + 8000, same);
    expect(plan?.fragments.map((f) => [f.file.id, f.startMs])).toEqual([
      [a.id, T],
      [a.id, T + 2000],
      [a.id, T + 4000],
      [b.id, T + 6000],
    ]);
    expect(plan).toMatchObject({ initFile: a, startMs: T, endMs: T + 8000, bytes: 100 + 4 * 1000 });
  });

  it('starts after a gap with the first keyframe after start, and is null where there is nothing', () => {
    const a = file(T, [gop()]);
    const b = file(T + 60_000, [gop(), gop()]);
    expect(planExport([a, b], T + 30_000, T + 70_000, same)?.fragments.map((f) => f.startMs)).toEqual([
      T + 60_000,
      T + 62_000,
    ]);
    expect(planExport([a, b], T + 3000, T + 50_000, same)).toBeNull();
    expect(planExport([], T, T + 1000, same)).toBeNull();
  });

  it('stops before a file of another run whose init differs', () => {
    const a = file(T, [gop()], T - 5);
    const b = file(T + 2000, [gop()], T - 5);
    const c = file(T + 9000, [gop()], T + 9000);
    expect(planExport([a, b, c], T, T + 20_000, () => false)?.fragments.map((f) => f.file.id)).toEqual([a.id, b.id]);
    expect(planExport([a, b, c], T, T + 20_000, same)?.fragments.map((f) => f.file.id)).toEqual([a.id, b.id, c.id]);
  });
});
