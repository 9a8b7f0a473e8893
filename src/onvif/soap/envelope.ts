import { escapeXmlText } from './security.js';

// SOAP 1.2 request envelopes. Operation bodies are fixed strings plus escaped values, built by the
// operation modules; this file only wraps them.

export interface Addressing {
  /** wsa:To, the subscription's address (WS-BaseNotification calls go to the subscription, not a service). */
  to: string;
  action: string;
  /** Axis cameras identify a PullPoint by a reference parameter that must be echoed. */
  axisSubscriptionId?: string | null;
}

export function envelope(
  body: string,
  header: { security?: string | null; addressing?: Addressing | null } = {},
): string {
  const a = header.addressing;
  const addressing = a
    ? `<wsa:Action>${escapeXmlText(a.action)}</wsa:Action><wsa:To s:mustUnderstand="1">${escapeXmlText(a.to)}</wsa:To>` +
      (a.axisSubscriptionId
        ? `<SubscriptionId xmlns="http://www.axis.com/2009/event" wsa:IsReferenceParameter="true">${escapeXmlText(a.axisSubscriptionId)}</SubscriptionId>`
        : '')
    : '';
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://www.w3.org/2005/08/addressing">' +
    `<s:Header>${header.security ?? ''}${addressing}</s:Header><s:Body>${body}</s:Body></s:Envelope>`
  );
}
