import { parseSse, type SseFrame } from './sse.js';
import type { Alert, Device, Page, Recording } from './types.js';

// What changes on the gateway, as it happens: GET /v1/events (text/event-stream) read with fetch,
// so the token goes in the Authorization header, never in the URL; reconnects with Last-Event-ID.
// A gateway without the stream (404) is polled instead, and the screens cannot tell the difference.

export type GatewayEvent =
  | { type: 'alert.created' | 'alert.read' | 'alert.updated'; data: Alert }
  | { type: 'device.status'; data: Device }
  | { type: 'recording.created'; data: Recording };

export type Listener = (event: GatewayEvent) => void;
export type FeedMode = 'connecting' | 'live' | 'polling' | 'retrying';

const POLL_MS = 4_000;
const MAX_BACKOFF_MS = 15_000;

/** What the feed needs of the API client (web/src/api.ts). */
export interface FeedApi {
  request(path: string, init?: RequestInit): Promise<Response>;
  alerts(filter: { limit: number }): Promise<Page<Alert>>;
  devices(): Promise<Page<Device>>;
}

/** Listeners of one feed: screens subscribe while they are shown. */
export class EventHub {
  private readonly listeners = new Set<Listener>();

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: GatewayEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

const KNOWN = new Set(['alert.created', 'alert.read', 'alert.updated', 'device.status', 'recording.created']);

function toEvent(frame: SseFrame): GatewayEvent | null {
  if (!KNOWN.has(frame.event)) return null;
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

  const stream = async (): Promise<'ended' | 'missing'> => {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastId !== null) headers['last-event-id'] = lastId;
    const res = await api.request('/v1/events', { headers, signal: abort.signal });
    if (res.status === 404) return 'missing';
    if (!res.ok || !res.body) return 'ended';
    onMode('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'ended';
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
        const outcome = await stream();
        if (outcome === 'missing') return poll(api, hub, abort.signal, onMode);
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

/** The same events from the lists, for a gateway without /v1/events: new and newly read alerts, status changes. */
async function poll(api: FeedApi, hub: EventHub, signal: AbortSignal, onMode: (mode: FeedMode) => void): Promise<void> {
  let alerts = new Map<string, string>();
  const statuses = new Map<string, string>();
  let seeded = false;
  while (!signal.aborted) {
    try {
      const [alertPage, devicePage] = await Promise.all([api.alerts({ limit: 50 }), api.devices()]);
      onMode('polling');
      // Only the newest page is remembered: an alert older than it never comes back into it.
      // A known alert that changed is sent as the stream would: alert.read when it became read,
      // else alert.updated (its type refined, its clip written); listeners replace the one they show.
      const current = new Map<string, string>();
      for (const alert of [...alertPage.data].reverse()) {
        const known = alerts.get(alert.id);
        const state = `${alert.read}|${alert.type}|${alert.recording_id}|${alert.recording_status}`;
        if (seeded && known === undefined) hub.emit({ type: 'alert.created', data: alert });
        else if (seeded && known !== state) hub.emit({ type: alert.read && known?.startsWith('false|') ? 'alert.read' : 'alert.updated', data: alert });
        current.set(alert.id, state);
      }
      alerts = current;
      for (const device of devicePage.data) {
        const known = statuses.get(device.id);
        if (seeded && known !== device.status) hub.emit({ type: 'device.status', data: device });
        statuses.set(device.id, device.status);
      }
      seeded = true;
    } catch {
      if (signal.aborted) return;
      onMode('retrying');
    }
    await new Promise<void>((resolve) => setTimeout(resolve, POLL_MS));
  }
}
