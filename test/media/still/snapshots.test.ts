import { describe, expect, it } from 'vitest';
import { DeviceUnavailableError } from '../../../src/domain/errors.js';
import { DecodeSlots } from '../../../src/media/still/decode-slots.js';
import { StillBusyError, StillError } from '../../../src/media/still/errors.js';
import type { KeyframePicture } from '../../../src/media/still/keyframe-picture.js';
import { Snapshots, type SnapshotSources } from '../../../src/media/still/snapshots.js';

// The service's rules with stand-in sources and decoder (the real ones have tests of their own and
// meet in test/api/routes/snapshot.test.ts): coalescing, the cache's life, the camera fallback.

const PICTURE: KeyframePicture = {
  codec: 'H264',
  annexB: Buffer.from('0000000165', 'hex'),
  width: 1280,
  height: 720,
  standalone: true,
  sps: 'x',
};
// A new keyframe each time the relay is asked (a camera whose GOP is shorter than the cache's life).
let keyframes = 0;
const nextKeyframe = async (): Promise<KeyframePicture> => ({
  ...PICTURE,
  annexB: Buffer.concat([PICTURE.annexB, Buffer.from(String(++keyframes))]),
});
const CAMERA_JPEG = Buffer.from('ffd8cafeffd9', 'hex');

function rig(over: Partial<SnapshotSources> = {}, slots = new DecodeSlots(2, 8), maxCachedBytes?: number) {
  let clock = 1_000;
  const decodes: Array<{ format: string; width: number | null }> = [];
  const gates: Array<() => void> = [];
  let gated = false;
  const sources: SnapshotSources = {
    has: () => ({ stream: true, cameraSnapshot: true }),
    keyframe: nextKeyframe,
    cameraJpeg: async () => CAMERA_JPEG,
    ...over,
  };
  const snapshots = new Snapshots({
    sources,
    cacheMs: 1000,
    maxCached: 3,
    ...(maxCachedBytes === undefined ? {} : { maxCachedBytes }),
    now: () => clock,
    decode: (format, _input, width) =>
      slots.run(async () => {
        decodes.push({ format, width });
        if (gated) await new Promise<void>((r) => gates.push(r));
        return Buffer.concat([
          Buffer.of(0xff, 0xd8),
          Buffer.from(`${format}/${width}/${decodes.length}`),
          Buffer.of(0xff, 0xd9),
        ]);
      }),
  });
  return {
    snapshots,
    decodes,
    gate: () => void (gated = true),
    open: () => {
      gated = false;
      for (const g of gates.splice(0)) g();
    },
    advance: (ms: number) => void (clock += ms),
  };
}

