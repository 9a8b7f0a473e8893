// Turns a PullMessagesResponse (as parsed by soap-xml.ts) into plain notifications. Camera firmware
// is inconsistent, so everything here is read defensively: a message that cannot be read is skipped,
// never thrown on, and the rest of the batch still gets through.
//
// The input is the raw xml2js shape from parseSoapBody (arrays everywhere), what
// OnvifSession.pullMessages returns. The readers also accept unwrapped single elements and typed
// values, the shape the former onvif library produced.

import { childOf, firstOf, isXmlObject } from './soap-xml.js';

export type PropertyOperation = 'Initialized' | 'Changed' | 'Deleted';

export interface Notification {
  /** The topic text as the camera sent it (trimmed), e.g. "tns1:RuleEngine/CellMotionDetector/Motion". */
  topic: string;
  operation: PropertyOperation | null;
  /** The camera's UtcTime in ms since the epoch; camera clocks are often wrong, so treat it as a hint. */
  utcTime: number | null;
  source: Record<string, string>;
  data: Record<string, string>;
}

function asArray(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function attr(node: unknown, name: string): unknown {
  if (!isXmlObject(node)) return undefined;
  const attrs = node.$;
  return isXmlObject(attrs) ? childOf(attrs, name) : undefined;
}

/** The camera's text for a value, whichever shape it arrived in; null when it is not text-like. */
function text(v: unknown, depth = 0): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : null;
  if (typeof v === 'boolean') return String(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (depth > 2) return null;
  if (Array.isArray(v)) return v.length === 1 ? text(v[0], depth + 1) : null;
  if (isXmlObject(v) && Object.hasOwn(v, '_')) return text(v._, depth + 1);
  return null;
}

function readOperation(v: unknown): PropertyOperation | null {
  const t = text(v)?.trim().toLowerCase();
  if (t === 'initialized') return 'Initialized';
  if (t === 'changed') return 'Changed';
  if (t === 'deleted') return 'Deleted';
  return null;
}

function readTime(v: unknown): number | null {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.getTime();
  const t = text(v);
  if (t === null) return null;
  const ms = Date.parse(t.trim());
  return Number.isFinite(ms) ? ms : null;
}

/** Reads the SimpleItems of a Source or Data element; ElementItems carry no flat value and are skipped. */
function readItems(container: unknown): Record<string, string> {
  // Null prototype: item names come from the camera and must not be able to hit Object.prototype.
  const out = Object.create(null) as Record<string, string>;
  const node = firstOf(container);
  if (!isXmlObject(node)) return out;
  for (const item of asArray(childOf(node, 'simpleItem'))) {
    const name = text(attr(item, 'Name'))?.trim();
    const value = text(attr(item, 'Value'));
    // The first occurrence wins so a repeated name cannot override what was already read.
    if (name && value !== null && !Object.hasOwn(out, name)) out[name] = value;
  }
  return out;
}

function readNotification(raw: unknown): Notification | null {
  if (!isXmlObject(raw)) return null;
  // text() refuses several Topic elements: which one the camera meant is anyone's guess.
  const topic = text(childOf(raw, 'topic'))?.trim();
  if (!topic) return null;
  const wrapper = firstOf(childOf(raw, 'message'));
  if (!isXmlObject(wrapper)) return null;
  // wsnt:Message wraps tt:Message; tolerate firmware that puts the content directly in wsnt:Message.
  const innerRaw = firstOf(childOf(wrapper, 'message'));
  const inner = isXmlObject(innerRaw) ? innerRaw : wrapper;
  return {
    topic,
    operation: readOperation(attr(inner, 'PropertyOperation')),
    utcTime: readTime(attr(inner, 'UtcTime')),
    source: readItems(childOf(inner, 'source')),
    data: readItems(childOf(inner, 'data')),
  };
}

/**
 * Maps a parsed PullMessagesResponse (`body.pullMessagesResponse` from parseSoapBody, or its
 * unwrapped form) to notifications. Never throws on camera input; unreadable messages
 * are skipped.
 */
export function toNotifications(pullMessagesResponse: unknown): Notification[] {
  const out: Notification[] = [];
  for (let response of asArray(pullMessagesResponse)) {
    // Also accept the whole Body, so a caller that passes one level too high still gets its events.
    if (isXmlObject(response) && childOf(response, 'notificationMessage') === undefined) {
      const nested = childOf(response, 'pullMessagesResponse');
      if (nested !== undefined) response = firstOf(nested);
    }
    if (!isXmlObject(response)) continue;
    for (const raw of asArray(childOf(response, 'notificationMessage'))) {
      const n = readNotification(raw);
      if (n) out.push(n);
    }
  }
  return out;
}
