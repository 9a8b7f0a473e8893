import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LiveDecoder, type LiveDecoderOptions } from '../../../src/media/still/live-decoder.js';
import { LiveDecoderError } from '../../../src/media/still/errors.js';
import { LiveDecoders } from '../../../src/media/still/live-decoders.js';
import { jpegSize } from './jpeg-size.js';

// The long-lived decoder with the real ffmpeg: keyframes in one after another, one JPEG each, the
// right one; bad input ends the process (never a wrong or a stuck picture); the pool starts another.

const keyframe = (source: string, codec = 'libx264', extra: string[] = ['-bf', '0']) =>
  spawnSync(
    'ffmpeg',
    [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `${source}=size=320x240:rate=1`,
      '-frames:v',
      '1',
      '-c:v',
      codec,
      '-pix_fmt',
      'yuv420p',
      ...extra,
      '-f',
      codec === 'libx265' ? 'hevc' : 'h264',
      'pipe:1',
    ],
    { maxBuffer: 16 << 20 },
  ).stdout;

const TESTSRC = keyframe('testsrc2');
const MANDELBROT = keyframe('mandelbrot');
const HEVC = keyframe('testsrc2', 'libx265', ['-x265-params', 'log-level=error:bframes=0']);
// x264's defaults declare B-frames (max_num_reorder_frames in the SPS): the decoder holds the picture.
const REORDERED = keyframe('testsrc2', 'libx264', []);

const started: LiveDecoder[] = [];
function decoder(over: Partial<LiveDecoderOptions> = {}): LiveDecoder {
  const d = new LiveDecoder({
    ffmpegPath: 'ffmpeg',
    format: 'h264',
    width: 160,
    timeoutMs: 20_000,
    maxOutputBytes: 1 << 20,
    ...over,
  });
  started.push(d);
  return d;
}
afterEach(() => {
  for (const d of started.splice(0)) d.stop();
});

describe('LiveDecoder', () => {
  it('keyframes one after another: one JPEG each, at the width asked, each its own picture', async () => {
    const d = decoder();
    const jpegs = [];
    for (const input of [TESTSRC, MANDELBROT, TESTSRC, MANDELBROT]) jpegs.push(await d.decode(input));
    expect(jpegs.map(jpegSize)).toEqual(Array(4).fill({ width: 160, height: 120 }));
    expect(jpegs[0]).toEqual(jpegs[2]);
    expect(jpegs[1]).toEqual(jpegs[3]);
    expect(jpegs[0]).not.toEqual(jpegs[1]);
    // Asked all at once: taken one at a time, each answered with its own picture.
    const together = await Promise.all([MANDELBROT, TESTSRC].map((k) => d.decode(k)));
    expect(together).toEqual([jpegs[1], jpegs[0]]);
    expect(d.alive).toBe(true);
  });

  it('H.265 keyframes, at their own size', async () => {
    const d = decoder({ format: 'hevc', width: null });
    expect(HEVC.length).toBeGreaterThan(0);
    expect(jpegSize(await d.decode(HEVC))).toEqual({ width: 320, height: 240 });
    expect(jpegSize(await d.decode(HEVC))).toEqual({ width: 320, height: 240 });
  });

  it('garbage in: no picture by the deadline, the process ends, the picture after it fails too (never stuck)', async () => {
    const d = decoder({ timeoutMs: 4000 });
    await d.decode(TESTSRC);
    const ended = new Promise((resolve) => d.onEnd(resolve));
    const [bad, next] = await Promise.all([
      d.decode(Buffer.alloc(2000, 0x55)).catch((e: unknown) => e),
      d.decode(TESTSRC).catch((e: unknown) => e),
    ]);
    expect(bad).toBeInstanceOf(LiveDecoderError);
    expect((bad as LiveDecoderError).reason).toBe('timeout');
    expect(next).toBe(bad);
    expect(await ended).toBe(bad);
    expect(d.alive).toBe(false);
    await expect(d.decode(TESTSRC)).rejects.toBe(bad);
  });

  it('an input that makes two pictures: the first answers its request, the second (asked by nobody) ends the process', async () => {
    const d = decoder();
    const ended = new Promise<LiveDecoderError | null>((resolve) => d.onEnd(resolve));
    const first = await d.decode(Buffer.concat([TESTSRC, Buffer.from([0, 0, 0, 1, 0x09, 0xf0]), MANDELBROT]));
    expect(first).toEqual(await decoder().decode(TESTSRC));
    expect((await ended)?.reason).toBe('stray_output');
  });

  it('a missing ffmpeg: LiveDecoderError spawn', async () => {
    const err = await decoder({ ffmpegPath: '/nonexistent/ffmpeg' })
      .decode(TESTSRC)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LiveDecoderError);
    expect(['spawn', 'exited']).toContain((err as LiveDecoderError).reason);
  });
});

describe('LiveDecoders', () => {
  const pool = (over: { max?: number; idleMs?: number; timeoutMs?: number } = {}) => {
    const p = new LiveDecoders({
      max: over.max ?? 2,
      idleMs: over.idleMs ?? 60_000,
      backoffMs: 0,
      start: (format, width) => decoder({ format, width, timeoutMs: over.timeoutMs ?? 20_000 }),
    });
    return p;
  };

  it('one process per (codec, width, size), kept for the pictures that follow', async () => {
    const p = pool();
    for (let i = 0; i < 3; i++) await p.decode('h264', TESTSRC, 160, '320x240');
    await p.decode('h264', TESTSRC, 80, '320x240');
    expect(p.stats).toMatchObject({ starts: 2, running: 2, pictures: 4 });
  });

  it('at most max processes: a third size stops the idle one used longest ago; with all busy, null (decode it another way)', async () => {
    const p = pool({ max: 1 });
    await p.decode('h264', TESTSRC, 160, 'a');
    const busy = p.decode('h264', TESTSRC, 80, 'b'); // the idle 160 one is stopped for it
    expect(busy).not.toBeNull();
    expect(p.decode('h264', TESTSRC, 40, 'c')).toBeNull(); // the 80 one is busy
    expect(jpegSize(await (busy as Promise<Buffer>))).toEqual({ width: 80, height: 60 });
    expect(p.stats).toMatchObject({ starts: 2, running: 1 });
  });

  it('a decoder that fails is replaced by a new one, the failure counted by reason', async () => {
    const p = pool({ timeoutMs: 4000 });
    await expect(p.decode('h264', REORDERED, 160, 's')).rejects.toMatchObject({ reason: 'timeout' });
    expect(p.stats.failures.timeout).toBe(1);
    expect(p.stats.running).toBe(0);
    expect(jpegSize(await (p.decode('h264', TESTSRC, 160, 's') as Promise<Buffer>))).toEqual({
      width: 160,
      height: 120,
    });
    expect(p.stats).toMatchObject({ starts: 2, running: 1 });
  });

  it('a decoder with nothing to do for idleMs is stopped', async () => {
    const p = pool({ idleMs: 50 });
    await p.decode('h264', TESTSRC, 160, 's');
    await vi.waitFor(() => expect(p.stats.running).toBe(0), { timeout: 10_000 });
    expect(p.stats.failures).toMatchObject({ timeout: 0, exited: 0 });
  });
});
