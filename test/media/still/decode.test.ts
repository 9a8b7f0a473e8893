import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeStill, decodeStills, splitJpegs } from '../../../src/media/still/decode.js';
import { StillError } from '../../../src/media/still/errors.js';
import { jpegSize } from './jpeg-size.js';

// The short-lived ffmpeg of a still picture, with the real ffmpeg: one keyframe in, one JPEG out.

const encode = (codec: string, format: string) =>
  spawnSync(
    'ffmpeg',
    [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x240:rate=1',
      '-frames:v',
      '1',
      '-c:v',
      codec,
      '-pix_fmt',
      'yuv420p',
      ...(codec === 'libx265' ? ['-x265-params', 'log-level=error'] : []),
      '-f',
      format,
      'pipe:1',
    ],
    { maxBuffer: 16 << 20 },
  ).stdout;

const H264 = encode('libx264', 'h264');
const HEVC = encode('libx265', 'hevc');
const JPEG = encode('mjpeg', 'mjpeg');
const options = { ffmpegPath: 'ffmpeg', timeoutMs: 20_000 };

const dir = mkdtempSync(path.join(os.tmpdir(), 'still-decode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('decodeStill', () => {
  it.each([
    ['an H.264 keyframe', 'h264' as const, H264],
    ['an H.265 keyframe', 'hevc' as const, HEVC],
    ["a camera's JPEG", 'mjpeg' as const, JPEG],
  ])(
    '%s: a whole JPEG at its own size, or at the width asked (height keeping the aspect ratio)',
    async (_what, format, input) => {
      expect(input.length).toBeGreaterThan(0);
      const full = await decodeStill(format, input, null, options);
      expect(jpegSize(full)).toEqual({ width: 320, height: 240 });
      const scaled = await decodeStill(format, input, 160, options);
      expect(jpegSize(scaled)).toEqual({ width: 160, height: 120 });
    },
  );

  it('several keyframes in one run: one JPEG each, in order', async () => {
    const other = spawnSync(
      'ffmpeg',
      [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'mandelbrot=size=320x240',
        '-frames:v',
        '1',
        '-c:v',
        'libx264',
        '-f',
        'h264',
        'pipe:1',
      ],
      { maxBuffer: 16 << 20 },
    ).stdout;
    const jpegs = await decodeStills('h264', [H264, other, H264], 160, options);
    expect(jpegs.map(jpegSize)).toEqual(Array(3).fill({ width: 160, height: 120 }));
    expect(jpegs[0]).toEqual(jpegs[2]);
    expect(jpegs[1]).not.toEqual(jpegs[0]);
  });

  it('garbage in: StillError decode_failed with what ffmpeg said', async () => {
    const err = await decodeStill('h264', Buffer.alloc(2000, 0x55), null, options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StillError);
    expect((err as StillError).failure).toBe('decode_failed');
  });

  it('an ffmpeg that hangs is killed at the deadline', async () => {
    const hang = path.join(dir, 'hang.sh');
    writeFileSync(hang, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hang, 0o755);
    const err = await decodeStill('h264', H264, null, { ffmpegPath: hang, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StillError);
    expect((err as StillError).message).toMatch(/no picture within 300 ms/);
  });

  it('a missing ffmpeg: StillError, not a crash', async () => {
    const err = await decodeStill('h264', H264, null, {
      ffmpegPath: path.join(dir, 'no-such-ffmpeg'),
      timeoutMs: 5000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StillError);
  });

  it('an output over the bound is refused', async () => {
    const err = await decodeStill('h264', H264, null, { ...options, maxOutputBytes: 100 }).catch((e: unknown) => e);
    expect((err as StillError).message).toMatch(/larger than 100 bytes/);
  });
});

describe('splitJpegs', () => {
  const a = Buffer.from('ffd8aaffd9', 'hex');
  const b = Buffer.from('ffd8bbff00ffd9', 'hex');
  it.each([
    ['two JPEGs', Buffer.concat([a, b]), [a, b]],
    ['nothing', Buffer.alloc(0), []],
    ['a cut-off second one', Buffer.concat([a, b.subarray(0, 4)]), null],
    ['bytes before a JPEG', Buffer.concat([Buffer.of(0), a]), null],
  ])('%s', (_what, data, want) => expect(splitJpegs(data)).toEqual(want));
});
