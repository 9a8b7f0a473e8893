// A vitest reporter for ./run test's watchdog: keeps one line per test file in progress in the file
// named by EDGE_GATEWAY_TEST_PROGRESS, "<seconds since boot of the file's last event> <file> > <test>".
// Seconds since boot (/proc/uptime), not the wall clock: a fresh CI machine's clock can jump when it
// syncs, and a jump of 15 minutes read as a stalled test once stopped a healthy run.
// Vitest's test and hook timeouts run on the worker's own event loop, so a worker whose main thread
// is blocked (a deadlock in native code, an endless loop) stops sending events and is never timed
// out; the watchdog sees its line age and says which file and test it was in.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export default class ProgressReporter {
  /** @type {Map<string, { at: number, test: string }>} */
  running = new Map();
  /** Events of a module's tests can arrive after its end, and must not bring it back. */
  /** @type {Set<string>} */
  ended = new Set();
  file = process.env.EDGE_GATEWAY_TEST_PROGRESS ?? '.vitest-progress';

  /** @param {import('vitest/node').TestModule} module */
  onTestModuleQueued(module) {
    this.ended.delete(module.moduleId);
    this.touch(module.moduleId, '(loading)');
  }

  /** @param {import('vitest/node').TestModule} module */
  onTestModuleStart(module) {
    this.touch(module.moduleId, '(before the first test)');
  }

  /** @param {import('vitest/node').TestCase} testCase */
  onTestCaseReady(testCase) {
    this.touch(testCase.module.moduleId, testCase.fullName);
  }

  /** @param {import('vitest/node').TestCase} testCase */
  onTestCaseResult(testCase) {
    this.touch(testCase.module.moduleId, `(after "${testCase.fullName}")`);
  }

  /** @param {import('vitest/node').TestModule} module */
  onTestModuleEnd(module) {
    this.ended.add(module.moduleId);
    this.running.delete(module.moduleId);
    this.write();
  }

  /** @param {string} moduleId @param {string} test */
  touch(moduleId, test) {
    if (this.ended.has(moduleId)) return;
    // One line per file: names may hold newlines (test tables of bad input do).
    this.running.set(moduleId, { at: secondsSinceBoot(), test: test.replace(/\s+/g, ' ') });
    this.write();
  }

  write() {
    const lines = [...this.running].map(
      ([id, { at, test }]) => `${at} ${path.relative(process.cwd(), id)} > ${test}\n`,
    );
    // Renamed into place, so the watchdog never reads half a file.
    writeFileSync(`${this.file}.tmp`, lines.join(''));
    renameSync(`${this.file}.tmp`, this.file);
  }
}

function secondsSinceBoot() {
  return Math.floor(Number.parseFloat(readFileSync('/proc/uptime', 'utf8')));
}
