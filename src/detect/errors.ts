import { GatewayError } from '../domain/errors.js';

/** A frame that cannot be used: corrupt or truncated JPEG, or bytes that do not match its size. */
export class FrameError extends GatewayError.of('frame') {}

/** The model could not be loaded (missing or damaged files, backend failure): detection is off. */
export class ModelLoadError extends GatewayError.of('model_load') {}

/** A check asked of a detector that is not running (failed to load, or closed). */
export class DetectorUnavailableError extends GatewayError.of('detector_unavailable') {}

/** A pending check pushed out of the full queue; the event stays plain motion. */
export class CheckDroppedError extends GatewayError.of('check_dropped') {}
