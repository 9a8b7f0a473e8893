import { describe, expect, it } from 'vitest';
import { startStopwatch, timeSince } from '../../src/domain/stopwatch.js';

/** A clock that reads the given instants one after the other. */
function clock(...instants: number[]): () => number {
  return () => {
    const at = instants.shift();
    if (at === undefined) throw new Error('the clock was read more often than the test expects');
    return at;
  };
}

describe('startStopwatch', () => {
  it('keeps the marks in the order made, on its clock', () => {
    const watch = startStopwatch(clock(10, 12.5, 20), 0);
    watch.mark('a');
    watch.mark('b');
    watch.mark('c');
    expect(watch.marks()).toEqual([
      ['a', 10],
      ['b', 12.5],
      ['c', 20],
    ]);
  });

  it('times each mark from its start, which is read from the clock when not given', () => {
    const watch = startStopwatch(clock(100, 130, 175));
    watch.mark('answer');
    watch.mark('playing');
    expect(watch.elapsed('answer')).toBe(30);
    expect(watch.elapsed('playing')).toBe(75);
    expect(startStopwatch(clock(), 40).elapsed('answer')).toBeNull();
  });

  it('keeps the first instant of a name marked again, without reading the clock', () => {
    const watch = startStopwatch(clock(5, 9), 0);
    watch.mark('first');
    watch.mark('first');
    watch.mark('second');
    expect(watch.marks()).toEqual([
      ['first', 5],
      ['second', 9],
    ]);
    expect(watch.elapsed('first')).toBe(5);
  });

  it('hands out its marks as a copy', () => {
    const watch = startStopwatch(clock(1, 2), 0);
    watch.mark('a');
    const before = watch.marks();
    watch.mark('b');
    expect(before).toEqual([['a', 1]]);
  });
});

describe('timeSince', () => {
  it('gives each mark the time after an origin, by name, in order', () => {
    const ms = timeSince(1000, [
      ['frames_requested', 1010],
      ['decided', 1200],
      ['alert_written', 1250],
    ]);
    expect(ms).toEqual({ frames_requested: 10, decided: 200, alert_written: 250 });
    expect(Object.keys(ms)).toEqual(['frames_requested', 'decided', 'alert_written']);
  });

  it('keeps a name where it first stands, with its last instant', () => {
    const ms = timeSince(0, [
      ['a', 1],
      ['b', 2],
      ['a', 3],
    ]);
    expect(Object.entries(ms)).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
  });

  it('is empty without marks', () => {
    expect(timeSince(5, [])).toEqual({});
  });
});
