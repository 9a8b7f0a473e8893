import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The darknet package's photos, fetched by ./run (test setup) into a cache outside the repository;
 * when a test file runs on its own, the same ./run step fetches them here (apt-get download).
 */
export function photosDir(): string {
  const given = process.env.EDGE_GATEWAY_TEST_PHOTOS;
  if (given && existsSync(path.join(given, '.complete'))) return given;
  return execFileSync(path.join(ROOT, 'run'), ['test-photos'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

export function photo(name: string): Buffer {
  return readFileSync(path.join(photosDir(), name));
}

export type Truth = { category: 'human' | 'vehicle'; what: string; box: [number, number, number, number] };

export function photoLabels(): Record<string, Truth[]> {
  return (
    JSON.parse(readFileSync(path.join(import.meta.dirname, 'photo-labels.json'), 'utf8')) as {
      photos: Record<string, Truth[]>;
    }
  ).photos;
}
