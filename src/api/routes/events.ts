import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { once } from 'node:events';
import Type from 'typebox';
import type { VerifiedToken } from '../../auth/verifier.js';
import type { EventHub } from '../events/hub.js';
import { parseLastEventId, streamStart } from '../events/wire.js';
import { badRequest } from '../errors.js';
import { errorResponse, errorResponses } from '../schemas.js';

export interface EventRoutesOptions {
  hub: EventHub;
  /** Whether a stream's token has been revoked since it was checked (the stream then ends); absent: never. */
  revoked?: (token: VerifiedToken) => boolean;
}

const EventStreamBody = {
  description:
    'Server-Sent Events: `alert.created`, `alert.read`, `alert.updated` (data: an Alert), `device.status`, `device.updated`, `device.removed` (a Device), `recording.created` (a Recording), ' +
    'each with its `id:`; `reset` first when the events after Last-Event-ID cannot all be had; `end` before the gateway closes the stream ' +
    '(token_expired, token_revoked, gateway_stopping); comment lines as heartbeats. See docs/api.md, "The event stream".',
  content: { 'text/event-stream': { schema: Type.Unsafe<unknown>({ type: 'string' }) } },
};

export const eventRoutes: FastifyPluginAsyncTypebox<EventRoutesOptions> = async (app, { hub, revoked }) => {
  // Before the server's close: it would otherwise wait for every open stream to end on its own.
  app.addHook('preClose', async () => hub.close());

  app.get(
    '/v1/events',
    {
      // One of the read scopes; which events a stream carries follows the scopes the token has.
      config: { anyScope: ['alerts:read', 'devices:read', 'recordings:read'] },
      // HEAD of an endless stream means nothing.
      exposeHeadRoute: false,
      schema: {
        operationId: 'streamEvents',
        summary: 'Stream what happens: alerts created and read, device status, recordings created',
        tags: ['events'],
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({ description: 'The id of the last event received: the stream resumes after it (digits)' }),
          ),
        }),
        response: {
          200: EventStreamBody,
          ...errorResponses,
          503: errorResponse(
            `temporarily_unavailable: events.max_subscribers streams are open (Retry-After), or the token issuer's signing keys cannot be had right now`,
          ),
        },
      },
    },
    async (req, reply) => {
      const last = parseLastEventId(req.headers['last-event-id']);
      if (last.kind === 'malformed')
        throw badRequest('header Last-Event-ID must be the id of an event of this stream (decimal digits)');
      const token = req.token;
      if (!token) throw new Error('the route runs after the token check');
      const stream = hub.subscribe({
        scopes: token.scopes,
        start: streamStart(last, hub.window()),
        expiresAt: token.expiresAt,
        ...(revoked ? { revoked: () => revoked(token) } : {}),
        unsent: () => reply.raw.writableLength,
        abort: () => reply.raw.destroy(),
        done: once(reply.raw, 'close'),
      });
      return (
        reply
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          // Reverse proxies that buffer answers (nginx) would hold the events back.
          .header('x-accel-buffering', 'no')
          .send(stream)
      );
    },
  );
};
