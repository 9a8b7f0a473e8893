import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { findBoxes, readBoxes } from '../../../src/media/fmp4/reader.js';
import type { FanOutReader } from '../../../src/media/relay/fanout.js';
import { Segmenter, type RecorderStream } from '../../../src/media/recorder/segmenter.js';
import { parseIndex, SEGMENT_INDEX } from '../../../src/media/recorder/segments.js';
import { h264Picture, h264Sdp } from '../fmp4/h264-stream.js';
import { tempDir } from '../../support/temp-dir.js';

// The recorder's segmenter on a camera stream made by hand (10 pictures a second, a keyframe every
// second), handed over as the relay's fan-out hands packets to its readers: one file per group of
// pictures, listed once the next keyframe closes it, dated by the gateway's clock; a run ends when
// the stream does, and the next starts with a fresh prefix.

const SDP = h264Sdp();
const FRAME_MS = 100;

/** The same camera with G.711 audio (no audio packet is sent: the muxer plans its tracks from the SDP). */
const SDP_PCMU = h264Sdp(['m=audio 0 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', 'a=control:trackID=1']);

/** A stream handle the test feeds: the readers attached, how many times it was asked for, its SDP. */
function fakeStream() {
  const readers = new Set<FanOutReader>();
  let acquired = 0;
  let fail = false;
  let sdp = SDP;
  const handle: RecorderStream = {
    get sdp() {
      return sdp;
    },
    startOfNextReader: () => [],
    attach: (reader) => {
      readers.add(reader);
      return () => readers.delete(reader);
    },
  };
  return {
    readers,
    get acquired() {
      return acquired;
    },
    failNext(on: boolean) {
      fail = on;
    },
    /** The SDP of the runs that start from now on. */
    setSdp(next: string) {
      sdp = next;
    },
    acquire: () => {
      acquired++;
      return fail ? Promise.reject(new Error('camera down')) : Promise.resolve(handle);
    },
  };
}

const segmenters: Segmenter[] = [];
afterEach(async () => {
  for (const s of segmenters.splice(0)) await s.stop();
});

/** `unavailable`: the camera stream cannot be had until the test says so (failNext(false)). */
function setup(unavailable = false) {
  const dir = path.join(tempDir('eg-segmenter-'), 'cam');
  const stream = fakeStream();
  stream.failNext(unavailable);
  const clock = { now: 1_000_000 };
  const segmenter = new Segmenter({
    deviceId: 'dev_test',
    dir,
    acquire: stream.acquire,
    logger: pino({ level: 'silent' }),
    maxBackoffMs: 1,
    random: () => 0,
    now: () => clock.now,
  });
  segmenters.push(segmenter);
  let seq = 0;
  let picture = 0;
  /** Sends `n` pictures (a keyframe each 10th), the clock moving a frame each. */
  const send = (n: number) => {
    for (let i = 0; i < n; i++, picture++) {
      const packets = h264Picture(picture, seq);
      seq += packets.length;
      for (const reader of stream.readers) for (const p of packets) reader.deliver(0, p);
      clock.now += FRAME_MS;
    }
  };
  return { dir, stream, clock, segmenter, send };
}

