import { spawn } from 'node:child_process';
import type { BaseLogger } from 'pino';
import { FfmpegError } from './errors.js';

// Running ffmpeg to completion (assembly, thumbnails, probes) and keeping its chatter in bounds.

export interface RunResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs a program without a shell and resolves with its output when it exits 0; rejects with
 * FfmpegError (the last of stderr attached) on another exit, a signal, or the time limit. Output is
 * kept to its last `maxOutput` characters.
 */
export function runToEnd(
  program: string,
  args: readonly string[],
  opts: { timeoutMs: number; maxOutput?: number },
): Promise<RunResult> {
  const max = opts.maxOutput ?? 16_384;
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-max)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-max)));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new FfmpegError(`cannot run ${program}: ${err.message}`, ''));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else
        reject(
          new FfmpegError(
            `${program} ${signal ? `was killed (${signal})` : `exited with ${code}`}: ${lastLine(stderr)}`,
            stderr,
          ),
        );
    });
  });
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.slice(0, 300) ?? '';
}

/**
 * Logs a child's stderr lines at most once per `intervalMs` (a camera with broken timestamps can
 * make ffmpeg print a warning per frame, which would fill the journal and wear the card).
 */
export class RateLimitedLines {
  private lastAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;
  private partial = '';

  constructor(
    private readonly logger: BaseLogger,
    private readonly message: string,
    private readonly intervalMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  push(chunk: Buffer): void {
    const lines = (this.partial + chunk.toString()).split('\n');
    this.partial = (lines.pop() ?? '').slice(-1000);
    for (const line of lines) {
      const text = line.trim();
      if (!text) continue;
      const now = this.now();
      if (now - this.lastAt < this.intervalMs) {
        this.suppressed++;
        continue;
      }
      this.logger.warn({ stderr: text.slice(0, 500), suppressed: this.suppressed }, this.message);
      this.lastAt = now;
      this.suppressed = 0;
    }
  }
}
