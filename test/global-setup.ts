import { execFileSync } from 'node:child_process';
import path from 'node:path';

// Daemon and CLI tests run the built dist/cli.js as a real process; build it once per test run.
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
