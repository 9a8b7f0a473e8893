import { describe, expect, it } from 'vitest';
import { CameraFootage } from '../../../src/media/footage/camera-footage.js';
import type { OpenFootageFile } from '../../../src/media/footage/file-writer.js';
import type { FootageFile } from '../../../src/store/footage.js';
import { h264Picture, h264Sdp } from '../fmp4/h264-stream.js';

// One camera's continuous footage fed by hand (10 pictures a second, a keyframe every second) on a
// clock the test moves: how a run is dated and when footage starts a new run (and a new file), with
// the streams cameras really send: a backlog in a burst as the stream starts, a camera clock running
// fast, a pause. Files are kept in memory: what is measured is their names and dates.

const SDP = h264Sdp();
const START = 1_800_000_000_000;

function setup() {
  const clock = { now: START };
  const files: FootageFile[] = [];
  const open: OpenFootageFile = () => ({
    pendingBytes: 0,
    append: () => undefined,
    finish: () => Promise.resolve(1000),
    abandon: () => Promise.resolve(),
  });
  const footage = new CameraFootage(SDP, {
    deviceId: 'dev_test',
    profile: 'sub',
    fileS: 10,
    maxPendingBytes: 64 << 20,
    resyncMs: 2000,
    open,
    onFile: (f) => files.push(f),
    onDiskError: (err) => {
      throw err;
    },
    onEnded: () => undefined,
    wallClock: () => clock.now,
  });
  footage.setStarts([]);
  let seq = 0;
  let picture = 0;
  /** Sends `n` pictures (a keyframe each 10th), the clock moving `frameMs` after each. */
  const send = (n: number, frameMs: number) => {
    for (let i = 0; i < n; i++, picture++) {
      const packets = h264Picture(picture, seq);
      seq += packets.length;
      for (const p of packets) footage.deliver(0, p);
      clock.now += frameMs;
    }
  };
  return { clock, files, footage, send };
}

describe('CameraFootage dating', () => {
  it('dates a stream that starts with a backlog by the paced pictures after it: one run, files of fileS', async () => {
    const { clock, files, footage, send } = setup();
    // 8 s the camera had buffered, handed over in 0.4 s, then the live pictures as they are taken.
    send(80, 5);
    const liveFrom = clock.now;
    send(300, 100);
    await footage.stop();
    expect(footage.stats.resyncs).toBe(0);
    // The backlog's first picture was taken 8 s before the live ones began.
    expect(files[0]!.startMs).toBe(liveFrom - 8000);
    // Files of about fileS (10 s) one after the other, not one per group of pictures.
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(files.length).toBeLessThanOrEqual(5);
    for (let i = 1; i < files.length; i++) expect(files[i]!.startMs).toBe(files[i - 1]!.endMs);
    expect(footage.stats.aheadMs).toBe(0);
  });

  it('keeps one run when the camera clock runs fast (2 %), saying how far ahead its dating gets', async () => {
    const { files, footage, send } = setup();
    // 300 s of media in 294 s of the gateway's clock: 6 s ahead at the end. Files close by the
    // gateway's clock at fileS from their dated start, so they hold a little more than 10 s.
    send(3000, 98);
    expect(footage.stats.aheadMs).toBeGreaterThan(4000);
    await footage.stop();
    expect(footage.stats.resyncs).toBe(0);
    expect(files.length).toBeGreaterThanOrEqual(20);
    expect(files.length).toBeLessThanOrEqual(31);
    for (let i = 1; i < files.length; i++) expect(files[i]!.startMs).toBe(files[i - 1]!.endMs);
  });

  it('starts a new run after a pause (the gateway clock ahead): a file with a gap before it', async () => {
    const { clock, files, footage, send } = setup();
    send(150, 100);
    clock.now += 5000; // nothing came for 5 s
    send(150, 100);
    await footage.stop();
    expect(footage.stats.resyncs).toBe(1);
    const gaps = files.slice(1).map((f, i) => f.startMs - files[i]!.endMs);
    expect(gaps.filter((g) => g !== 0)).toHaveLength(1);
    expect(Math.max(...gaps)).toBeGreaterThan(4000);
  });
});
