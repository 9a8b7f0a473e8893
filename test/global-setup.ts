import { execFileSync } from 'node:child_process';
import path from 'node:path';

// Daemon and CLI tests run the built dist/cli.js as a real process; build it once per test run.
// EDGE_GATEWAY_TEST_NO_BUILD=1 skips it while iterating on tests that do not start the CLI.
// The integration and browser projects both name this file (the unit project needs no dist/), and
// vitest runs it once per project: the second call in the same run finds the build done.
const BUILT = Symbol.for('edge-gateway.test.dist-built');

export default function setup(): void {
  if (process.env.EDGE_GATEWAY_TEST_NO_BUILD === '1') return;
  const state = globalThis as { [BUILT]?: boolean };
  if (state[BUILT]) return;
  const root = path.resolve(import.meta.dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  // The web app (dist/web), which the started gateway serves at / (test/web, test/api/web-app.test.ts).
  execFileSync(process.execPath, [path.join(root, 'scripts/build-web.mjs')], { cwd: root, stdio: 'inherit' });
  state[BUILT] = true;
}
