import type { PageKey } from '../domain/types.js';

// A page cursor is the sort time and id of the last item handed out, base64url-encoded so clients
// treat it as opaque. Decoding checks everything: a cursor is client input and reaches SQL.

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_TIME = 8_640_000_000_000_000; // the largest JS Date

export function encodeCursor(key: PageKey): string {
  return Buffer.from(`${key.at}:${key.id}`, 'utf8').toString('base64url');
}

/** The cursor's key, or null when it is not one this API handed out. */
export function decodeCursor(cursor: string): PageKey | null {
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const sep = text.indexOf(':');
  if (sep < 1) return null;
  const atText = text.slice(0, sep);
  const id = text.slice(sep + 1);
  if (!/^\d{1,16}$/.test(atText) || !ID.test(id)) return null;
  const at = Number(atText);
  if (at > MAX_TIME) return null;
  // Round-trip check: rejects non-canonical encodings, so one position has one cursor.
  return encodeCursor({ at, id }) === cursor ? { at, id } : null;
}
