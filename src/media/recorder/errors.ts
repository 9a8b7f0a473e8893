import { GatewayError } from '../../domain/errors.js';

/**
 * A run of ffmpeg (assembly, thumbnails, probes) failed: exit status, signal or time limit; the last of its stderr
 * attached.
 */
export class FfmpegError extends GatewayError.of('ffmpeg') {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}
