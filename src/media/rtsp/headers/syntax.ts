import { RtspParseError } from '../errors.js';

// Lexical helpers shared by the header parsers (RFC 2326 §15.1, which borrows HTTP/1.1's rules).
// Every function here is a single left-to-right pass: header values come from the network and
// may be up to the reader's header limit long, so nothing may backtrack or rescan.

/** RFC 2616 token characters: visible ASCII except separators. */
export function isTokenChar(code: number): boolean {
  if (code <= 0x20 || code >= 0x7f) return false;
  // ( ) < > @ , ; : \ " / [ ] ? = { }
  switch (code) {
    case 0x28:
    case 0x29:
    case 0x3c:
    case 0x3e:
    case 0x40:
    case 0x2c:
    case 0x3b:
    case 0x3a:
    case 0x5c:
    case 0x22:
    case 0x2f:
    case 0x5b:
    case 0x5d:
    case 0x3f:
    case 0x3d:
    case 0x7b:
    case 0x7d:
      return false;
    default:
      return true;
  }
}

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (!isTokenChar(s.charCodeAt(i))) return false;
  return true;
}

/** Control characters other than HTAB: never legal inside a header line. */
export function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

/**
 * Trims only SP and HTAB: String.prototype.trim also eats Unicode spaces, which would make
 * a parsed value differ from what the peer hashed (Digest) or meant.
 */
export function trimLws(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 0x20 || s.charCodeAt(a) === 0x09)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 0x20 || s.charCodeAt(b - 1) === 0x09)) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

export function fail(message: string, status = 400): never {
  throw new RtspParseError(status, message);
}

/**
 * Splits at `sep` outside quoted-strings, trimming each part; empty parts are kept so callers
 * decide whether `a;;b` is acceptable. An unterminated quoted-string is a parse error.
 */
export function splitOutsideQuotes(value: string, sep: ',' | ';'): string[] {
  const parts: string[] = [];
  const sepCode = sep.charCodeAt(0);
  let start = 0;
  let inQuotes = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (inQuotes) {
      if (c === 0x5c)
        i++; // quoted-pair: the next character is literal, even a quote
      else if (c === 0x22) inQuotes = false;
    } else if (c === 0x22) {
      inQuotes = true;
    } else if (c === sepCode) {
      parts.push(trimLws(value.slice(start, i)));
      start = i + 1;
    }
  }
  if (inQuotes) fail('unterminated quoted-string');
  parts.push(trimLws(value.slice(start)));
  return parts;
}

/**
 * Reads the quoted-string that starts at `value[at]` (which must be `"`), undoing quoted-pair
 * escapes. Returns the text and the index just past the closing quote.
 */
export function readQuoted(value: string, at: number): { text: string; end: number } {
  let text = '';
  let runStart = at + 1;
  for (let i = at + 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x5c) {
      if (i + 1 >= value.length) break;
      text += value.slice(runStart, i);
      runStart = i + 1; // keep the escaped character, drop the backslash
      i++;
    } else if (c === 0x22) {
      return { text: text + value.slice(runStart, i), end: i + 1 };
    }
  }
  return fail('unterminated quoted-string');
}

/** A value that is either a whole quoted-string (unescaped here) or bare text taken as is. */
export function unquote(value: string): string {
  if (value.charCodeAt(0) !== 0x22) return value;
  const { text, end } = readQuoted(value, 0);
  if (end !== value.length) fail('text after a quoted-string');
  return text;
}

/** Formats a quoted-string; CR, LF and other controls cannot be carried in a header. */
export function quote(value: string): string {
  if (hasControlChar(value)) throw new TypeError('a quoted-string cannot carry control characters');
  let out = '"';
  for (const ch of value) out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
  return `${out}"`;
}

/** `name=value` or a bare `name`; the name is lowercased, the value trimmed but left quoted. */
export function splitParam(part: string): { name: string; value: string | null } {
  const eq = part.indexOf('=');
  if (eq < 0) return { name: part.toLowerCase(), value: null };
  return { name: trimLws(part.slice(0, eq)).toLowerCase(), value: trimLws(part.slice(eq + 1)) };
}

/** A decimal integer in [0, max]; the digit count is capped before converting so huge inputs fail fast. */
export function parseUint(text: string, max: number, what: string): number {
  if (text.length === 0 || text.length > String(max).length) fail(`invalid ${what}`);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) fail(`invalid ${what}`);
  }
  const n = Number(text);
  if (n > max) fail(`${what} out of range`);
  return n;
}

/** Up to 8 hex digits, normalised to 8 upper-case ones (RFC 2326 writes SSRCs as 8*8HEX). */
export function parseSsrc(text: string): string {
  if (!/^[0-9A-Fa-f]{1,8}$/.test(text)) fail('invalid ssrc');
  return text.toUpperCase().padStart(8, '0');
}

export function isSsrc(text: string): boolean {
  return /^[0-9A-F]{8}$/.test(text);
}
