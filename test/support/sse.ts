import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request } from 'node:https';

// A Server-Sent Events client over real HTTPS, as `curl -N` or a page's fetch reads the stream:
// the response as it comes, parsed into events and comments.

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body when the answer is not a stream (an error). */
  body(): Promise<string>;
  events: SseEvent[];
  comments: string[];
  /** Resolves with the first event (from the start) that `match` accepts; rejects after `timeoutMs`. */
  next(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream (cleanly or not). */
  ended: Promise<'end' | 'aborted'>;
  /** Stops reading (the client side's buffers fill; the server's then). */
  pause(): void;
  close(): void;
  response: IncomingMessage;
}

export function openSse(
  baseUrl: string,
  ca: Buffer,
  headers: OutgoingHttpHeaders,
  path = '/v1/events',
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { ca, servername: 'localhost', headers }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let raw = '';
      let endedHow: 'end' | 'aborted' | null = null;
      const ended = new Promise<'end' | 'aborted'>((done) => {
        res.on('end', () => done((endedHow ??= 'end')));
        res.on('aborted', () => done((endedHow ??= 'aborted')));
        res.on('error', () => done((endedHow ??= 'aborted')));
        res.on('close', () => done((endedHow ??= res.complete ? 'end' : 'aborted')));
      });
      const eventStream = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        if (!eventStream) return;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: SseEvent = { id: null, event: 'message', data: '' };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              const field = line.slice(0, colon);
              const value = line.slice(colon + 1).replace(/^ /, '');
              isEvent = true;
              if (field === 'id') event.id = value;
              else if (field === 'event') event.event = value;
              else if (field === 'data') event.data += value;
            }
          }
          if (isEvent) events.push(event);
        }
        for (const wake of waiters) wake();
      });
      const next = (match: (e: SseEvent) => boolean, timeoutMs = 15_000) =>
        new Promise<SseEvent>((ok, fail) => {
          const look = () => {
            const found = events.find(match);
            if (!found) return false;
            waiters.delete(look);
            clearTimeout(timer);
            ok(found);
            return true;
          };
          const timer = setTimeout(() => {
            waiters.delete(look);
            fail(
              new Error(
                `no such event within ${timeoutMs} ms; got ${events.map((e) => `${e.id ?? '-'} ${e.event}`).join(', ') || 'none'}`,
              ),
            );
          }, timeoutMs);
          if (!look()) waiters.add(look);
        });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: async () => {
          await ended;
          return raw;
        },
        events,
        comments,
        next,
        ended,
        pause: () => res.socket.pause(),
        close: () => req.destroy(),
        response: res,
      });
    });
    req.on('error', reject);
    req.end();
  });
}