describe('Segmenter', () => {
  it('keeps each group of pictures as an fMP4 file of its own, listed when the next keyframe comes', async () => {
    const { dir, stream, segmenter, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    const started = 1_000_000;
    send(25); // two whole groups of pictures, and half of the third
    const listed = segmenter.ring.list();
    expect(listed.map((s) => s.file)).toEqual(['r1-000000001.mp4', 'r1-000000002.mp4']);
    // Dated by when the pictures came: the first from its first picture, each a second long.
    expect(listed.map((s) => [s.startAt - started, s.endAt - started])).toEqual([
      [0, 1000],
      [1000, 2000],
    ]);
    expect(listed.map((s) => s.durationS)).toEqual([1, 1]);
    // Each file plays on its own: an init segment, then one fragment of ten pictures.
    for (const s of listed) {
      const boxes = readBoxes(readFileSync(path.join(dir, s.file)));
      expect(boxes.map((b) => b.type)).toEqual(['ftyp', 'moov', 'moof', 'mdat']);
      expect(findBoxes(boxes, 'trun')).toHaveLength(1);
    }
    // The third is still coming (in memory until its group of pictures is whole); the RAM index
    // lists what the ring holds.
    expect(readdirSync(dir).filter((f) => f.endsWith('.mp4'))).toHaveLength(2);
    expect(parseIndex(readFileSync(path.join(dir, SEGMENT_INDEX), 'utf8'))).toEqual(listed);
  });

  it("gives a clip's end from the group of pictures still coming, without waiting for the keyframe that closes it", async () => {
    const { dir, stream, segmenter, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    // The first second listed; of the second, pictures 10 and 11 dated (the timeline holds the newest
    // few until it knows their order: this stream's SPS allows reordering).
    send(15);
    const footage = await segmenter.footageFor(1_000_000 + 500, 1_000_000 + 1100, 60_000);
    const copy = footage!.selection.segments[1]!.file;
    expect(footage!.selection.segments.map((x) => x.file)).toEqual(['r1-000000001.mp4', copy]);
    expect(footage!.selection.startAt).toBe(1_000_000);
    expect(footage!.selection.endAt).toBe(1_000_000 + 1200);
    expect(footage!.selection.segments[1]!.durationS).toBeCloseTo(0.2, 6);
    // The copy plays on its own: the init segment and the two pictures dated.
    const copied = readBoxes(readFileSync(path.join(dir, copy)));
    expect(copied.map((b) => b.type)).toEqual(['ftyp', 'moov', 'moof', 'mdat']);
    expect(segmenter.ring.list()).toHaveLength(1);
    // The group goes on in its own file and is listed whole at the next keyframe: the cut is one more fragment.
    send(10);
    const whole = segmenter.ring.list()[1]!;
    expect([whole.file, whole.startAt, whole.endAt, whole.durationS]).toEqual([
      'r1-000000002.mp4',
      1_001_000,
      1_002_000,
      1,
    ]);
    const boxes = readBoxes(readFileSync(path.join(dir, whole.file)));
    expect(boxes.map((b) => b.type)).toEqual(['ftyp', 'moov', 'moof', 'mdat', 'moof', 'mdat']);
    footage!.release();
    expect(existsSync(path.join(dir, copy))).toBe(false);
  });

  it('lists a group of pictures cut to its last picture when the next keyframe comes', async () => {
    const { stream, segmenter, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    send(23); // dated through picture 19: the second group whole, its keyframe not yet seen
    const footage = await segmenter.footageFor(1_000_000 + 500, 1_000_000 + 1950, 60_000);
    expect(footage!.selection.endAt).toBe(1_000_000 + 2000);
    footage!.release();
    send(11); // the keyframes at 2 s and 3 s
    expect(segmenter.ring.list().map((x) => [x.file, x.startAt - 1_000_000, x.endAt - 1_000_000])).toEqual([
      ['r1-000000001.mp4', 0, 1000],
      ['r1-000000002.mp4', 1000, 2000],
      ['r1-000000003.mp4', 2000, 3000],
    ]);
  });

  it("waits for the pictures of a clip's end still on their way, then cuts", async () => {
    const { stream, segmenter, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    send(15);
    const waiting = segmenter.footageFor(1_000_000 + 500, 1_000_000 + 1800, 60_000);
    send(7); // dated through picture 18: 1.9 s
    const footage = await waiting;
    expect(footage!.selection.endAt).toBe(1_000_000 + 1900);
    expect(footage!.selection.segments.at(-1)!.file).toMatch(/^\.clip-\d+\.mp4$/);
    footage!.release();
  });

  it('takes the group of pictures listed when its keyframe comes first', async () => {
    const { stream, segmenter, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    send(15);
    const waiting = segmenter.footageFor(1_000_000 + 500, 1_000_000 + 1950, 60_000);
    send(10); // the keyframe at 2 s closes the second second (once the pictures the timeline waits for came)
    const footage = await waiting;
    expect(footage!.selection.segments.map((x) => x.file)).toEqual(['r1-000000001.mp4', 'r1-000000002.mp4']);
    expect(footage!.selection.endAt).toBe(1_000_000 + 2000);
  });

  it('gives what was received when the end does not come (a stalled stream): its run ends', async () => {
    const { stream, segmenter, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    send(15);
    const footage = await segmenter.footageFor(1_000_000 + 500, 1_000_000 + 5000, 250);
    expect(stream.readers.size).toBe(0);
    expect(footage!.selection.segments.map((x) => x.file)).toEqual(['r1-000000001.mp4', 'r1-000000002.mp4']);
    expect(footage!.selection.endAt).toBe(1_000_000 + 1500);
    expect(await segmenter.footageFor(1_000_000 + 9000, 1_000_000 + 10_000, 0)).toBeNull();
  });

  it('ending a run lists what was received of its group of pictures; the next run starts anew', async () => {
    const { dir, stream, segmenter, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    send(15);
    await segmenter.endRun();
    expect(stream.readers.size).toBe(0);
    const listed = segmenter.ring.list();
    expect(listed.map((s) => s.file)).toEqual(['r1-000000001.mp4', 'r1-000000002.mp4']);
    // All five pictures received of the unfinished group, the last as long as the one before.
    expect(listed[1]!.durationS).toBeCloseTo(0.5, 6);
    await expect.poll(() => stream.readers.size).toBe(1);
    expect(stream.acquired).toBe(2);
    // The new run starts at the next keyframe (2 s), and lists it at the one after.
    send(20);
    expect(segmenter.ring.list().map((s) => s.file)).toEqual([
      'r1-000000001.mp4',
      'r1-000000002.mp4',
      'r2-000000001.mp4',
    ]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.mp4'))).toHaveLength(3);
  });

  it('says the audio of the run a clip starts in, as its muxer writes it (no ffmpeg asked)', async () => {
    const { stream, segmenter, send } = setup(true);
    stream.setSdp(SDP_PCMU);
    stream.failNext(false);
    await expect.poll(() => stream.readers.size).toBe(1);
    send(25);
    await segmenter.endRun();
    // The camera comes back without its audio.
    stream.setSdp(SDP);
    await expect.poll(() => stream.readers.size).toBe(1);
    send(20);
    const first = segmenter.ring.list()[0];
    const back = segmenter.ring.list().at(-1);
    expect([first!.file, back!.file]).toEqual(['r1-000000001.mp4', 'r2-000000001.mp4']);
    const g711 = await segmenter.footageFor(first!.startAt + 100, first!.endAt - 100, 0);
    expect([g711!.selection.segments[0]!.file, g711!.audio]).toEqual([first!.file, 'G711']);
    const none = await segmenter.footageFor(back!.startAt + 100, back!.endAt - 100, 0);
    expect([none!.selection.segments[0]!.file, none!.audio]).toEqual([back!.file, null]);
    // A clip cut from the open group of pictures: the copy is of the run still going.
    send(5);
    const open = await segmenter.footageFor(back!.endAt + 100, back!.endAt + 200, 60_000);
    expect(open!.selection.segments[0]!.file).toMatch(/^\.clip-/);
    expect(open!.audio).toBeNull();
    open!.release();
  });

  it('tries again while the camera stream cannot be had, and after it ended', async () => {
    const { stream, send } = setup();
    await expect.poll(() => stream.readers.size).toBe(1);
    stream.failNext(true);
    send(10);
    for (const reader of [...stream.readers]) reader.evict('the camera went away');
    await expect.poll(() => stream.acquired, { timeout: 5000 }).toBeGreaterThanOrEqual(4);
    expect(stream.readers.size).toBe(0);
    stream.failNext(false);
    await expect.poll(() => stream.readers.size, { timeout: 5000 }).toBe(1);
  });

  it('sweeps only segment files no run listed: a clip being written keeps its concat list', async () => {
    const { dir, stream } = setup(true);
    const concatList = path.join(dir, '.rec_test.ffconcat');
    const stray = path.join(dir, 'r1-000000005.mp4');
    writeFileSync(concatList, 'ffconcat version 1.0\n');
    writeFileSync(stray, 'half a segment of a run that died');
    stream.failNext(false);
    await expect.poll(() => stream.readers.size).toBe(1);
    expect(existsSync(stray)).toBe(false);
    expect(existsSync(concatList)).toBe(true);
  });
});
