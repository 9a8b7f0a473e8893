import { HlsRequestError } from './errors.js';

// The Blocking Playlist Reload parameters of a playlist request (RFC 8216bis 6.2.5.2): `_HLS_msn=M`
// asks for a playlist holding Media Segment M, `_HLS_part=N` with it for Partial Segment N of M.
// Values are decimal-integers; we take them up to 2^53 − 1 (beyond is no sequence number a live
// window reaches). Whether M is too far ahead is for the live window (live-window.ts) to say.

export interface BlockingRequest {
  msn: number;
  /** null: the whole segment M (or any of its parts, once M is complete). */
  part: number | null;
}

const DECIMAL_INTEGER = /^(0|[1-9][0-9]{0,15})$/;

function parseValue(name: string, value: unknown): number {
  if (typeof value !== 'string') throw new HlsRequestError(`${name} must be given once`);
  if (!DECIMAL_INTEGER.test(value)) throw new HlsRequestError(`${name} is not a decimal integer`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new HlsRequestError(`${name} is out of range`);
  return n;
}

/**
 * The blocking request in a parsed query string (values as a query parser gives them: a string, or
 * an array when repeated), or null for a plain playlist request. An HlsRequestError for anything
 * the server must answer with 400.
 */
export function parseBlockingRequest(query: Readonly<Record<string, unknown>>): BlockingRequest | null {
  const msn = query._HLS_msn;
  const part = query._HLS_part;
  if (msn === undefined) {
    if (part !== undefined) throw new HlsRequestError('_HLS_part without _HLS_msn');
    return null;
  }
  return { msn: parseValue('_HLS_msn', msn), part: part === undefined ? null : parseValue('_HLS_part', part) };
}
