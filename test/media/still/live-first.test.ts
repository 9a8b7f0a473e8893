import { spawnSync } from 'node:child_process';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeStills } from '../../../src/media/still/decode.js';
import { DecodeBatches } from '../../../src/media/still/decode-batches.js';
import { DecodeSlots } from '../../../src/media/still/decode-slots.js';
import { LiveDecoder } from '../../../src/media/still/live-decoder.js';
import { LiveDecoders } from '../../../src/media/still/live-decoders.js';
import { liveFirst } from '../../../src/media/still/live-first.js';
import { jpegSize } from './jpeg-size.js';

// The choice of decoder with the real ffmpeg: the long-lived one when it can, one ffmpeg run when
// it cannot; a keyframe that the long-lived decoder fails on still gives its picture.

const keyframe = (extra: string[]) =>
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
      'libx264',
      '-pix_fmt',
      'yuv420p',
      ...extra,
      '-f',
      'h264',
      'pipe:1',
    ],
    { maxBuffer: 16 << 20 },
  ).stdout;
const PLAIN = keyframe(['-bf', '0']);
// B-frames declared in the SPS: the long-lived decoder holds the picture back, a run ends and gives it.
const REORDERED = keyframe([]);

const pools: LiveDecoders[] = [];
afterEach(() => {
  for (const p of pools.splice(0)) p.stop();
});

function rig(max = 2) {
  const slots = new DecodeSlots(2, 8);
  const batches = new DecodeBatches(
    slots,
    (format, inputs, width) => decodeStills(format, inputs, width, { ffmpegPath: 'ffmpeg', timeoutMs: 20_000 }),
    0,
    16,
  );
  const live = new LiveDecoders({
    max,
    idleMs: 60_000,
    backoffMs: 60_000,
    start: (format, width) =>
      new LiveDecoder({ ffmpegPath: 'ffmpeg', format, width, timeoutMs: 4000, maxOutputBytes: 1 << 20 }),
  });
  pools.push(live);
  return { decode: liveFirst({ live, slots, batches, logger: pino({ level: 'silent' }) }), live, batches };
}

describe('liveFirst', () => {
  it('a keyframe that decodes alone: the long-lived decoder, no ffmpeg run; one that does not: a run', async () => {
    const r = rig();
    for (let i = 0; i < 3; i++)
      expect(jpegSize(await r.decode('h264', PLAIN, 160, '320x240', true))).toEqual({ width: 160, height: 120 });
    expect(r.live.stats).toMatchObject({ starts: 1, pictures: 3 });
    expect(r.batches.stats.runs).toBe(0);
    expect(jpegSize(await r.decode('h264', PLAIN, 160, '320x240', false))).toEqual({ width: 160, height: 120 });
    expect(r.batches.stats.runs).toBe(1);
  });

  it('the long-lived decoder fails on a keyframe: the picture comes from a run, the failure is counted, the size backs off to runs', async () => {
    const r = rig();
    const want = await decodeStills('h264', [REORDERED], 160, { ffmpegPath: 'ffmpeg', timeoutMs: 20_000 });
    const jpeg = await r.decode('h264', REORDERED, 160, '320x240', true);
    expect(jpeg).toEqual(want[0]);
    expect(r.live.stats.failures.timeout).toBe(1);
    expect(r.batches.stats.runs).toBe(1);
    // Backing off: the next picture of that size goes to a run at once, no decoder started.
    await r.decode('h264', PLAIN, 160, '320x240', true);
    expect(r.live.stats.starts).toBe(1);
    expect(r.batches.stats.runs).toBe(2);
  });

  it('no decoder free (all busy with other sizes): a run', async () => {
    const r = rig(1);
    const [a, b] = await Promise.all([
      r.decode('h264', PLAIN, 160, '320x240', true),
      r.decode('h264', PLAIN, 80, '320x240', true),
    ]);
    expect([jpegSize(a), jpegSize(b)]).toEqual([
      { width: 160, height: 120 },
      { width: 80, height: 60 },
    ]);
    expect(r.live.stats.starts + r.batches.stats.runs).toBe(2);
    expect(r.batches.stats.runs).toBe(1);
  });
});
