import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { ApiError, sendApiError } from './errors.js';
import { contentRange, parseRange } from './range.js';

// A download whose length is known before a byte is read (a clip, a footage export) answers its
// Range (range.ts) here: the whole with 200, the one byte range asked with 206, or 416 when it
// starts past the end; HEAD gets the same headers and no body.

export interface RangedDownload {
  size: number;
  /** The Range header to answer; undefined when there is none, or when If-Range says it no longer applies. */
  range: string | undefined;
  /** The whole, for the 416's description: `the file` has `size` bytes. */
  what: string;
}

/**
 * Sends the download's status, Content-Range and Content-Length (its other headers are set
 * already), then the bytes from `first` to `last` (inclusive) that `body` reads, unless the request
 * is HEAD or there are none.
 */
export function sendRanged(
  req: FastifyRequest,
  reply: FastifyReply,
  { size, range: header, what }: RangedDownload,
  body: (first: number, last: number) => Readable,
): FastifyReply {
  const range = parseRange(header, size);
  if (range.kind === 'unsatisfiable') {
    reply.header('content-range', `bytes */${size}`).header('content-type', 'application/json; charset=utf-8');
    return sendApiError(reply, new ApiError('range_not_satisfiable', `${what} has ${size} bytes`));
  }
  const [first, last, status] = range.kind === 'range' ? [range.start, range.end, 206] : [0, size - 1, 200];
  if (status === 206) reply.header('content-range', contentRange(first, last, size));
  reply.code(status).header('content-length', String(last - first + 1));
  if (req.method === 'HEAD' || size === 0) return reply.send(undefined);
  return reply.send(body(first, last));
}
