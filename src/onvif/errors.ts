import { GatewayError } from '../domain/errors.js';

// The typed outcomes of talking to a camera. Every camera call ends in a result or one of these,
// whatever the camera sends (or does not): the manager and the API map them, nothing else leaks.

export class CameraUnreachableError extends GatewayError.of('camera_unreachable') {}

export class CameraUnauthorizedError extends GatewayError.of('camera_unauthorized') {}

/** The camera answered, but with a SOAP Fault or a document we refuse. */
export class CameraFaultError extends GatewayError.of('camera_fault') {
  constructor(
    message: string,
    /**
     * Local names of the fault's Code/Subcode values (e.g. ["Receiver", "ActionNotSupported"]); empty when not a fault.
     */
    readonly codes: readonly string[] = [],
  ) {
    super(message);
  }
}

/** A SOAP document we refuse (too large, with a DTD, malformed, not an envelope, an empty Body). */
export class SoapXmlError extends GatewayError.of('soap_xml') {}

/**
 * A SOAP Fault from the device: it answered, but refused (codes: its Code/Subcode values, local names, outermost
 * first).
 */
export class SoapFaultError extends CameraFaultError {}
