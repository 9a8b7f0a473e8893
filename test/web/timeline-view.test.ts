import { describe, expect, it } from 'vitest';
import {
  chunksOf,
  clampView,
  fractionOf,
  keyStepMs,
  MAX_SPAN_MS,
  mergeSpans,
  MIN_SPAN_MS,
  neighbourEvent,
  ticks,
  timeAt,
  zoomed,
} from '../../web/src/timeline-view.js';

// The footage timeline's arithmetic (web/src/timeline-view.ts): pure, so without a browser.

const H = 3_600_000;
const T = Date.UTC(2026, 10, 29, 12);
const bounds = { minMs: T - 7 * 24 * H, maxMs: T + H };

describe('the timeline view', () => {
  it('maps moments to places along the bar and back, the playhead in the middle', () => {
    const view = { centerMs: T, spanMs: 2 * H };
    expect(fractionOf(view, T)).toBe(0.5);
    expect(fractionOf(view, T - H)).toBe(0);
    expect(fractionOf(view, T + H)).toBe(1);
    for (const f of [0, 0.1, 0.5, 0.93, 1]) expect(fractionOf(view, timeAt(view, f))).toBeCloseTo(f, 12);
  });

  it('zooms around the playhead, never past five minutes or two weeks across, and keeps the moment inside the bounds', () => {
    const view = { centerMs: T, spanMs: H };
    expect(zoomed(view, 0.5, bounds)).toEqual({ centerMs: T, spanMs: H / 2 });
    expect(zoomed(view, 1e-6, bounds).spanMs).toBe(MIN_SPAN_MS);
    expect(zoomed(view, 1e6, bounds).spanMs).toBe(MAX_SPAN_MS);
    expect(clampView({ centerMs: T + 10 * H, spanMs: H }, bounds).centerMs).toBe(bounds.maxMs);
    expect(clampView({ centerMs: T - 30 * 24 * H, spanMs: H }, bounds).centerMs).toBe(bounds.minMs);
  });

  it('steps the arrow keys by a sixtieth of the bar, in whole seconds, at least one', () => {
    expect(keyStepMs({ centerMs: T, spanMs: H })).toBe(60_000);
    expect(keyStepMs({ centerMs: T, spanMs: MIN_SPAN_MS })).toBe(5_000);
    expect(keyStepMs({ centerMs: T, spanMs: 1_000 })).toBe(1_000);
  });

  it('ticks at whole local minutes or hours, far enough apart for their labels, midnights marked', () => {
    for (const [spanMs, width] of [
      [MIN_SPAN_MS, 390],
      [H, 390],
      [6 * H, 1400],
      [3 * 24 * H, 390],
      [MAX_SPAN_MS, 1400],
    ] as const) {
      const view = { centerMs: T, spanMs };
      const marks = ticks(view, width);
      expect(marks.length, `${spanMs} on ${width}`).toBeGreaterThan(0);
      expect(marks.length).toBeLessThanOrEqual(Math.floor(width / 72) + 1);
      for (const t of marks) {
        expect(fractionOf(view, t.tMs)).toBeGreaterThanOrEqual(0);
        expect(fractionOf(view, t.tMs)).toBeLessThan(1);
        const d = new Date(t.tMs);
        expect(d.getSeconds()).toBe(0);
        expect(t.day).toBe(d.getHours() === 0 && d.getMinutes() === 0);
      }
      const gaps = marks.slice(1).map((t, i) => t.tMs - marks[i]!.tMs);
      expect(new Set(gaps).size).toBeLessThanOrEqual(2); // a DST change may make one gap differ
    }
    // Across midnight, the midnight is a tick of its own.
    const midnight = new Date(2026, 10, 29).getTime();
    expect(ticks({ centerMs: midnight, spanMs: 2 * H }, 1400).some((t) => t.day && t.tMs === midnight)).toBe(true);
  });

  it('asks for day-long slices aligned on the epoch, covering the window', () => {
    const day = 24 * H;
    const slices = chunksOf(T - 30 * H, T + H);
    expect(slices[0]!.startMs).toBeLessThanOrEqual(T - 30 * H);
    expect(slices.at(-1)!.endMs).toBeGreaterThanOrEqual(T + H);
    for (const s of slices) {
      expect(s.startMs % day).toBe(0);
      expect(s.endMs - s.startMs).toBe(day);
    }
  });

  it('merges spans that touch or overlap, in time order', () => {
    const spans = mergeSpans([
      { startMs: 50, endMs: 60 },
      { startMs: 0, endMs: 10 },
      { startMs: 10, endMs: 20 },
      { startMs: 15, endMs: 30 },
    ]);
    expect(spans).toEqual([
      { startMs: 0, endMs: 30 },
      { startMs: 50, endMs: 60 },
    ]);
  });

  it('finds the previous and next event, skipping the one at the playhead', () => {
    const events = [{ startMs: 10_000 }, { startMs: 50_000 }, { startMs: 90_000 }];
    expect(neighbourEvent(events, 50_000, -1)).toEqual({ startMs: 10_000 });
    expect(neighbourEvent(events, 50_500, 1)).toEqual({ startMs: 90_000 });
    expect(neighbourEvent(events, 60_000, -1)).toEqual({ startMs: 50_000 });
    expect(neighbourEvent(events, 5_000, -1)).toBeNull();
    expect(neighbourEvent(events, 95_000, 1)).toBeNull();
  });
});
