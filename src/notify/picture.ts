import type { BaseLogger } from 'pino';

// The picture of a push: the camera's current picture from the still machinery (the relay's
// latest keyframe, decoded by its long-lived decoder for this size and quality: no process started
// per picture), made smaller when it does not fit the few kilobytes a push record leaves it
// (src/notify/payload.ts): coarser, then narrower, one short ffmpeg run each.

/** What the still machinery is asked for: 160 pixels wide, coarse enough to fit most of the time. */
const FIRST = { width: 160, quality: 12 };
/** Widths and ffmpeg JPEG quantisers tried in turn after it, until the picture fits. */
const STEPS: ReadonlyArray<{ width: number; quality: number }> = [
  { width: 160, quality: 20 },
  { width: 160, quality: 31 },
  { width: 112, quality: 31 },
];
/** Made pictures kept, by the still they were made from (several subscriptions, one alert). */
const MAX_KEPT = 32;

export interface PictureSources {
  /** The camera's picture now, this wide, with this ffmpeg JPEG quantiser (src/media/still's Snapshots). */
  still(deviceId: string, width: number, quality: number): Promise<{ jpeg: Buffer; etag: string }>;
  /** A JPEG re-encoded this wide with this quantiser (ffmpeg). */
  shrink(jpeg: Buffer, width: number, quality: number): Promise<Buffer>;
  logger: BaseLogger;
}

/** A JPEG of the camera of at most maxBytes, or null (no picture to be had, or none small enough). */
export function pushPictures(sources: PictureSources): (deviceId: string, maxBytes: number) => Promise<Buffer | null> {
  const made = new Map<string, Buffer | null>();
  return async (deviceId, maxBytes) => {
    try {
      const still = await sources.still(deviceId, FIRST.width, FIRST.quality);
      if (still.jpeg.length <= maxBytes) return still.jpeg;
      const key = `${still.etag}/${maxBytes}`;
      if (made.has(key)) return made.get(key) ?? null;
      let fitting: Buffer | null = null;
      // Each step is an ffmpeg run: begin where the still's size says the first fit is likely.
      const over = still.jpeg.length / maxBytes;
      for (const step of STEPS.slice(over > 1.6 ? 1 : 0)) {
        const smaller = await sources.shrink(still.jpeg, step.width, step.quality);
        if (smaller.length <= maxBytes) {
          fitting = smaller;
          break;
        }
      }
      if (made.size >= MAX_KEPT) made.delete(made.keys().next().value as string);
      made.set(key, fitting);
      return fitting;
    } catch (err) {
      sources.logger.debug({ deviceId, err: (err as Error).message }, 'no picture for the push');
      return null;
    }
  };
}
