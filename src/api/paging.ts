import type { FastifyReply } from 'fastify';
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
export const envelope = <T, R>(page: Page<T>, present: (t: T) => R) => ({
  data: page.items.map(present),
  next_cursor: encodeNext(page.next),
});

/**
 * Answers a list page with its envelope, serialised by the route's own response schema once per
 * page object: the store hands out the same page until the next write, so a list apps poll costs
 * one serialisation per change instead of one per request (half the CPU of a 50-device list).
 * It sends at once and returns nothing, for list handlers that are plain functions: an async
 * handler adds a promise and a turn of the microtask queue to every request for nothing.
 */
export function pageResponder<T, R>(present: (t: T) => R) {
  // Kept as UTF-8 bytes, not as the string: a string body is measured (Buffer.byteLength) and
  // encoded again on every send, ~10 % of a 50-device list's CPU (docs/performance.md).
  const bodies = new WeakMap<Page<T>, Buffer>();
  return (reply: FastifyReply, page: Page<T>): void => {
    let body = bodies.get(page);
    if (body === undefined) {
      // With a JSON response schema the route's serialiser always yields a string.
      body = Buffer.from(reply.serialize(envelope(page, present)) as string, 'utf8');
      bodies.set(page, body);
    }
    reply.type('application/json; charset=utf-8').send(body);
  };
}
