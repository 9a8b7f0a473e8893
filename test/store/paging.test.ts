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
    const a = new Map<string, number>();
    const b = new Map<string, number>();
    for (let i = 0; i < 64; i++) {
      const list = i % 2 === 0 ? a : b;
      memo.keep(`k${i}`, list);
      list.set(`k${i}`, i);
    }
    expect(a.size + b.size).toBe(64);
    memo.keep('k64', b);
    b.set('k64', 64);
    expect(a.has('k0')).toBe(false); // the oldest, in another list
    expect(a.size + b.size).toBe(64);

    memo.forgetIfChangedElsewhere(); // first look: remembers the version, drops what it cannot vouch for
    a.set('fresh', 1);
    memo.keep('fresh', a);
    memo.forgetIfChangedElsewhere();
    expect(a.get('fresh')).toBe(1);
    dataVersion = 2;
    now += OTHER_COMMITS_LOOK_MS;
    memo.forgetIfChangedElsewhere();
    expect(a.size + b.size).toBe(0);

    memo.keep('again', b);
    b.set('again', 1);
    memo.clear();
    expect(b.size).toBe(0);
  });

  it('looks for other connections\' commits at most every OTHER_COMMITS_LOOK_MS, and at the next call after that', () => {
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
    const pages = new Map<string, number>();
    memo.forgetIfChangedElsewhere();
    memo.keep('p', pages);
    pages.set('p', 1);
    dataVersion = 2; // another process commits
    now += OTHER_COMMITS_LOOK_MS - 0.001;
    memo.forgetIfChangedElsewhere();
    expect(looks).toBe(1); // the look before still serves
    expect(pages.get('p')).toBe(1);
    now += 0.001;
    memo.forgetIfChangedElsewhere();
    expect(looks).toBe(2);
    expect(pages.size).toBe(0);
  });
});
