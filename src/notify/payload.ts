import { createHash } from 'node:crypto';
import { EVENT_TYPE_LABELS } from '../domain/event-labels.js';
import type { AlertType } from '../domain/types.js';

// What a push says (pure): the JSON the web app's service worker reads, encrypted as one RFC 8291
// record. A record is 4096 bytes at most: 3993 of them plaintext once the aes128gcm header (86),
// the padding delimiter (1) and the tag (16) are taken. The picture fills what the rest leaves.

/** Most plaintext bytes of one aes128gcm record of 4096 bytes (RFC 8291 §4). */
export const MAX_PAYLOAD_BYTES = 3993;

const IMAGE_PREFIX = 'data:image/jpeg;base64,';
/** Longest title and body: a camera's name is at most 100 characters, alert messages are the gateway's own. */
const MAX_TEXT = 200;

/** What a push tells of an alert. */
export interface AlertFacts {
  alertId: string;
  deviceId: string;
  deviceName: string;
  type: AlertType;
  message: string;
  createdAt: number;
}

/** The notification's JSON (docs/notifications.md, "The payload"). */
export interface PushPayload {
  title: string;
  body: string;
  alert_id: string | null;
  device_id: string | null;
  type: AlertType | 'test';
  created_at: string;
  url: string;
  image: string | null;
}

/** "Person at Front door", "Front door is offline". */
export function alertTitle(type: AlertType, deviceName: string): string {
  const title = type === 'device_offline' ? `${deviceName} is offline` : `${EVENT_TYPE_LABELS[type]} at ${deviceName}`;
  return title.slice(0, MAX_TEXT);
}

/**
 * The event in the web app, relative to the origin the app is served from (the gateway cannot know
 * which of its names the phone uses): the events screen filtered to the camera, naming the alert.
 */
export function eventUrl(deviceId: string, alertId: string): string {
  return `/events?camera=${encodeURIComponent(deviceId)}&alert=${encodeURIComponent(alertId)}`;
}

function alertPayload(facts: AlertFacts, image: string | null): PushPayload {
  return {
    title: alertTitle(facts.type, facts.deviceName),
    body: facts.message.slice(0, MAX_TEXT),
    alert_id: facts.alertId,
    device_id: facts.deviceId,
    type: facts.type,
    created_at: new Date(facts.createdAt).toISOString(),
    url: eventUrl(facts.deviceId, facts.alertId),
    image,
  };
}

/** Most bytes of JPEG that still fit this alert's payload, as base64 in a data: URL. */
export function pictureBudget(facts: AlertFacts): number {
  const without = Buffer.byteLength(JSON.stringify(alertPayload(facts, '')));
  const room = MAX_PAYLOAD_BYTES - without - IMAGE_PREFIX.length;
  return Math.max(0, Math.floor(room / 4) * 3);
}

/** The payload's text; the picture is left out when it does not fit (`withImage` says which). */
export function alertPayloadText(facts: AlertFacts, jpeg: Buffer | null): { text: string; withImage: boolean } {
  if (jpeg !== null && jpeg.length <= pictureBudget(facts)) {
    const text = JSON.stringify(alertPayload(facts, IMAGE_PREFIX + jpeg.toString('base64')));
    if (Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES) return { text, withImage: true };
  }
  return { text: JSON.stringify(alertPayload(facts, null)), withImage: false };
}

/** The "send a test notification" push. */
export function testPayloadText(now: number): string {
  const payload: PushPayload = {
    title: 'Test notification',
    body: 'Notifications from this gateway reach this device.',
    alert_id: null,
    device_id: null,
    type: 'test',
    created_at: new Date(now).toISOString(),
    url: '/events',
    image: null,
  };
  return JSON.stringify(payload);
}

/**
 * The Topic header of a camera's pushes (RFC 8030 §5.4): a push service keeps only the newest
 * undelivered message of a topic, so a phone offline for a while gets one per camera. At most 32
 * base64url characters, so a digest of the device id rather than the id itself.
 */
export function topicOf(deviceId: string): string {
  return createHash('sha256').update(`camera:${deviceId}`).digest('base64url').slice(0, 32);
}

/** The Urgency header (RFC 8030 §5.3): people and vehicles wake a phone, the rest waits for it. */
export function urgencyOf(type: AlertType | 'test'): 'high' | 'normal' {
  return type === 'human' || type === 'vehicle' ? 'high' : 'normal';
}
