import { describe, expect, it } from 'vitest';
import { OTHER_COMMITS_LOOK_MS, PageMemo } from '../../src/store/paging.js';

describe('PageMemo', () => {
  it('keeps at most 64 pages across all lists, giving up the oldest, and forgets all on clear or a change elsewhere', () => {
    let dataVersion = 1;
    let now = 0;
    const memo = new PageMemo(
      () => dataVersion,
      () => now,
    );
    for (let i = 0; i < 64; i++) memo.keep(i % 2 === 0 ? 'a' : 'b', `k${i}`, i);
    expect(memo.size).toBe(64);
    memo.keep('b', 'k64', 64);
    expect(memo.get('a', 'k0')).toBeUndefined(); // the oldest, in another list
    expect(memo.get('b', 'k64')).toBe(64);
    expect(memo.size).toBe(64);

    memo.forgetIfChangedElsewhere(); // first look: remembers the version, drops what it cannot vouch for
    expect(memo.size).toBe(0);
    memo.keep('a', 'fresh', 1);
    memo.forgetIfChangedElsewhere();
    expect(memo.get('a', 'fresh')).toBe(1);
    dataVersion = 2;
    now += OTHER_COMMITS_LOOK_MS;
    memo.forgetIfChangedElsewhere();
    expect(memo.size).toBe(0);

    memo.keep('b', 'again', 1);
    memo.clear();
    expect(memo.size).toBe(0);
  });

  it('keeps the pages of two lists read with the same query apart, and forgets both on a write', () => {
    const memo = new PageMemo(() => 1);
    memo.keep('recordings', 'q', 'r');
    memo.keep('alerts', 'q', 'a');
    expect([memo.get('recordings', 'q'), memo.get('alerts', 'q')]).toEqual(['r', 'a']);
    memo.clear();
    expect([memo.get('recordings', 'q'), memo.get('alerts', 'q')]).toEqual([undefined, undefined]);
  });

  it('clears the other memos it was given with its pages', () => {
    const memo = new PageMemo(() => 1);
    const other = new Map([['x', 1]]);
    memo.alsoForget(other);
    memo.clear();
    expect(other.size).toBe(0);
  });

  it("looks for other connections' commits at most every OTHER_COMMITS_LOOK_MS, and at the next call after that", () => {
    let dataVersion = 1;
    let now = 1000;
    let looks = 0;
    const memo = new PageMemo(
      () => {
        looks++;
        return dataVersion;
      },
      () => now,
    );
    memo.forgetIfChangedElsewhere();
    memo.keep('list', 'p', 1);
    dataVersion = 2; // another process commits
    now += OTHER_COMMITS_LOOK_MS - 0.001;
    memo.forgetIfChangedElsewhere();
    expect(looks).toBe(1); // the look before still serves
    expect(memo.get('list', 'p')).toBe(1);
    now += 0.001;
    memo.forgetIfChangedElsewhere();
    expect(looks).toBe(2);
    expect(memo.size).toBe(0);
  });
});
