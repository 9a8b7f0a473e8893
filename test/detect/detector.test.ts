// The tfjs-wasm CenterNet backend on real photos (Debian's darknet package), in this thread.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { judgeCheck } from '../../src/detect/confirm.js';
import { FrameError, ModelLoadError } from '../../src/detect/errors.js';
import { inspectFrame } from '../../src/detect/inspect.js';
import { decodeJpeg } from '../../src/detect/jpeg.js';
import { classify } from '../../src/detect/labels.js';
import { defaultModelDir, loadCenterNet } from '../../src/detect/tfjs-centernet.js';
import type { Box, Detector, Frame, RawDetection } from '../../src/detect/types.js';
import { photo } from './photos.js';

const config = validateConfig({}).detection;
// A generous kill timeout: on this shared machine ffmpeg can wait seconds for a core.
const ffmpeg = { ffmpegPath: 'ffmpeg', timeoutMs: 60_000 };
const rules = {
  labels: config.labels,
  minScore: config.min_score,
  threshold: config.threshold,
  zones: {},
  requiredZones: [],
};
let detector: Detector;

const centreIn = (d: RawDetection, truth: Box): boolean => {
  const [cx, cy] = [d.box.x + d.box.w / 2, d.box.y + d.box.h / 2];
  return cx >= truth.x && cx <= truth.x + truth.w && cy >= truth.y && cy <= truth.y + truth.h;
};

/** One picture from an ffmpeg lavfi source, as JPEG bytes. */
function pattern(source: string): Buffer {
  return execFileSync('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    source,
    '-frames:v',
    '1',
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    '-q:v',
    '3',
    'pipe:1',
  ]);
}

beforeAll(async () => {
  detector = await loadCenterNet();
}, 60_000);
afterAll(() => detector?.dispose());

describe('CenterNet on real photos', { timeout: 120_000 }, () => {
  it('finds the woman in person.jpg, confirmed as human in a check of three frames', async () => {
    const frame = await decodeJpeg(photo('person.jpg'), ffmpeg);
    const found = classify(await inspectFrame(detector, frame, null), config.labels, config.min_score);
    const person = found.find((d) => d.category === 'human');
    expect(person, JSON.stringify(found)).toBeDefined();
    expect(centreIn(person!, { x: 0.3, y: 0.25, w: 0.13, h: 0.64 })).toBe(true);
    expect(found.filter((d) => d.category === 'vehicle')).toEqual([]);
    const raw = await inspectFrame(detector, frame, null);
    const verdict = judgeCheck([raw, raw, raw], rules);
    expect(verdict.type).toBe('human');
    expect(verdict.bestFrame).toBe(0);
  });

  it('finds the pickup truck and the bicycle in dog.jpg as vehicles, and no person', async () => {
    const frame = await decodeJpeg(photo('dog.jpg'), ffmpeg);
    const found = classify(await inspectFrame(detector, frame, null), config.labels, config.min_score);
    expect(
      found.some((d) => d.category === 'vehicle' && centreIn(d, { x: 0.609, y: 0.13, w: 0.287, h: 0.165 })),
      JSON.stringify(found),
    ).toBe(true);
    expect(
      found.some((d) => d.label === 'bicycle' && centreIn(d, { x: 0.165, y: 0.247, w: 0.572, h: 0.479 })),
      JSON.stringify(found),
    ).toBe(true);
    expect(found.filter((d) => d.category === 'human')).toEqual([]);
    expect(judgeCheck([await inspectFrame(detector, frame, null)], rules).type).toBe('vehicle');
  });

  it.each(['eagle.jpg', 'giraffe.jpg', 'horses.jpg'])(
    'finds no person and no vehicle in %s (animals)',
    async (name) => {
      const frame = await decodeJpeg(photo(name), ffmpeg);
      expect(classify(await inspectFrame(detector, frame, null), config.labels, config.min_score)).toEqual([]);
    },
  );

  it.each([
    ['colour bars', 'smptebars=s=1280x720'],
    ['a test card', 'testsrc2=s=1280x720'],
    ['colour noise', 'nullsrc=s=1280x720,geq=r=random(1)*255:g=random(2)*255:b=random(3)*255'],
    ['grey noise', 'nullsrc=s=640x480,geq=lum=random(1)*255:cb=128:cr=128'],
    ['a flat grey picture', 'color=c=gray:s=1280x720'],
  ])('finds nothing in %s', async (_name, source) => {
    const frame = await decodeJpeg(pattern(source), ffmpeg);
    expect(classify(await inspectFrame(detector, frame, null), config.labels, config.min_score)).toEqual([]);
    expect(
      classify(
        await inspectFrame(detector, frame, { x: 0.4, y: 0.4, w: 0.1, h: 0.2 }),
        config.labels,
        config.min_score,
      ),
    ).toEqual([]);
  });

  it('a distant person that the whole frame misses is found by the crop around the moving area', async () => {
    // kite.jpg, 1352×900: a kite surfer about 8 pixels wide far to the right.
    const frame = await decodeJpeg(photo('kite.jpg'), ffmpeg);
    const surfer = { x: 0.88, y: 0.49, w: 0.025, h: 0.03 };
    const near = (ds: RawDetection[]) =>
      classify(ds, config.labels, config.min_score).filter((d) => d.category === 'human' && centreIn(d, surfer));
    expect(near(await detector.detect(frame))).toEqual([]);
    const crop = near(await inspectFrame(detector, frame, surfer));
    expect(crop).toHaveLength(1);
    expect(crop[0]!.score).toBeGreaterThanOrEqual(config.threshold);
  });

  it('takes RGBA frames as well as RGB', async () => {
    const rgb = await decodeJpeg(photo('person.jpg'), { ...ffmpeg, size: { width: 512, height: 512 } });
    const rgba: Frame = { width: rgb.width, height: rgb.height, data: new Uint8Array(rgb.width * rgb.height * 4) };
    for (let i = 0; i < rgb.width * rgb.height; i++)
      rgba.data.set([...rgb.data.subarray(i * 3, i * 3 + 3), 255], i * 4);
    const [a, b] = [await detector.detect(rgb), await detector.detect(rgba)];
    expect(b.map((d) => d.label)).toEqual(a.map((d) => d.label));
    expect(b[0]?.score).toBeCloseTo(a[0]!.score, 5);
  });

  it('refuses a frame whose bytes do not match its size, and goes on working', async () => {
    await expect(detector.detect({ data: new Uint8Array(100), width: 64, height: 64 })).rejects.toThrow(FrameError);
    expect(await detector.detect({ data: new Uint8Array(64 * 64 * 3), width: 64, height: 64 })).toEqual([]);
  });
});

