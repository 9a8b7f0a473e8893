import type { XmlObject } from '../soap-xml.js';
import { EVENTS_NS } from './device-ops.js';
import type { Addressing } from './envelope.js';
import { at, responseOf, textOf } from './read.js';

// Events service: a PullPoint subscription and the WS-BaseNotification calls on it.

export const CREATE_PULL_POINT = `<CreatePullPointSubscription xmlns="${EVENTS_NS}"><InitialTerminationTime>PT2M</InitialTerminationTime></CreatePullPointSubscription>`;

export interface Subscription {
  /** As the camera wrote it: rebase before use. */
  address: string;
  axisSubscriptionId: string | null;
}

export function readSubscription(body: XmlObject): Subscription {
  const ref = at(responseOf(body, 'CreatePullPointSubscriptionResponse'), 'subscriptionReference');
  const address = textOf(at(ref, 'address'));
  if (!address) throw new Error('CreatePullPointSubscriptionResponse without an address');
  return { address, axisSubscriptionId: textOf(at(ref, 'referenceParameters', 'subscriptionId')) };
}

/** The camera may hold a pull for this long; the call's own timeout must be longer. */
export const PULL_WAIT_S = 60;

export const pullMessages = (messageLimit: number, waitS: number): string =>
  `<PullMessages xmlns="${EVENTS_NS}"><Timeout>PT${Math.max(1, Math.floor(waitS))}S</Timeout><MessageLimit>${Math.max(1, Math.min(1024, Math.floor(messageLimit)))}</MessageLimit></PullMessages>`;
export const RENEW = '<Renew xmlns="http://docs.oasis-open.org/wsn/b-2"><TerminationTime>PT2M</TerminationTime></Renew>';
export const UNSUBSCRIBE = '<Unsubscribe xmlns="http://docs.oasis-open.org/wsn/b-2"/>';

export const ACTIONS = {
  pull: `${EVENTS_NS}/PullPointSubscription/PullMessagesRequest`,
  renew: 'http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/RenewRequest',
  unsubscribe: 'http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/UnsubscribeRequest',
} as const;

export function addressing(sub: Subscription, url: string, action: string): Addressing {
  return { to: url, action, axisSubscriptionId: sub.axisSubscriptionId };
}

/** The PullMessagesResponse element, raw (toNotifications reads it defensively). */
export function readPullMessages(body: XmlObject): XmlObject {
  return responseOf(body, 'PullMessagesResponse');
}
