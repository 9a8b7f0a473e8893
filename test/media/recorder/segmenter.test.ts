import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Segmenter } from '../../../src/media/recorder/segmenter.js';

// The segmenter sweeps its RAM directory each time it starts ffmpeg again. A camera stream that died
// made it restart every second or so while a clip of the event was being written from that same
// directory: the sweep removed the clip writer's concat list under ffmpeg and the clip was lost (seen
// in CI as "ffconcat: No such file or directory"). Real ffmpeg, pointed at a port nobody listens on,
// restarts the same way.
describe('Segmenter restarts', () => {
  let dir: string;
  let segmenter: Segmenter | undefined;
  afterEach(async () => {
    await segmenter?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'sweep only segments no run listed: the concat list of a clip being written stays',
    { timeout: 30_000 },
    async () => {
      dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'eg-segmenter-')), 'cam');
      const restarts: number[] = [];
      const logger = pino(
        { level: 'warn' },
        {
          write: (line: string) =>
            line.includes('recorder ffmpeg ended; restarting') ? restarts.push(Date.now()) : undefined,
        },
      );
      segmenter = new Segmenter({
        deviceId: 'dev_test',
        ffmpegPath: 'ffmpeg',
        dir,
        inputUrl: () => 'rtsp://127.0.0.1:9/none',
        logger,
        maxBackoffMs: 500,
      });
      const concatList = path.join(dir, '.rec_test.ffconcat');
      const straySegment = path.join(dir, 'r1-000000005.nut');
      writeFileSync(concatList, 'ffconcat version 1.0\n');
      writeFileSync(straySegment, 'half a segment of a run that died');
      // Two restarts: the second run's start swept the directory.
      await expect.poll(() => restarts.length, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(2);
      await expect.poll(() => existsSync(straySegment), { timeout: 5_000 }).toBe(false);
      expect(existsSync(concatList)).toBe(true);
    },
  );
});
