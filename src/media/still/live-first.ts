import type { BaseLogger } from 'pino';
import type { StillInputFormat } from './decode.js';
import type { DecodeBatches } from './decode-batches.js';
import type { DecodeSlots } from './decode-slots.js';
import { StillError } from './errors.js';
import type { LiveDecoders } from './live-decoders.js';

// Which decoder makes a picture: a keyframe that decodes alone goes to the long-lived decoder of
// its size (in a decode slot, as every decode); one it cannot take (none free, backing off, or it
// failed on this picture: the failure is counted in the pool) is decoded by one ffmpeg run, as is
// a camera's JPEG. A picture is never lost to a long-lived decoder's trouble.

export type StillDecode = (
  format: StillInputFormat,
  input: Buffer,
  width: number | null,
  group: string,
  standalone: boolean,
  quality?: number,
) => Promise<Buffer>;

export function liveFirst(deps: {
  live: LiveDecoders | null;
  slots: DecodeSlots;
  batches: DecodeBatches;
  logger: BaseLogger;
}): StillDecode {
  const { live, slots, batches } = deps;
  return (format, input, width, group, standalone, quality) => {
    const oneRun = () => batches.decode(format, input, width, group, quality);
    if (!live || !standalone || format === 'mjpeg') return oneRun();
    return slots
      .run(async () => live.decode(format, input, width, group, quality))
      .then(
        (jpeg) => jpeg ?? oneRun(),
        (err: unknown) => {
          if (!(err instanceof StillError)) throw err;
          deps.logger.debug({ err: err.message }, 'snapshot: the long-lived decoder failed; one ffmpeg run instead');
          return oneRun();
        },
      );
  };
}
