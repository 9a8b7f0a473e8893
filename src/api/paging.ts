import type { Page, PageKey } from '../domain/types.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { badRequest } from './errors.js';

export function decodeCursorParam(cursor: string | undefined): PageKey | null {
  if (cursor === undefined) return null;
  const key = decodeCursor(cursor);
  if (!key) throw badRequest('query parameter cursor is not a cursor this API handed out');
  return key;
}

export const encodeNext = (next: PageKey | null): string | null => (next ? encodeCursor(next) : null);

/** The list envelope every list endpoint answers with. */
export const envelope = <T, R>(page: Page<T>, present: (t: T) => R) => ({ data: page.items.map(present), next_cursor: encodeNext(page.next) });
