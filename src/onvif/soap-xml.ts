import { Parser } from 'xml2js';
import { SoapFaultError, SoapXmlError } from './errors.js';

// Cameras are untrusted input. Every SOAP document we read goes through here: size-capped, DTDs
// and entity declarations refused before any parser sees them, then parsed with xml2js under fixed
// conventions (namespace declarations and prefixes stripped, element names lower-camel-cased the
// way the onvif library did, arrays everywhere, attributes under `$`, text under `_`), so every
// reader in src/onvif sees one shape. Namespaces that matter are checked on the raw text.

export const MAX_SOAP_BYTES = 1024 * 1024;

const SOAP_ENVELOPE_NAMESPACES = new Set([
  'http://www.w3.org/2003/05/soap-envelope',
  'http://schemas.xmlsoap.org/soap/envelope/',
]);

/** "ter:NotAuthorized" → "NotAuthorized"; names in camera answers keep their case otherwise. */
const localName = (name: string): string => name.slice(name.lastIndexOf(':') + 1);

/**
 * xml2js tag names: prefix dropped, then lower-camel-cased unless the second letter is upper case ("UTCTime" stays).
 */
function tagName(name: string): string {
  const local = localName(name);
  const second = local.charAt(1);
  return second && second.toUpperCase() !== second ? local.charAt(0).toLowerCase() + local.slice(1) : local;
}

/**
 * Real answers carry a few dozen namespace declarations; thousands only slow the parser down
 * (the onvif library's stripping was quadratic in their number: 320 KB of them blocked 3 s).
 */
export const MAX_XMLNS = 256;

/** Refuses what no camera needs to send: oversized documents, DTDs, entity declarations, namespace floods. */
export function checkSoapText(xml: string): void {
  if (Buffer.byteLength(xml, 'utf8') > MAX_SOAP_BYTES)
    throw new SoapXmlError(`SOAP document larger than ${MAX_SOAP_BYTES} bytes`);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SoapXmlError('SOAP document with a DTD or entity declaration refused');
  if (countXmlns(xml) > MAX_XMLNS)
    throw new SoapXmlError(`SOAP document with more than ${MAX_XMLNS} namespace declarations refused`);
}

export function countXmlns(text: string): number {
  let n = 0;
  for (let i = text.indexOf('xmlns'); i !== -1; i = text.indexOf('xmlns', i + 5)) n++;
  return n;
}

/**
 * The root must be an Envelope in a SOAP namespace, declared on the Envelope itself (every camera
 * capture does so): prefix stripping would otherwise accept any document shaped like one.
 */
function checkEnvelopeNamespace(xml: string): void {
  const root = /<([\w.-]+:)?Envelope\b([^>]*)>/.exec(xml);
  if (!root) throw new SoapXmlError('not a SOAP envelope');
  const prefix = root[1] ? root[1].slice(0, -1) : null;
  const decl = new RegExp(
    `\\sxmlns${prefix ? `:${prefix.replace(/[.-]/g, '\\$&')}` : ''}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`,
  ).exec(root[2] ?? '');
  const ns = decl ? (decl[1] ?? decl[2]) : undefined;
  if (!ns || !SOAP_ENVELOPE_NAMESPACES.has(ns))
    throw new SoapXmlError(`SOAP envelope in namespace ${ns ?? '(none)'} refused`);
}

/** Namespace declarations go before parsing (one linear pass), so `$` holds only real attributes. */
const XMLNS_ATTR = /\sxmlns(?::[\w.-]+)?\s*=\s*(?:"[^"]*"|'[^']*')/g;

function parser(): Parser {
  return new Parser({ tagNameProcessors: [tagName] });
}

/** Code/Subcode values of a parsed Fault, local names, outermost first. */
function faultCodes(fault: XmlObject): string[] {
  const codes: string[] = [];
  let level: unknown = firstOf(childOf(fault, 'code'));
  for (let depth = 0; depth < 4 && isXmlObject(level); depth++) {
    const value = firstOf(childOf(level, 'value'));
    const text = typeof value === 'string' ? value : isXmlObject(value) && typeof value._ === 'string' ? value._ : null;
    if (text) codes.push(localName(text.trim()));
    level = firstOf(childOf(level, 'subcode'));
  }
  // SOAP 1.1 faults have a faultcode text instead.
  const code11 = firstOf(childOf(fault, 'faultcode'));
  if (codes.length === 0 && typeof code11 === 'string') codes.push(localName(code11.trim()));
  return codes;
}

function faultReason(fault: XmlObject): string {
  const reason = firstOf(childOf(fault, 'reason'));
  const text = isXmlObject(reason) ? firstOf(childOf(reason, 'text')) : firstOf(childOf(fault, 'faultstring'));
  const s = typeof text === 'string' ? text : isXmlObject(text) && typeof text._ === 'string' ? text._ : '';
  return s.trim().slice(0, 300);
}

/**
 * Parses a SOAP envelope and returns its Body's content (element name → xml2js array).
 * Rejects with SoapXmlError for malformed, refused or empty documents and SoapFaultError for a
 * SOAP Fault; never throws synchronously.
 */
export async function parseSoapBody(xml: string): Promise<Record<string, unknown>> {
  checkSoapText(xml);
  checkEnvelopeNamespace(xml);
  let doc: unknown;
  try {
    doc = await parser().parseStringPromise(xml.replace(XMLNS_ATTR, ''));
  } catch (err) {
    throw new SoapXmlError(
      `malformed SOAP document: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`,
    );
  }
  const envelope = isXmlObject(doc) ? childOf(doc, 'envelope') : undefined;
  const body = isXmlObject(envelope) ? firstOf(childOf(envelope, 'body')) : undefined;
  if (!isXmlObject(body) || Object.keys(body).every((k) => k === '$')) throw new SoapXmlError('SOAP Body is empty');
  const fault = firstOf(childOf(body, 'fault'));
  if (isXmlObject(fault)) {
    const codes = faultCodes(fault);
    throw new SoapFaultError(
      `${faultReason(fault) || 'SOAP Fault'}${codes.length ? ` (${codes.join('/')})` : ''}`,
      codes,
    );
  }
  return body;
}

// Readers for the xml2js shape (arrays everywhere, attributes under `$`, text under `_`).

export type XmlObject = Record<string, unknown>;

/** A plain element object (not an array, and not a Date). */
export function isXmlObject(v: unknown): v is XmlObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** The first element of an xml2js array (or the value itself when it is not one). */
export function firstOf(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A child by name, ignoring case: names are camel-cased only when their second letter is lower
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
