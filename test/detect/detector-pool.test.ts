// The detector pool with its real worker threads (the built dist/detect/worker.js) and the real model.
import { existsSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DetectorPool, WORKER_LIMITS } from '../../src/detect/detector-pool.js';
import { CheckDroppedError, DetectorUnavailableError, FrameError } from '../../src/detect/errors.js';
import { shrinkFrame } from '../../src/detect/frame.js';
import { decodeJpeg } from '../../src/detect/jpeg.js';
import type { Frame } from '../../src/detect/types.js';
import { photo } from './photos.js';

const workerUrl = new URL('../../dist/detect/worker.js', import.meta.url);
const grey = (side: number): Frame => ({ data: new Uint8Array(side * side * 3).fill(128), width: side, height: side });

beforeAll(() => {
  if (!existsSync(workerUrl))
    throw new Error(
      `${workerUrl.pathname} is missing: the test setup builds dist/ (do not set EDGE_GATEWAY_TEST_NO_BUILD=1 for this file)`,
    );
});

describe('DetectorPool', { timeout: 180_000 }, () => {
  let pool: DetectorPool;
  beforeAll(async () => {
    pool = new DetectorPool({ threads: 1, queueSize: 3, workerUrl });
    expect(await pool.started()).toBe('ready');
  }, 120_000);
  afterAll(() => pool?.close());

  it("tells its worker thread's heap, which the process's heap figures leave out", async () => {
    const heap = await pool.heapBytes();
    expect(heap.used).toBeGreaterThan(0);
    expect(heap.physical).toBeGreaterThanOrEqual(heap.used);
  });

  it('checks the frames of a motion start in a worker thread', async () => {
    const frame = await decodeJpeg(photo('person.jpg'), { ffmpegPath: 'ffmpeg', timeoutMs: 60_000 });
    const { found: frames, kept } = await pool.check({
      camera: 'front',
      frames: [frame, frame],
      motion: { x: 0.3, y: 0.3, w: 0.15, h: 0.5 },
    });
    expect(frames).toHaveLength(2);
    expect(kept).toEqual([]);
    for (const found of frames)
      expect(
        found.some((d) => d.label === 'person' && d.score >= 0.5),
        JSON.stringify(found),
      ).toBe(true);
    expect(pool.stats()).toMatchObject({ state: 'ready', error: null, queued: 0, running: 0 });
  });

  it('refuses a frame whose bytes do not match its size, counts it, and goes on', async () => {
    const before = pool.stats().failed;
    await expect(
      pool.check({ camera: 'front', frames: [{ data: new Uint8Array(10), width: 64, height: 64 }], motion: null }),
    ).rejects.toThrow(FrameError);
    expect(pool.stats().failed).toBe(before + 1);
    expect(await pool.check({ camera: 'front', frames: [grey(128)], motion: null })).toEqual({ found: [[]], kept: [] });
  });

  it('sends the frames back scaled down to at least keptWidth when asked, as shrinkFrame makes them', async () => {
    const frame = await decodeJpeg(photo('person.jpg'), { ffmpegPath: 'ffmpeg', timeoutMs: 60_000 });
    const small = grey(100);
    const { kept } = await pool.check({ camera: 'front', frames: [frame, small], motion: null, keptWidth: 100 });
    expect(kept).toEqual([shrinkFrame(frame, 100), small]);
    expect(kept[0]!.width).toBeLessThan(frame.width);
    expect(kept[0]!.width).toBeGreaterThanOrEqual(100);
    // The caller's frames are its own still (the worker scaled its copy).
    expect(frame.data.byteLength).toBe(frame.width * frame.height * 3);
  });

  it('under overload (16 cameras at once) the queue stays bounded, the busiest cameras lose their oldest checks, and drops are counted', async () => {
    const before = pool.stats();
    const outcomes: Promise<string>[] = [];
    let mostQueued = 0;
    for (let round = 0; round < 2; round++) {
      for (let cam = 0; cam < 16; cam++) {
        const camera = `cam${cam}`;
        outcomes.push(
          pool.check({ camera, frames: [grey(256)], motion: null }).then(
            () => `${camera}:done`,
            (err: unknown) => (err instanceof CheckDroppedError ? `${camera}:dropped` : `${camera}:${String(err)}`),
          ),
        );
        mostQueued = Math.max(mostQueued, pool.stats().queued);
      }
    }
    const results = await Promise.all(outcomes);
    const done = results.filter((r) => r.endsWith(':done'));
    const dropped = results.filter((r) => r.endsWith(':dropped'));
    expect(done.length + dropped.length).toBe(32);
    expect(mostQueued).toBeLessThanOrEqual(3);
    // One running and at most 3 waiting when the burst ended: the rest was dropped.
    expect(done.length).toBeLessThanOrEqual(4);
    expect(dropped.length).toBeGreaterThanOrEqual(28);
    const after = pool.stats();
    expect(after.dropped - before.dropped).toBe(dropped.length);
    expect(after.checked - before.checked).toBe(done.length);
    // The last checks of the burst are what survived: the newest, not the oldest.
    expect(done).toContain('cam15:done');
  });
});