describe('Snapshots', () => {
  it('N requests at once for one device and width: one decode, one answer for all', async () => {
    const r = rig();
    r.gate();
    const all = Array.from({ length: 50 }, () => r.snapshots.get('cam', 320));
    await new Promise((res) => setImmediate(res));
    expect(r.snapshots.stats.inFlight).toBe(1);
    r.open();
    const answers = await Promise.all(all);
    expect(r.decodes).toEqual([{ format: 'h264', width: 320 }]);
    expect(new Set(answers.map((a) => a.etag)).size).toBe(1);
    expect(r.snapshots.stats).toMatchObject({ coalesced: 49, inFlight: 0, decodes: { keyframe: 1, camera_jpeg: 0 } });
  });

  it('the picture is served from the cache for cacheMs, then made again; each width is its own', async () => {
    const r = rig();
    const first = await r.snapshots.get('cam', null);
    r.advance(999);
    expect(await r.snapshots.get('cam', null)).toBe(first);
    expect(r.snapshots.stats.cacheHits).toBe(1);
    await r.snapshots.get('cam', 640);
    expect(r.decodes).toHaveLength(2);
    r.advance(1);
    const again = await r.snapshots.get('cam', null);
    expect(again.etag).not.toBe(first.etag);
    expect(r.decodes).toHaveLength(3);
  });

  it('the keyframe decoded last time: its picture again (same ETag), not decoded again', async () => {
    const r = rig({ keyframe: async () => PICTURE });
    const first = await r.snapshots.get('cam', 320);
    r.advance(5000);
    const again = await r.snapshots.get('cam', 320);
    expect(again.etag).toBe(first.etag);
    expect(r.decodes).toHaveLength(1);
    expect(r.snapshots.stats).toMatchObject({ reused: 1, decodes: { keyframe: 1 } });
    await r.snapshots.get('cam', 640); // another width is another picture
    expect(r.decodes).toHaveLength(2);
  });

  it('keeps at most maxCached pictures', async () => {
    const r = rig();
    for (const id of ['a', 'b', 'c', 'd']) await r.snapshots.get(id, null);
    await r.snapshots.get('a', null); // pushed out by d: made again
    expect(r.decodes).toHaveLength(5);
    await r.snapshots.get('d', null);
    expect(r.decodes).toHaveLength(5);
  });

  it('keeps at most maxCachedBytes of pictures', async () => {
    const r = rig({}, undefined, 30); // each stand-in JPEG is 14 bytes: two fit
    for (const id of ['a', 'b', 'c']) await r.snapshots.get(id, null);
    await r.snapshots.get('c', null);
    await r.snapshots.get('b', null);
    expect(r.decodes).toHaveLength(3);
    await r.snapshots.get('a', null); // pushed out by c
    expect(r.decodes).toHaveLength(4);
  });

  it("no keyframe from the relay: the camera's JPEG as it is, or scaled to the width asked", async () => {
    const r = rig({ keyframe: async () => null });
    const full = await r.snapshots.get('cam', null);
    expect(full).toMatchObject({ jpeg: CAMERA_JPEG, source: 'camera' });
    expect(r.decodes).toEqual([]);
    const scaled = await r.snapshots.get('cam', 200);
    expect(scaled.source).toBe('camera');
    expect(r.decodes).toEqual([{ format: 'mjpeg', width: 200 }]);
    expect(r.snapshots.stats).toMatchObject({ cameraFetches: 2, decodes: { keyframe: 0, camera_jpeg: 1 } });
  });

  it("a broken keyframe: the camera's JPEG, and the relay's failure counted", async () => {
    const r = rig({
      keyframe: async () => {
        throw new StillError('no_parameter_sets', 'no SPS');
      },
    });
    expect((await r.snapshots.get('cam', null)).source).toBe('camera');
    expect(r.snapshots.stats.failures.relay).toBe(1);
  });

  it('nothing to make a picture from: DeviceUnavailableError; no keyframe and no snapshot URI: StillError', async () => {
    await expect(
      rig({ has: () => ({ stream: false, cameraSnapshot: false }) }).snapshots.get('cam', null),
    ).rejects.toBeInstanceOf(DeviceUnavailableError);
    const none = rig({ has: () => ({ stream: true, cameraSnapshot: false }), keyframe: async () => null });
    await expect(none.snapshots.get('cam', null)).rejects.toMatchObject({ failure: 'unavailable' });
  });

  it('a camera that fails: StillError camera_snapshot_failed; a failure is not cached', async () => {
    let fail = true;
    const r = rig({
      keyframe: async () => null,
      cameraJpeg: async () => {
        if (fail) throw new Error('connection refused');
        return CAMERA_JPEG;
      },
    });
    await expect(r.snapshots.get('cam', null)).rejects.toMatchObject({ failure: 'camera_snapshot_failed' });
    fail = false;
    await expect(r.snapshots.get('cam', null)).resolves.toMatchObject({ source: 'camera' });
  });

  it('decodes past the slots and their queue are refused with StillBusyError', async () => {
    const r = rig({}, new DecodeSlots(1, 1));
    r.gate();
    const answers = ['a', 'b', 'c'].map((id) => r.snapshots.get(id, null).catch((e: unknown) => e));
    await new Promise((res) => setImmediate(res));
    r.open();
    const results = await Promise.all(answers);
    expect(results.filter((x) => x instanceof StillBusyError)).toHaveLength(1);
    expect(r.decodes).toHaveLength(2);
  });
});
