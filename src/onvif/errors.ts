// The typed outcomes of talking to a camera. Every camera call ends in a result or one of these,
// whatever the camera sends (or does not): the manager and the API map them, nothing else leaks.

export class CameraUnreachableError extends Error {
  override readonly name = 'CameraUnreachableError';
}
export class CameraUnauthorizedError extends Error {
  override readonly name = 'CameraUnauthorizedError';
}
/** The camera answered, but with a SOAP Fault or a document we refuse. */
export class CameraFaultError extends Error {
  override readonly name = 'CameraFaultError';
  constructor(
    message: string,
    /** Local names of the fault's Code/Subcode values (e.g. ["Receiver", "ActionNotSupported"]); empty when not a fault. */
    readonly codes: readonly string[] = [],
  ) {
    super(message);
  }
}
