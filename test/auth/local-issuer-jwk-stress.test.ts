import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// Node 20.20.2 deadlocks in the KeyObject loop below within a few thousand iterations:
// KeyObjectHandle::ExportJWK holds the key's mutex, a string allocation inside it triggers a GC, and
// a weak callback running ~KeyGenJob locks that same mutex. This is why the gateway needs Node >= 24
// (scripts/node-runtime.sh) and why src/auth/local-issuer.ts generates and exports keys through
// WebCrypto instead. Each loop runs in a child process: a deadlocked main thread cannot be
// interrupted from inside.
const ITERATIONS = 20_000;
const PROGRESS_EVERY = 500;
// A blocked main thread makes no progress at all; a merely slow machine still reports every few
// seconds, so only a long silence counts as the deadlock.
const STALL_MS = 30_000;

// Each loop prints its count every PROGRESS_EVERY iterations.
const KEY_OBJECT_LOOP = `
const { generateKeyPairSync } = require('node:crypto');
const [iterations, every] = process.argv.slice(1).map(Number);
for (let i = 1; i <= iterations; i++) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  if (typeof jwk.d !== 'string') throw new Error('export returned no private part');
  if (i % every === 0) process.stdout.write(i + '\\n');
}
`;
// What the local issuer does instead; it ran 100,000 iterations on Node 20.20.2 without a stall.
const WEBCRYPTO_LOOP = `
const { subtle } = require('node:crypto').webcrypto;
const [iterations, every] = process.argv.slice(1).map(Number);
(async () => {
  for (let i = 1; i <= iterations; i++) {
    const { privateKey } = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
    const jwk = await subtle.exportKey('jwk', privateKey);
    if (typeof jwk.d !== 'string') throw new Error('export returned no private part');
    if (i % every === 0) process.stdout.write(i + '\\n');
  }
})();
`;

interface LoopOutcome {
  completed: number;
  stalled: boolean;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

function runLoop(source: string): Promise<LoopOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', source, String(ITERATIONS), String(PROGRESS_EVERY)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let completed = 0;
    let stalled = false;
    let stderr = '';
    let pending = '';
    let watchdog = setTimeout(onStall, STALL_MS);
    function onStall(): void {
      stalled = true;
      child.kill('SIGKILL');
    }
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) completed = Number(line);
      clearTimeout(watchdog);
      watchdog = setTimeout(onStall, STALL_MS);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', (err) => {
      clearTimeout(watchdog);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ completed, stalled, code, signal, stderr });
    });
  });
}

describe(`P-256 key generation + JWK export on node ${process.version}`, () => {
  it.each([
    ['generateKeyPairSync + KeyObject.export (Node 20 deadlocks within a few thousand)', KEY_OBJECT_LOOP],
    ['WebCrypto generateKey + exportKey, as the local issuer does', WEBCRYPTO_LOOP],
  ])(
    `%s: ${ITERATIONS} times without a stall`,
    async (_pattern, source) => {
      const outcome = await runLoop(source);
      if (outcome.stalled) {
        throw new Error(
          `node ${process.version} made no progress for ${STALL_MS / 1000} s after ${outcome.completed} iterations: ` +
            'the KeyObject JWK export deadlock; run the gateway on Node >= 24 (./run does)',
        );
      }
      expect(outcome).toEqual({ completed: ITERATIONS, stalled: false, code: 0, signal: null, stderr: '' });
    },
    // The iterations take seconds on Node 24; the stall watchdog above decides what a hang is.
    600_000,
  );
});
