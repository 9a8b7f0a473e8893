import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { TicketError } from '../../../media/errors.js';
import type { FootageClaims } from '../../../media/ticket.js';
import { redactUrl } from '../../log-url.js';
import { errorResponse } from '../../schemas.js';
import type { FootageAccess, FootageRoutesOptions } from './options.js';
import { requireFootage } from './window.js';

// What the routes under a footage ticket share (the playlist and files of a playback_url, the MP4
// of a download_url): the ticket is the credential, because a media element or a download link
// sends no Authorization header.

/** Every answer under the ticket, errors too: the URL holds a credential, so nothing keeps it or passes it on. */
export const PRIVATE_HEADERS = {
  'cache-control': 'private, no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** onRequest of the routes under a ticket. */
export function privateHeaders(_req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.headers(PRIVATE_HEADERS);
  done();
}

export const TicketParam = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^[A-Za-z0-9_.-]+$',
  description: 'The ticket of the address',
});

/** The 200 of a route that mints an address: `{ <name>, expires_at }`. */
export function TicketedAddress(name: string, description: string, title: string) {
  return Type.Object(
    { [name]: Type.String({ description }), expires_at: Type.String({ format: 'date-time' }) },
    { additionalProperties: false, title },
  );
}

/**
 * A footage ticket for a window of a device, valid as long as a playback address
 * (recording.playback_ttl_s, to the whole second); `download` only when minted for recordings:write.
 */
export function mintFootageTicket(
  access: FootageAccess,
  claims: { deviceId: string; startMs: number; endMs: number; download?: true },
): { ticket: string; expiresAt: string } {
  const expiresAt = Math.ceil(((access.now ?? Date.now)() + access.playbackTtlS * 1000) / 1000) * 1000;
  return {
    ticket: access.tickets.issueFootage({ ...claims, expiresAt }),
    expiresAt: new Date(expiresAt).toISOString(),
  };
}

export const ticketErrors = {
  401: errorResponse('expired_ticket: the address has expired: get a new one'),
  403: errorResponse('invalid_ticket: the ticket is altered, malformed, of another key, or not a footage ticket'),
};

/**
 * The ticket's claims; logged (cut short) and rethrown when refused. `download`: only a ticket
 * minted for a download (a playback ticket is for recordings:read, a download needs recordings:write).
 */
export function claimsOf(
  app: FastifyInstance,
  footage: FootageRoutesOptions['footage'],
  ticket: string,
  url: string,
  need: 'play' | 'download' = 'play',
): FootageClaims {
  try {
    const claims = requireFootage(footage).tickets.verifyFootage(ticket, (footage?.now ?? Date.now)());
    if (need === 'download' && !claims.download) throw new TicketError('wrong_kind', 'footage');
    return claims;
  } catch (err) {
    if (err instanceof TicketError)
      app.log.debug({ url: redactUrl(url), reason: err.reason }, 'footage ticket refused');
    throw err;
  }
}
