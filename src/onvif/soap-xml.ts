import { createRequire } from 'node:module';

// Cameras are untrusted input. Every SOAP document we read goes through here: size-capped, DTDs
// and entity declarations refused before any parser sees them, then parsed with the same parser
// and conventions the `onvif` library uses for its own calls (namespace prefixes stripped, element
// names lower-camel-cased, arrays everywhere, attributes under `$`, text under `_`), so code that
// reads library results and code that reads raw documents see one shape.

export const MAX_SOAP_BYTES = 1024 * 1024;

export class SoapXmlError extends Error {
  override readonly name = 'SoapXmlError';
}

/** A SOAP Fault from the device: it answered, but refused. */
export class SoapFaultError extends Error {
  override readonly name = 'SoapFaultError';
}

type ParseCallback = (err: Error | null, body: unknown) => void;
interface OnvifUtils {
  parseSOAPString(xml: string, callback: ParseCallback, statusCode?: number): void;
  linerase(xml: unknown): unknown;
}

// The library's parser is not part of its typed public surface; it is loaded once here so the
// rest of the code never touches library internals (see src/onvif/library.ts for the calls).
const utils = createRequire(import.meta.url)('onvif/lib/utils.js') as OnvifUtils;

/**
 * The library strips namespace declarations in time quadratic in their number (320 KB of them
 * blocked the event loop for 3 s); real answers carry a few dozen.
 */
export const MAX_XMLNS = 256;

/** Refuses what no camera needs to send: oversized documents, DTDs, entity declarations, namespace floods. */
export function checkSoapText(xml: string): void {
  if (Buffer.byteLength(xml, 'utf8') > MAX_SOAP_BYTES) throw new SoapXmlError(`SOAP document larger than ${MAX_SOAP_BYTES} bytes`);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SoapXmlError('SOAP document with a DTD or entity declaration refused');
  if (countXmlns(xml) > MAX_XMLNS) throw new SoapXmlError(`SOAP document with more than ${MAX_XMLNS} namespace declarations refused`);
}

export function countXmlns(text: string): number {
  let n = 0;
  for (let i = text.indexOf('xmlns'); i !== -1; i = text.indexOf('xmlns', i + 5)) n++;
  return n;
}

/**
 * Parses a SOAP envelope and returns its Body (an array with one element, xml2js style).
 * Throws SoapXmlError for malformed or refused documents and SoapFaultError for a SOAP Fault.
 */
export function parseSoapBody(xml: string): Promise<Record<string, unknown>> {
  checkSoapText(xml);
  return new Promise((resolve, reject) => {
    utils.parseSOAPString(xml, (err, body) => {
      if (err) {
        reject(err.message.startsWith('ONVIF SOAP Fault') ? new SoapFaultError(err.message.replace(/^ONVIF SOAP Fault: /, '')) : new SoapXmlError(err.message));
        return;
      }
      const first = Array.isArray(body) ? (body[0] as unknown) : undefined;
      if (typeof first !== 'object' || first === null) {
        reject(new SoapXmlError('SOAP Body is empty'));
        return;
      }
      resolve(first as Record<string, unknown>);
    });
  });
}

/** The library's simplification of xml2js output (single-element arrays unwrapped, "true"/numbers typed). */
export function simplify(node: unknown): unknown {
  return utils.linerase(node);
}

// Readers for the xml2js shape (arrays everywhere, attributes under `$`, text under `_`).

export type XmlObject = Record<string, unknown>;

/** A plain element object (not an array, and not a Date, which `simplify` makes of timestamps). */
export function isXmlObject(v: unknown): v is XmlObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** The first element of an xml2js array (or the value itself when it is not one). */
export function firstOf(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A child by name, ignoring case: the library camel-cases only names whose second letter is lower
 * case ("XAddrs" and "UTCTime" stay, "MessageID" becomes "messageID"), and firmware is loose about
 * case anyway.
 */
export function childOf(obj: XmlObject, name: string): unknown {
  if (Object.hasOwn(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(obj)) {
    if (key.toLowerCase() === lower) return obj[key];
  }
  return undefined;
}
