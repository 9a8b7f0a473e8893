import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh directory under the system's temporary directory. */
export function tempDir(prefix = 'eg-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}
