import { readFileSync } from 'node:fs';

/** The package version, read once from package.json next to dist/ and src/. */
export function readVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    if (typeof pkg === 'object' && pkg !== null && typeof (pkg as { version?: unknown }).version === 'string') {
      return (pkg as { version: string }).version;
    }
  } catch {
    // fall through: a missing package.json must not stop the daemon
  }
  return '0.0.0';
}