describe("a worker's young generation", { timeout: 300_000 }, () => {
  // Inference makes short-lived objects at a high rate; left to V8, a worker's young generation
  // grows with that rate and keeps what it reached. Two pools side by side under the same checks:
  // one with the default limits (WORKER_LIMITS), one with only the old generation bounded.
  const MiB = 2 ** 20;
  const pools: DetectorPool[] = [];
  afterAll(async () => {
    for (const p of pools) await p.close();
  });

  it('stays within its bound under a run of checks, where an unbounded one grows', async () => {
    const bounded = new DetectorPool({ threads: 1, queueSize: 2, workerUrl });
    const unbounded = new DetectorPool({
      threads: 1,
      queueSize: 2,
      workerUrl,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_LIMITS.maxOldGenerationSizeMb! },
    });
    pools.push(bounded, unbounded);
    expect(await bounded.started()).toBe('ready');
    expect(await unbounded.started()).toBe('ready');
    const start = { bounded: (await bounded.heapBytes()).physical, unbounded: (await unbounded.heapBytes()).physical };
    // A camera's frames, with the moving area in a different place and size each time.
    const frame = (): Frame => {
      const data = new Uint8Array(1280 * 720 * 3);
      for (let i = 0; i < data.length; i += 61) data[i] = i & 255;
      return { data, width: 1280, height: 720 };
    };
    for (let i = 0; i < 40; i++) {
      const side = 0.1 + (i % 5) * 0.12;
      const motion = { x: (i % 3) * 0.15, y: (i % 2) * 0.2, w: side, h: side };
      await Promise.all(
        [bounded, unbounded].map((p) => p.check({ camera: 'drive', frames: [frame(), frame(), frame()], motion })),
      );
    }
    const grown = {
      bounded: ((await bounded.heapBytes()).physical - start.bounded) / MiB,
      unbounded: ((await unbounded.heapBytes()).physical - start.unbounded) / MiB,
    };
    console.log(`worker heap grown under checks (MiB): ${JSON.stringify(grown)} from ${JSON.stringify(start)}`);
    expect(grown.bounded).toBeLessThanOrEqual(WORKER_LIMITS.maxYoungGenerationSizeMb!);
    expect(grown.unbounded).toBeGreaterThan(grown.bounded + WORKER_LIMITS.maxYoungGenerationSizeMb!);
  });
});

describe('DetectorPool without a usable model', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-nomodel-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is in the error state with the reason, refuses checks, and the process goes on', async () => {
    const pool = new DetectorPool({ threads: 2, queueSize: 4, workerUrl, modelDir: dir });
    const early = pool.check({ camera: 'front', frames: [grey(64)], motion: null });
    expect(await pool.started()).toBe('error');
    await expect(early).rejects.toThrow(DetectorUnavailableError);
    expect(pool.stats().error).toMatch(/cannot read model file .*centernet\.(json|bin): ENOENT/);
    await expect(pool.check({ camera: 'front', frames: [grey(64)], motion: null })).rejects.toThrow(
      /the detector is not running: cannot read model file/,
    );
    await pool.close();
    // Its threads are gone, and so are their heaps.
    expect(await pool.heapBytes()).toEqual({ used: 0, physical: 0 });
    expect(pool.state).toBe('closed');
  });
});
