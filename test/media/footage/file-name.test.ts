import { describe, expect, it } from 'vitest';
import { footageFileName, parseFootageFileName } from '../../../src/media/footage/file-name.js';

describe('footage file names', () => {
  it('name a file by camera, UTC day, profile and start, and read back', () => {
    const id = { deviceId: 'dev_Ab-9_x', profile: 'sub' as const, startMs: Date.UTC(2026, 10, 29, 23, 59, 59, 999) };
    const name = footageFileName(id);
    expect(name).toBe(`dev_Ab-9_x/2026-11-29/sub-${id.startMs}.mp4`);
    expect(parseFootageFileName(name)).toEqual(id);
  });

  it('refuse names the gateway does not write', () => {
    const startMs = Date.UTC(2026, 10, 29, 12);
    const good = `dev/2026-11-29/sub-${startMs}.mp4`;
    expect(parseFootageFileName(good)).not.toBeNull();
    for (const name of [
      `dev/2026-11-30/sub-${startMs}.mp4`,
      `${good}x`,
      `../x/2026-11-29/sub-${startMs}.mp4`,
      `dev/2026-11-29/side-${startMs}.mp4`,
      `dev/2026-11-29/sub-0${startMs}.mp4`,
      'a/b/c',
      '',
    ]) {
      expect(parseFootageFileName(name), name).toBeNull();
    }
  });
});
