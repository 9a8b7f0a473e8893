import {
  bytesToBase64Url,
  readSubscription,
  supportOf,
  vapidKeyBytes,
  type PushSubscriptionData,
  type PushSupport,
} from './push.js';

// The page's side of push notifications: the service worker's registration (web/sw/sw.ts, built
// to /sw.js), and what a notifications screen calls: whether this browser can, subscribing with
// the gateway's VAPID key (the browser asks the user then, and only then), unsubscribing, and the
// subscription there is. Sending the subscription to the gateway is the caller's (the API client).

export const SERVICE_WORKER_URL = '/sw.js';

/**
 * Registers the service worker once the page has loaded, so installing it (it downloads the app's
 * files for offline use) does not compete with the first screen's requests. Only in a secure
 * context, where browsers have service workers at all; a refusal (private windows, storage turned
 * off, an unreachable gateway) leaves the app as it is without one.
 */
export function registerServiceWorker(): void {
  if (!window.isSecureContext || !('serviceWorker' in navigator)) return;
  const register = () => {
    try {
      registerWorker().catch(() => undefined);
    } catch {
      // Firefox throws on reading navigator.serviceWorker when cookies are blocked.
    }
  };
  if (document.readyState === 'complete') register();
  else window.addEventListener('load', register, { once: true });
}

/** Whether this browser can receive the gateway's notifications (see PushSupport). */
export function pushSupport(): PushSupport {
  const notification = 'Notification' in window;
  return supportOf({
    secureContext: window.isSecureContext,
    serviceWorker: 'serviceWorker' in navigator,
    pushManager: 'PushManager' in window,
    notification,
    permission: notification ? Notification.permission : 'default',
    userAgent: navigator.userAgent,
    maxTouchPoints: navigator.maxTouchPoints,
    standalone: (navigator as Navigator & { standalone?: boolean }).standalone,
  });
}

/** The user said no (or closed the browser's question): nothing was subscribed. */
export class PushPermissionError extends Error {
  constructor(readonly permission: NotificationPermission) {
    super(
      permission === 'denied'
        ? "Notifications are blocked for this site: allow them in the browser's site settings."
        : 'Notifications were not allowed.',
    );
  }
}

/**
 * Subscribes this browser to push messages signed with the gateway's VAPID key (base64url, as the
 * gateway gives it), and gives the subscription to send to the gateway. Call it from a click: the
 * browser asks the user for permission here (Safari asks only during a user gesture, so before
 * anything is awaited). A subscription made with another key (a gateway whose key changed) is
 * replaced; one with this key is given as it is.
 */
export async function subscribe(vapidPublicKey: string): Promise<PushSubscriptionData> {
  const key = vapidKeyBytes(vapidPublicKey);
  if (!canPush()) throw new Error('This browser cannot receive notifications here (see pushSupport()).');
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new PushPermissionError(permission);
  const registration = await workerRegistration();
  const existing = await registration.pushManager.getSubscription();
  if (existing) {
    const current = existing.options.applicationServerKey;
    if (current && bytesToBase64Url(new Uint8Array(current)) === bytesToBase64Url(key))
      return subscriptionData(existing);
    await existing.unsubscribe();
  }
  return subscriptionData(
    await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
  );
}

/** Ends this browser's subscription; gives the one ended (for the gateway to forget), or null. */
export async function unsubscribe(): Promise<PushSubscriptionData | null> {
  const subscription = await existingSubscription();
  if (!subscription) return null;
  const data = readSubscription(subscription.toJSON());
  await subscription.unsubscribe();
  return data;
}

/** This browser's subscription, if it has one. */
export async function currentSubscription(): Promise<PushSubscriptionData | null> {
  const subscription = await existingSubscription();
  return subscription ? readSubscription(subscription.toJSON()) : null;
}

async function existingSubscription(): Promise<PushSubscription | null> {
  if (!canPush()) return null;
  const registration = await navigator.serviceWorker.getRegistration('/');
  return registration ? registration.pushManager.getSubscription() : null;
}

/** The worker's registration once it is active (a push subscription needs an active worker). */
async function workerRegistration(): Promise<ServiceWorkerRegistration> {
  if (!(await navigator.serviceWorker.getRegistration('/'))) await registerWorker();
  return navigator.serviceWorker.ready;
}

/** The worker at the root, its script always asked of the gateway (never the HTTP cache). */
function registerWorker(): Promise<ServiceWorkerRegistration> {
  return navigator.serviceWorker.register(SERVICE_WORKER_URL, { scope: '/', updateViaCache: 'none' });
}

function canPush(): boolean {
  return window.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

function subscriptionData(subscription: PushSubscription): PushSubscriptionData {
  const data = readSubscription(subscription.toJSON());
  if (!data) throw new Error('The browser gave a push subscription without its endpoint or keys.');
  return data;
}
