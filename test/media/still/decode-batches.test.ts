import { describe, expect, it } from 'vitest';
import { DecodeBatches } from '../../../src/media/still/decode-batches.js';
import { DecodeSlots } from '../../../src/media/still/decode-slots.js';
import { StillBusyError, StillError } from '../../../src/media/still/errors.js';

// Batching with a stand-in decoder (the real one, decodeStills, has its own tests in decode.test.ts).

const jpegOf = (input: Buffer) => Buffer.concat([Buffer.of(0xff, 0xd8), input, Buffer.of(0xff, 0xd9)]);

function rig(windowMs = 20, maxBatch = 4, slots = new DecodeSlots(2, 8)) {
  const runs: string[][] = [];
  const batches = new DecodeBatches(
    slots,
    async (_format, inputs) => {
      runs.push(inputs.map((i) => i.toString()));
      if (inputs.some((i) => i.toString() === 'broken')) throw new StillError('decode_failed', 'broken keyframe');
      return inputs.map(jpegOf);
    },
    windowMs,
    maxBatch,
  );
  return { batches, runs };
}

describe('DecodeBatches', () => {
  it('pictures of one format, width and size asked within the window: one run, each its own JPEG', async () => {
    const r = rig();
    const answers = await Promise.all(
      ['a', 'b', 'c'].map((x) => r.batches.decode('h264', Buffer.from(x), 320, '1920x1080')),
    );
    expect(answers).toEqual(['a', 'b', 'c'].map((x) => jpegOf(Buffer.from(x))));
    expect(r.runs).toEqual([['a', 'b', 'c']]);
    expect(r.batches.stats).toEqual({ runs: 1, pictures: 3 });
  });

  it('another width, size or codec is another run; a full batch runs at once', async () => {
    const r = rig(20, 2);
    await Promise.all([
      r.batches.decode('h264', Buffer.from('a'), 320, '1920x1080'),
      r.batches.decode('h264', Buffer.from('b'), 640, '1920x1080'),
      r.batches.decode('h264', Buffer.from('c'), 320, '640x480'),
      r.batches.decode('hevc', Buffer.from('d'), 320, '1920x1080'),
      r.batches.decode('h264', Buffer.from('e'), 320, '1920x1080'),
    ]);
    expect(r.runs.map((x) => x.join('')).sort()).toEqual(['ae', 'b', 'c', 'd']);
  });

  it('a broken keyframe in a batch: the others are decoded one by one, it alone fails', async () => {
    const r = rig();
    const answers = await Promise.all(
      ['a', 'broken', 'c'].map((x) => r.batches.decode('h264', Buffer.from(x), null, 's').catch((e: unknown) => e)),
    );
    expect(answers[0]).toEqual(jpegOf(Buffer.from('a')));
    expect(answers[1]).toBeInstanceOf(StillError);
    expect(answers[2]).toEqual(jpegOf(Buffer.from('c')));
    expect(r.runs[0]).toEqual(['a', 'broken', 'c']);
    expect(r.runs.slice(1).sort()).toEqual([['a'], ['broken'], ['c']]);
  });

  it('a batch waiting for a busy slot keeps taking pictures until it runs', async () => {
    const slots = new DecodeSlots(1, 8);
    let release: () => void = () => undefined;
    const held = slots.run(() => new Promise<void>((resolve) => (release = resolve)));
    const r = rig(5, 16, slots);
    const first = ['a', 'b'].map((x) => r.batches.decode('h264', Buffer.from(x), null, 's'));
    await new Promise((res) => setTimeout(res, 30)); // past the window: the batch waits for the slot
    const late = r.batches.decode('h264', Buffer.from('c'), null, 's');
    release();
    await held;
    await Promise.all([...first, late]);
    expect(r.runs).toEqual([['a', 'b', 'c']]);
  });

  it('runs past the decode slots and their queue: StillBusyError for the batch', async () => {
    const slots = new DecodeSlots(1, 0);
    let release: () => void = () => undefined;
    const held = slots.run(() => new Promise<void>((resolve) => (release = resolve)));
    const r = rig(5, 4, slots);
    await expect(r.batches.decode('h264', Buffer.from('a'), null, 's')).rejects.toBeInstanceOf(StillBusyError);
    release();
    await held;
  });
});
