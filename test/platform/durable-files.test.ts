import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOnce, replaceFile } from '../../src/platform/durable-files.js';
import { tempDir } from '../support/temp-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dir = () => {
  const d = tempDir('eg-files-');
  dirs.push(d);
  return d;
};

describe('atomic files', () => {
  it('createOnce keeps the first content and leaves no temporary files', () => {
    const d = dir();
    const f = path.join(d, 'id');
    expect(createOnce(f, () => 'first').toString()).toBe('first');
    expect(createOnce(f, () => 'second').toString()).toBe('first');
    replaceFile(f, 'third');
    expect(readFileSync(f, 'utf8')).toBe('third');
    expect(readdirSync(d)).toEqual(['id']);
  });
});
