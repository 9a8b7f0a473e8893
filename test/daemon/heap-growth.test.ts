import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWTH_FLAG } from '../../src/daemon/process.js';

// The daemon sets V8's heap growing factor as it starts (tuneHeapGrowth). V8 ignores a flag it does
// not know, saying so only on stderr: a Node whose V8 dropped this one would run with the unstable
// default unnoticed.

function setFlag(flag: string): string {
  const r = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString(${JSON.stringify(flag)})`], {
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  return r.stderr;
}

describe('tuneHeapGrowth', () => {
  it("sets a flag this Node's V8 knows", () => {
    expect(setFlag(HEAP_GROWTH_FLAG)).toBe('');
    // The check can fail: a flag V8 does not know is reported.
    expect(setFlag(HEAP_GROWTH_FLAG.replace('percent', 'percentage'))).toMatch(/unrecognized flag/);
  });
});
