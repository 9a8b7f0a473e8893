import { Hub } from './hub.js';
import { parseSse, type SseFrame } from './sse.js';
import type { Alert, Device, Recording } from './types.js';

// What changes on the gateway, as it happens: GET /v1/events (text/event-stream) read with fetch,
// so the token goes in the Authorization header, never in the URL; reconnects with Last-Event-ID.

export type GatewayEvent =
  | { type: 'alert.created' | 'alert.read' | 'alert.updated'; data: Alert }
  | { type: 'device.status' | 'device.updated' | 'device.removed'; data: Device }
  | { type: 'recording.created'; data: Recording };

export type FeedMode = 'connecting' | 'live' | 'retrying';

const MAX_BACKOFF_MS = 15_000;

/** What the feed needs of the API client (web/src/api.ts). */
export interface FeedApi {
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** The events of one feed: screens subscribe while they are shown. */
export class EventHub extends Hub<GatewayEvent> {}

/** The event types the app reads: the gateway's (a test keeps them equal to src/store/event-log.ts's). */
export const KNOWN_EVENTS: ReadonlySet<string> = new Set([
  'alert.created',
  'alert.read',
  'alert.updated',
  'device.status',
  'device.updated',
  'device.removed',
  'recording.created',
]);

function toEvent(frame: SseFrame): GatewayEvent | null {
  if (!KNOWN_EVENTS.has(frame.event)) return null;
  try {
    // The gateway's own objects, as its API answers them: trusted to have their documented shape.
    const data: unknown = JSON.parse(frame.data);
    return typeof data === 'object' && data !== null ? ({ type: frame.event, data } as GatewayEvent) : null;
  } catch {
    return null;
  }
}

/** Starts the feed; returns stop. */
export function startFeed(api: FeedApi, hub: EventHub, onMode: (mode: FeedMode) => void): () => void {
  const abort = new AbortController();
  let lastId: string | null = null;
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  const stream = async (): Promise<void> => {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastId !== null) headers['last-event-id'] = lastId;
    const res = await api.request('/v1/events', { headers, signal: abort.signal });
    if (!res.ok || !res.body) return;
    onMode('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const { frames, rest } = parseSse(buffer + value);
      buffer = rest;
      for (const frame of frames) {
        if (frame.id !== null) lastId = frame.id;
        const event = toEvent(frame);
        if (event) hub.emit(event);
      }
    }
  };

  const run = async () => {
    let backoff = 1_000;
    while (!abort.signal.aborted) {
      try {
        await stream();
        backoff = 1_000;
      } catch {
        // Network loss or a token the stream outlived: reconnect (the request gets a fresh token).
      }
      if (abort.signal.aborted) return;
      onMode('retrying');
      await sleep(backoff);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  };
  onMode('connecting');
  void run();
  return () => abort.abort();
}
