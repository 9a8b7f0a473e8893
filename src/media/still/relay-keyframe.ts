import type { StreamProfile } from '../../domain/types.js';
import type { FanOutReader } from '../relay/fanout.js';
import { StillError } from './errors.js';
import { keyframePicture, videoPlanOf, type KeyframePicture } from './keyframe-picture.js';

// The relay's cached keyframe of a device, for a still picture. A stream the relay already reads
// (a viewer, the recorder, the motion watcher) serves at once. When none is open, the preferred one
// is opened: a reader waits for its first keyframe (at most waitMs), then leaves, and the relay
// keeps the camera session for its rtsp.idle_close_s, so the pictures that follow (a page
// refreshing its stills) come from the cache without another session set-up (docs/api.md).

/** What this needs of a relay stream (StreamHandle). */
export interface KeyframeStream {
  readonly sdp: string;
  hasCachedKeyframe(): boolean;
  cachedKeyframePackets(): Array<{ track: number; packet: Buffer }>;
  attach(reader: FanOutReader): () => void;
}

export interface KeyframeStreams {
  /** The stream if the relay reads it now; never opens one. */
  peek(deviceId: string, profile: StreamProfile): KeyframeStream | null;
  /** Opens (or shares) the stream; throws when the camera's stream cannot be had. */
  acquire(deviceId: string, profile: StreamProfile): Promise<KeyframeStream>;
}

/**
 * The profiles to try, best first: the sub stream for a picture no wider than it (cheaper to
 * decode, and often open for the motion watcher), else the main stream.
 */
export function snapshotProfiles(width: number | null, hasSub: boolean, subMaxWidth: number): StreamProfile[] {
  if (!hasSub) return ['main'];
  return width !== null && width <= subMaxWidth ? ['sub', 'main'] : ['main', 'sub'];
}

function pictureOf(stream: KeyframeStream): KeyframePicture {
  return keyframePicture(videoPlanOf(stream.sdp), stream.cachedKeyframePackets());
}

/** The picture of an open stream's cached keyframe; null when none is open with one. */
export function cachedPicture(streams: KeyframeStreams, deviceId: string, profiles: readonly StreamProfile[]): KeyframePicture | null {
  let problem: StillError | null = null;
  for (const profile of profiles) {
    const stream = streams.peek(deviceId, profile);
    if (!stream?.hasCachedKeyframe()) continue;
    try {
      return pictureOf(stream);
    } catch (err) {
      if (!(err instanceof StillError)) throw err;
      problem = err; // e.g. the keyframe's last packet has not come yet: another profile may do
    }
  }
  if (problem && problem.failure !== 'no_keyframe') throw problem;
  return null;
}

/** Opens the stream and waits for its first complete keyframe; null when none came within waitMs. */
export async function awaitKeyframe(streams: KeyframeStreams, deviceId: string, profile: StreamProfile, waitMs: number): Promise<KeyframePicture | null> {
  const stream = await streams.acquire(deviceId, profile);
  const plan = videoPlanOf(stream.sdp);
  return new Promise<KeyframePicture | null>((resolve, reject) => {
    let detach: (() => void) | null = null;
    let done = false;
    const finish = (picture: KeyframePicture | null, err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // Leaving from inside deliver() would change the fan-out's reader list while it loops over it.
      queueMicrotask(() => detach?.());
      if (err) reject(err);
      else resolve(picture);
    };
    const timer = setTimeout(() => finish(null), waitMs);
    const reader: FanOutReader = {
      pendingBytes: () => 0,
      deliver: (track, packet) => {
        // A picture ends with its marker bit (RFC 3550 5.1); only then can the keyframe be whole.
        if (done || track !== plan.track || ((packet[1] ?? 0) & 0x80) === 0 || !stream.hasCachedKeyframe()) return;
        try {
          finish(keyframePicture(plan, stream.cachedKeyframePackets()));
        } catch (err) {
          if (!(err instanceof StillError)) return finish(null, err as Error);
          if (err.failure !== 'no_keyframe') finish(null, err);
        }
      },
      deliverRtcp: () => undefined,
      evict: () => finish(null),
    };
    try {
      detach = stream.attach(reader);
    } catch (err) {
      finish(null, err as Error);
    }
  });
}
