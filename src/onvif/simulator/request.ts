import { parseStringPromise, processors } from 'xml2js';
import { checkSoapText } from '../soap-xml.js';
import type { UsernameToken } from './wsse.js';

// Parses a SOAP request as a camera would: the operation is the Body's first element.

export interface SoapRequest {
  operation: string; // local name, e.g. GetDeviceInformation
  body: Record<string, unknown>; // the operation element, xml2js shape (prefixes stripped)
  token: UsernameToken | null;
}

const text = (node: unknown): string | null => {
  const first = Array.isArray(node) ? (node[0] as unknown) : node;
  if (typeof first === 'string') return first;
  if (first && typeof first === 'object' && typeof (first as { _?: unknown })._ === 'string')
    return (first as { _: string })._;
  return null;
};
const child = (node: unknown, name: string): unknown => {
  const first = Array.isArray(node) ? (node[0] as unknown) : node;
  return first && typeof first === 'object' ? (first as Record<string, unknown>)[name] : undefined;
};

export async function parseSoapRequest(xml: string): Promise<SoapRequest | null> {
  try {
    checkSoapText(xml);
    const doc = (await parseStringPromise(xml, { tagNameProcessors: [processors.stripPrefix] })) as Record<
      string,
      unknown
    >;
    const envelope = child(doc, 'Envelope');
    const body = child(envelope, 'Body');
    const first = Array.isArray(body) ? (body[0] as unknown) : body;
    if (!first || typeof first !== 'object') return null;
    const operation = Object.keys(first).find((k) => k !== '$');
    if (!operation) return null;
    const token = child(child(child(envelope, 'Header'), 'Security'), 'UsernameToken');
    const username = text(child(token, 'Username'));
    const digest = text(child(token, 'Password'));
    const nonce = text(child(token, 'Nonce'));
    const created = text(child(token, 'Created'));
    const opNode = (first as Record<string, unknown>)[operation];
    return {
      operation,
      body: ((Array.isArray(opNode) ? opNode[0] : opNode) ?? {}) as Record<string, unknown>,
      token:
        username !== null && digest !== null && nonce !== null && created !== null
          ? { username, passwordDigest: digest, nonce, created }
          : null,
    };
  } catch {
    return null;
  }
}

/** Text of a direct child element of the operation (e.g. ProfileToken), or null. */
export function field(body: Record<string, unknown>, name: string): string | null {
  return text(body[name]);
}
