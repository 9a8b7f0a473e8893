import { returnPath } from './paths.js';

// Push notifications, the parts without a browser: what the service worker (web/sw/sw.ts) shows
// for a push message and where a click on it goes, and what the page (push-client.ts) needs to
// subscribe: the VAPID key as bytes, the subscription as the API takes it, whether this browser
// can do it at all. Pure (no DOM or worker types), so the unit tests run it in node.

/** The message the gateway pushes for an alert (docs/web-app.md, "Notifications"). */
export interface AlertPush {
  title: string;
  body: string;
  alert_id: string;
  device_id: string;
  type: string;
  created_at: string;
  /** A path of the app: where a click on the notification goes. */
  url: string;
  /** The alert's picture, a `data:image/jpeg;base64,…` URL carried in the message itself. */
  image?: string;
}

/**
 * What showNotification takes, with the fields TypeScript's DOM types leave out (chromium shows
 * `image`; `renotify` and `timestamp` are the standard's).
 */
export interface ShownNotification {
  body: string;
  icon: string;
  badge: string;
  image?: string;
  tag?: string;
  renotify?: boolean;
  timestamp?: number;
  data: { url: string; alert_id?: string };
}

export const NOTIFICATION_ICON = '/icons/icon-192.png';
/** Monochrome: Android draws only its alpha in the status bar. */
export const NOTIFICATION_BADGE = '/icons/badge-96.png';
export const APP_NAME = 'Edge gateway';

/**
 * The notification for a push message (its JSON, or null when it had none or was not JSON). One
 * without a title still shows one, the app's own: a push the user is not shown counts against the
 * site in browsers (chromium shows its own "updated in the background" one and may end the
 * subscription).
 */
export function notificationOf(payload: unknown): { title: string; options: ShownNotification } {
  const base = { icon: NOTIFICATION_ICON, badge: NOTIFICATION_BADGE };
  if (!isRecord(payload) || typeof payload.title !== 'string' || payload.title.trim() === '')
    return {
      title: APP_NAME,
      options: {
        ...base,
        body: 'Something happened at the gateway. Open the app to see it.',
        data: { url: '/events' },
      },
    };
  const options: ShownNotification = {
    ...base,
    body: typeof payload.body === 'string' ? payload.body : '',
    data: { url: notificationTarget({ url: payload.url }) },
  };
  if (typeof payload.alert_id === 'string') options.data.alert_id = payload.alert_id;
  if (typeof payload.image === 'string' && payload.image.startsWith('data:image/')) options.image = payload.image;
  // One notification per camera: a newer alert of the same camera replaces the one shown, and
  // still rings (renotify), instead of a pile of them after a busy hour.
  if (typeof payload.device_id === 'string' && payload.device_id !== '') {
    options.tag = payload.device_id;
    options.renotify = true;
  }
  const at = typeof payload.created_at === 'string' ? Date.parse(payload.created_at) : NaN;
  if (Number.isFinite(at)) options.timestamp = at;
  return { title: payload.title, options };
}

/**
 * Where a click on a notification goes: its `url` when that is a screen's path of this origin,
 * else the cameras. The message comes from the gateway, but nothing in a notification may send the
 * app's window to another site.
 */
export function notificationTarget(data: unknown): string {
  return isRecord(data) && typeof data.url === 'string' ? returnPath(data.url) : '/';
}

/** The bytes of a base64url string (RFC 4648 §5, padding optional); throws on anything else. */
export function base64UrlToBytes(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1)
    throw new Error('not base64url');
  const binary = atob(text.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** base64url without padding, as push subscriptions give their keys. */
export function bytesToBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The gateway's VAPID public key: an uncompressed P-256 point (65 bytes, 0x04 first), base64url. */
export function vapidKeyBytes(publicKey: string): Uint8Array<ArrayBuffer> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = base64UrlToBytes(publicKey.trim());
  } catch {
    throw new Error('The push key is not base64url.');
  }
  if (bytes.length !== 65 || bytes[0] !== 4) throw new Error('The push key is not a P-256 public key.');
  return bytes;
}

/** A push subscription as PushSubscription.toJSON() gives it and the gateway stores it. */
export interface PushSubscriptionData {
  endpoint: string;
  expirationTime: number | null;
  keys: { p256dh: string; auth: string };
}

/** The subscription's JSON, when it has what a push needs: an https endpoint and both keys. */
export function readSubscription(json: unknown): PushSubscriptionData | null {
  if (!isRecord(json) || typeof json.endpoint !== 'string' || !isRecord(json.keys)) return null;
  const { p256dh, auth } = json.keys;
  if (typeof p256dh !== 'string' || typeof auth !== 'string' || p256dh === '' || auth === '') return null;
  let endpoint: URL;
  try {
    endpoint = new URL(json.endpoint);
  } catch {
    return null;
  }
  if (endpoint.protocol !== 'https:') return null;
  const expirationTime = typeof json.expirationTime === 'number' ? json.expirationTime : null;
  return { endpoint: json.endpoint, expirationTime, keys: { p256dh, auth } };
}

/**
 * Whether this browser can receive the gateway's notifications, and if not why:
 * - 'ios-not-installed': an iPhone or iPad outside an installed app (Safari gives push only to a
 *   web app added to the home screen);
 * - 'no-service-worker': no service worker (an old browser, a page not in a secure context);
 * - 'no-push': a service worker but no Push API or no notifications;
 * - 'denied': the user has refused notifications to this site (only the browser's settings can
 *   undo it);
 * - 'ok'.
 */
export type PushSupport = 'ok' | 'no-service-worker' | 'no-push' | 'denied' | 'ios-not-installed';

/** What pushSupport() looks at in the browser. */
export interface PushFacts {
  secureContext: boolean;
  serviceWorker: boolean;
  pushManager: boolean;
  notification: boolean;
  permission: 'default' | 'granted' | 'denied';
  userAgent: string;
  maxTouchPoints: number;
  /** Safari's navigator.standalone: true in an app added to the home screen, undefined elsewhere. */
  standalone: boolean | undefined;
}

export function supportOf(facts: PushFacts): PushSupport {
  if (!facts.pushManager && isAppleMobile(facts) && facts.standalone !== true) return 'ios-not-installed';
  if (!facts.secureContext || !facts.serviceWorker) return 'no-service-worker';
  if (!facts.pushManager || !facts.notification) return 'no-push';
  return facts.permission === 'denied' ? 'denied' : 'ok';
}

/** An iPhone, an iPod or an iPad (which calls itself a Mac, with a touch screen). */
function isAppleMobile(facts: { userAgent: string; maxTouchPoints: number }): boolean {
  return (
    /\b(iPhone|iPad|iPod)\b/.test(facts.userAgent) ||
    (/\bMacintosh\b/.test(facts.userAgent) && facts.maxTouchPoints > 1)
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