describe('decoding frames with ffmpeg', () => {
  it('decodes a JPEG to RGB at its own size, or scaled', async () => {
    const frame = await decodeJpeg(photo('dog.jpg'), ffmpeg);
    expect([frame.width, frame.height, frame.data.length]).toEqual([768, 576, 768 * 576 * 3]);
    const small = await decodeJpeg(photo('dog.jpg'), { ...ffmpeg, size: { width: 320, height: 240 } });
    expect([small.width, small.height, small.data.length]).toEqual([320, 240, 320 * 240 * 3]);
  });
  it.each([
    ['a truncated JPEG', () => photo('kite.jpg').subarray(0, 20_000)],
    ['a JPEG cut after its header', () => photo('kite.jpg').subarray(0, 100)],
    ['random bytes', () => Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251))],
    ['nothing', () => Buffer.alloc(0)],
  ])('%s is a FrameError, not a crash or a half-grey picture', async (_name, bytes) => {
    await expect(decodeJpeg(bytes(), ffmpeg)).rejects.toThrow(FrameError);
  });
  it('a missing ffmpeg is a FrameError', async () => {
    await expect(decodeJpeg(photo('dog.jpg'), { ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toThrow(/cannot run/);
  });
  it('a decoder that hangs is killed and is a FrameError', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-hang-'));
    const hanging = path.join(dir, 'ffmpeg');
    writeFileSync(hanging, '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
    try {
      await expect(decodeJpeg(photo('dog.jpg'), { ffmpegPath: hanging, timeoutMs: 200 })).rejects.toThrow(
        /took longer than 200 ms/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('a picture larger than allowed is refused', async () => {
    await expect(decodeJpeg(photo('kite.jpg'), { ...ffmpeg, maxPixels: 1000 })).rejects.toThrow(
      /larger than 1000 pixels/,
    );
  });
});

describe('the model files', () => {
  const dirs: string[] = [];
  const copyModel = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-model-'));
    dirs.push(dir);
    for (const f of ['centernet.json', 'centernet.bin'])
      copyFileSync(path.join(defaultModelDir(), f), path.join(dir, f));
    return dir;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('a missing model is a ModelLoadError naming the file', async () => {
    const dir = copyModel();
    rmSync(path.join(dir, 'centernet.bin'));
    await expect(loadCenterNet({ modelDir: dir })).rejects.toThrow(ModelLoadError);
    await expect(loadCenterNet({ modelDir: dir })).rejects.toThrow(/centernet\.bin: ENOENT/);
  });
  it.each([
    ['a weight file cut short', 'centernet.bin', (b: Buffer) => b.subarray(0, b.length - 1000)],
    [
      'one flipped byte in the weights',
      'centernet.bin',
      (b: Buffer) => Buffer.concat([b.subarray(0, 5000), Buffer.from([b[5000]! ^ 0xff]), b.subarray(5001)]),
    ],
    ['a damaged graph', 'centernet.json', (b: Buffer) => b.subarray(0, b.length / 2)],
  ])('%s is a ModelLoadError', async (_name, file, damage) => {
    const dir = copyModel();
    writeFileSync(path.join(dir, file), damage(readFileSync(path.join(dir, file))));
    await expect(loadCenterNet({ modelDir: dir })).rejects.toThrow(/damaged or not the expected version/);
  });
});
