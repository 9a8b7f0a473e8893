import { fail, hasControlChar, parseUint, splitOutsideQuotes, splitParam } from './syntax.js';

// Session (RFC 2326 §12.37): `Session: <id>[;timeout=<seconds>]`.

export interface SessionHeader {
  id: string;
  /** Seconds of inactivity after which the server may drop the session (RFC 2326 default: 60). */
  timeout?: number;
}

/** The grammar puts no bound on delta-seconds; past 32 bits a value can only come from a broken peer. */
const MAX_TIMEOUT = 0xffffffff;

/**
 * RFC 2326 limits ids to ALPHA, DIGIT and `$-_.+`, but cameras are not that careful, so any
 * visible ASCII except `;` is accepted (the id is opaque: it is only echoed back).
 */
function isSessionId(id: string): boolean {
  return /^[\x21-\x3a\x3c-\x7e]+$/.test(id);
}

/** Parameters other than `timeout` are ignored: neither RFC defines any. */
export function parseSession(value: string): SessionHeader {
  if (hasControlChar(value)) fail('control character in Session');
  const parts = splitOutsideQuotes(value, ';');
  const id = parts[0] ?? '';
  if (!isSessionId(id)) fail('invalid session id');
  const out: SessionHeader = { id };
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i] ?? '';
    if (part === '') continue;
    const { name, value: v } = splitParam(part);
    if (name !== 'timeout') continue;
    if (out.timeout !== undefined) fail('duplicate Session timeout');
    if (v === null) fail('Session timeout needs a value');
    out.timeout = parseUint(v, MAX_TIMEOUT, 'Session timeout');
  }
  return out;
}

export function formatSession(session: SessionHeader): string {
  if (!isSessionId(session.id)) throw new TypeError('invalid session id');
  if (session.timeout === undefined) return session.id;
  if (!Number.isInteger(session.timeout) || session.timeout < 0 || session.timeout > MAX_TIMEOUT) {
    throw new TypeError('invalid Session timeout');
  }
  return `${session.id};timeout=${session.timeout}`;
}
