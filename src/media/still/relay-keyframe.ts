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
 * The profiles to try, best first: the sub stream for a picture no wider than subMaxWidth (cheaper
 * to decode, and often open for the motion watcher), else the main stream.
 */
export function snapshotProfiles(width: number | null, hasSub: boolean, subMaxWidth: number): StreamProfile[] {
  if (!hasSub) return ['main'];
  return width !== null && width <= subMaxWidth ? ['sub', 'main'] : ['main', 'sub'];
}

function pictureOf(stream: KeyframeStream): KeyframePicture {
  return keyframePicture(videoPlanOf(stream.sdp), stream.cachedKeyframePackets());
}

/** Whether a picture will do for `width`: wide enough, or from the main stream (nothing is wider). */
function wideEnough(picture: KeyframePicture, profile: StreamProfile, width: number | null): boolean {
  return profile === 'main' || width === null || picture.width === null || picture.width >= width;
}

export interface CachedChoice {
  /** A picture that will do; null when none. */
  picture: KeyframePicture | null;
  /** A picture narrower than asked (of the sub stream), for when the main stream cannot be had. */
  narrower: KeyframePicture | null;
}

/** The cached keyframe of the open streams, in the order of `profiles`. */
export function cachedPicture(
  streams: KeyframeStreams,
  deviceId: string,
  profiles: readonly StreamProfile[],
  width: number | null,
): CachedChoice {
  let problem: StillError | null = null;
  let narrower: KeyframePicture | null = null;
  for (const profile of profiles) {
    const stream = streams.peek(deviceId, profile);
    if (!stream?.hasCachedKeyframe()) continue;
    try {
      const picture = pictureOf(stream);
      if (wideEnough(picture, profile, width)) return { picture, narrower: null };
      narrower = picture;
    } catch (err) {
      if (!(err instanceof StillError)) throw err;
      problem = err; // e.g. the keyframe's last packet has not come yet: another profile may do
    }
  }
  if (problem && problem.failure !== 'no_keyframe' && !narrower) throw problem;
  return { picture: null, narrower };
}

/** Opens the stream and waits for its first complete keyframe; null when none came within waitMs. */
export async function awaitKeyframe(
  streams: KeyframeStreams,
  deviceId: string,
  profile: StreamProfile,
  waitMs: number,
): Promise<KeyframePicture | null> {
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
