import { presentAlert, presentDevice, presentRecording, type MintPlayback } from '../../domain/present.js';
import type { EventWindow, StoredEvent, StreamEventType } from '../../store/store.js';

// The text of the event stream (WHATWG HTML, "Server-sent events") and the rules for where a
// stream starts. Pure: the hub (hub.ts) does the I/O.

/** The scope a token needs to be sent each type of event: the scope of the record's own GET. */
export const EVENT_SCOPES: Readonly<Record<StreamEventType, string>> = {
  'alert.created': 'alerts:read',
  'alert.read': 'alerts:read',
  'alert.updated': 'alerts:read',
  'device.status': 'devices:read',
  'device.updated': 'devices:read',
  'device.removed': 'devices:read',
  'recording.created': 'recordings:read',
};

/** One event: its id (the store's seq), its type, and the record's JSON as the API answers it. */
export function formatEvent(e: StoredEvent, mintPlayback?: MintPlayback): string {
  return frame(e.seq, e.type, JSON.stringify(presentRecord(e, mintPlayback)));
}

function presentRecord(e: StoredEvent, mintPlayback: MintPlayback | undefined): object {
  switch (e.type) {
    case 'alert.created':
    case 'alert.read':
    case 'alert.updated':
      return presentAlert(e.record);
    case 'device.status':
    case 'device.updated':
    case 'device.removed':
      return presentDevice(e.record);
    case 'recording.created':
      return presentRecording(e.record, mintPlayback);
  }
}

/** Why a stream could not resume where its client asked (the data of a `reset` event). */
export type ResetReason = 'expired' | 'unknown';

/**
 * Sent first when the events after Last-Event-ID cannot all be had: the client must read the
 * lists again. Its id is the newest event's, so a client that reconnects after it resumes there.
 */
export function formatReset(reason: ResetReason, latest: number): string {
  return frame(latest, 'reset', JSON.stringify({ reason, last_event_id: latest }));
}

/** Why the gateway ends a stream it could have gone on with (the data of an `end` event). */
export type EndReason = 'token_expired' | 'token_revoked' | 'gateway_stopping';

export function formatEnd(reason: EndReason): string {
  return `event: end\ndata: ${JSON.stringify({ reason })}\n\n`;
}

/** A comment line: nothing for the client, but traffic that keeps the connection and proxies alive. */
export const HEARTBEAT = ': heartbeat\n\n';

/** The first bytes, so the client sees the response begin at once (fetch resolves, curl prints). */
export const OPENING = ': edge-gateway events\n\n';

// JSON.stringify never writes a line break outside a string, and escapes those inside: one data line.
const frame = (id: number, type: string, data: string): string => `id: ${id}\nevent: ${type}\ndata: ${data}\n\n`;

/** Last-Event-ID as sent: none, an id (digits), or text that is no id of this stream at all. */
export type LastEventId = { kind: 'none' } | { kind: 'id'; id: number } | { kind: 'malformed' };

// Ids are the store's seq, at most 2^53 − 1 (16 digits); longer digit strings are ids never issued.
const MAX_ID_DIGITS = 16;

export function parseLastEventId(header: string | undefined): LastEventId {
  // An empty value is what the standard's EventSource would send for "no id yet" (it sends none).
  const value = (header ?? '').trim();
  if (value === '') return { kind: 'none' };
  if (!/^\d+$/.test(value)) return { kind: 'malformed' };
  const digits = value.replace(/^0+(?=\d)/, '');
  if (digits.length > MAX_ID_DIGITS) return { kind: 'id', id: Number.MAX_SAFE_INTEGER };
  return { kind: 'id', id: Math.min(Number(digits), Number.MAX_SAFE_INTEGER) };
}

/** Where a stream starts: live from now, after an id (every later event still kept), or with a reset. */
export type StreamStart = { kind: 'after'; id: number } | { kind: 'reset'; reason: ResetReason; id: number };

export function streamStart(last: Exclude<LastEventId, { kind: 'malformed' }>, window: EventWindow): StreamStart {
  if (last.kind === 'none') return { kind: 'after', id: window.latest };
  // A larger id was never issued here (another gateway's, or a database restored from a backup).
  if (last.id > window.latest) return { kind: 'reset', reason: 'unknown', id: window.latest };
  if (last.id < window.after) return { kind: 'reset', reason: 'expired', id: window.latest };
  return { kind: 'after', id: last.id };
}
