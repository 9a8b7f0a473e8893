import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { ApiErrorCode } from '../domain/api-errors.js';
import { errorBody } from './errors.js';

// Requests Node's HTTP parser refuses before Fastify sees them (header section over Node's limit,
// bytes that are not HTTP, a request not received in time) get the API's error shape too, written
// straight to the socket because there is no request or reply object yet.

interface ParserError extends Error {
  code?: string;
}

/** Status, error code and description for a parser error (pure). */
export function clientErrorAnswer(code: string | undefined): {
  status: number;
  error: ApiErrorCode;
  description: string;
} {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        error: 'invalid_request',
        description: `the request's header section is larger than ${maxHeaderSize} bytes`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: 'invalid_request', description: 'the request was not received in time' };
    default:
      return { status: 400, error: 'invalid_request', description: 'the request is not valid HTTP' };
  }
}

/** The whole HTTP/1.1 response for a parser error; the connection is closed after it. */
export function clientErrorResponse(code: string | undefined): string {
  const { status, error, description } = clientErrorAnswer(code);
  const body = JSON.stringify(errorBody(error, description));
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Fastify's clientErrorHandler. Nothing is written to a socket that is gone, or on which an earlier
 * response of the same keep-alive connection is still being sent (our bytes would land inside it);
 * the socket is destroyed in every case, as Node does.
 */
export function makeClientErrorHandler(log: FastifyBaseLogger): (err: ParserError, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    log.debug({ code: err.code }, 'HTTP request refused by the parser');
    // Node keeps the response in progress on the socket in _httpMessage (its own handler checks it too).
    const inProgress = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
    if (socket.writable && (inProgress === undefined || inProgress === null))
      socket.write(clientErrorResponse(err.code));
    socket.destroy(err);
  };
}
