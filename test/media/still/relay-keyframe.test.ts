import { beforeAll, describe, expect, it } from 'vitest';
import type { StreamProfile } from '../../../src/domain/types.js';
import { FanOut } from '../../../src/media/relay/fanout.js';
import {
  awaitKeyframe,
  cachedPicture,
  snapshotProfiles,
  type KeyframeStream,
  type KeyframeStreams,
} from '../../../src/media/still/relay-keyframe.js';
import { captureRtp } from '../../support/rtp-capture.js';

// Which relay stream a picture comes from, and waiting for a keyframe on a stream just opened:
// real encoder packets (320x240, a keyframe every 5 pictures) in real fan-outs.

let capture: { packets: Buffer[]; sdp: string };
beforeAll(async () => {
  capture = await captureRtp(['-c:v', 'libx264', '-g', '5', '-bf', '0', '-x264-params', 'repeat-headers=1']);
}, 60_000);

function stream(fed: number): { stream: KeyframeStream; fan: FanOut } {
  const fan = new FanOut({ videoTrack: 0, codec: 'H264' });
  capture.packets.slice(0, fed).forEach((p) => fan.push(0, p));
  const handle: KeyframeStream = {
    sdp: capture.sdp,
    hasCachedKeyframe: () => fan.hasCachedKeyframe,
    cachedKeyframePackets: () => fan.cachedKeyframePackets(),
    attach: (reader) => {
      fan.add(reader);
      return () => fan.remove(reader);
    },
  };
  return { stream: handle, fan };
}

function relay(
  open: Partial<Record<StreamProfile, KeyframeStream>>,
  closed: Partial<Record<StreamProfile, KeyframeStream>> = {},
): KeyframeStreams & { acquired: StreamProfile[] } {
  const acquired: StreamProfile[] = [];
  return {
    acquired,
    peek: (_id, profile) => open[profile] ?? null,
    acquire: async (_id, profile) => {
      acquired.push(profile);
      const s = open[profile] ?? closed[profile];
      if (!s) throw new Error(`no ${profile} stream`);
      return s;
    },
  };
}

describe('snapshotProfiles', () => {
  it.each([
    [null, true, ['main', 'sub']],
    [320, true, ['sub', 'main']],
    [352, true, ['sub', 'main']],
    [353, true, ['main', 'sub']],
    [320, false, ['main']],
  ] as const)('width %s, sub stream %s: %j', (width, hasSub, want) => {
    expect(snapshotProfiles(width, hasSub, 352)).toEqual(want);
  });
});

describe('cachedPicture', () => {
  it('takes the first open stream in order whose keyframe is wide enough', () => {
    const sub = stream(40).stream;
    const main = stream(40).stream;
    expect(cachedPicture(relay({ sub, main }), 'cam', ['sub', 'main'], 320).picture?.width).toBe(320);
    // 400 wide: the 320-pixel sub picture will not do; the main stream is open, so it serves.
    const choice = cachedPicture(relay({ sub }), 'cam', ['sub', 'main'], 400);
    expect(choice.picture).toBeNull();
    expect(choice.narrower?.width).toBe(320);
    expect(cachedPicture(relay({ main }), 'cam', ['main', 'sub'], 3840).picture?.width).toBe(320); // nothing is wider than main
  });

  it('nothing open, or nothing cached yet: no picture', () => {
    expect(cachedPicture(relay({}), 'cam', ['main'], null)).toEqual({ picture: null, narrower: null });
    expect(cachedPicture(relay({ main: stream(0).stream }), 'cam', ['main'], null)).toEqual({
      picture: null,
      narrower: null,
    });
  });
});

describe('awaitKeyframe', () => {
  it('opens the stream, takes its first whole keyframe as it arrives, then leaves the fan-out', async () => {
    const { stream: main, fan } = stream(0);
    const streams = relay({}, { main });
    const waiting = awaitKeyframe(streams, 'cam', 'main', 20_000);
    await new Promise((r) => setImmediate(r));
    expect(fan.readerCount).toBe(1);
    for (const p of capture.packets.slice(0, 40)) fan.push(0, p);
    const picture = await waiting;
    expect(picture?.width).toBe(320);
    expect(streams.acquired).toEqual(['main']);
    await new Promise((r) => setImmediate(r));
    expect(fan.readerCount).toBe(0);
  });

  it('no keyframe within waitMs: null, and the reader is gone', async () => {
    const { stream: main, fan } = stream(0);
    expect(await awaitKeyframe(relay({}, { main }), 'cam', 'main', 50)).toBeNull();
    await new Promise((r) => setImmediate(r));
    expect(fan.readerCount).toBe(0);
  });

  it('a stream that cannot be opened: the error, for the caller to fall back', async () => {
    await expect(awaitKeyframe(relay({}), 'cam', 'main', 50)).rejects.toThrow('no main stream');
  });
});
