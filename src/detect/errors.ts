/** A frame that cannot be used: corrupt or truncated JPEG, or bytes that do not match its size. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/** The model could not be loaded (missing or damaged files, backend failure): detection is off. */
export class ModelLoadError extends Error {
  override readonly name = 'ModelLoadError';
}

/** A check asked of a detector that is not running (failed to load, or closed). */
export class DetectorUnavailableError extends Error {
  override readonly name = 'DetectorUnavailableError';
}

/** A pending check pushed out of the full queue; the event stays plain motion. */
export class CheckDroppedError extends Error {
  override readonly name = 'CheckDroppedError';
}
