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
  /**
   * How long the camera granted (TerminationTime − CurrentTime, both on its clock), or null when it
   * did not say. Cameras grant what they like, not the PT2M asked: many give 60 s, some 10.
   */
  lifetimeMs: number | null;
}

export function readSubscription(body: XmlObject): Subscription {
  const response = responseOf(body, 'CreatePullPointSubscriptionResponse');
  const ref = at(response, 'subscriptionReference');
  const address = textOf(at(ref, 'address'));
  if (!address) throw new Error('CreatePullPointSubscriptionResponse without an address');
  return {
    address,
    axisSubscriptionId: textOf(at(ref, 'referenceParameters', 'subscriptionId')),
    lifetimeMs: grantedLifetimeMs(response),
  };
}

/** The lifetime a RenewResponse grants (null when it does not say). */
export function readRenew(body: XmlObject): number | null {
  return grantedLifetimeMs(responseOf(body, 'RenewResponse'));
}

/** TerminationTime − CurrentTime of a response, when both are dates and the difference is positive. */
function grantedLifetimeMs(response: XmlObject): number | null {
  const termination = Date.parse(textOf(at(response, 'terminationTime')) ?? '');
  const current = Date.parse(textOf(at(response, 'currentTime')) ?? '');
  const lifetime = termination - current;
  return Number.isFinite(lifetime) && lifetime > 0 ? lifetime : null;
}

/** The camera may hold a pull for this long; the call's own timeout must be longer. */
export const PULL_WAIT_S = 60;

export const pullMessages = (messageLimit: number, waitS: number): string =>
  `<PullMessages xmlns="${EVENTS_NS}"><Timeout>PT${Math.max(1, Math.floor(waitS))}S</Timeout><MessageLimit>${Math.max(1, Math.min(1024, Math.floor(messageLimit)))}</MessageLimit></PullMessages>`;
export const RENEW =
  '<Renew xmlns="http://docs.oasis-open.org/wsn/b-2"><TerminationTime>PT2M</TerminationTime></Renew>';
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
