import { GatewayError } from '../../domain/errors.js';

/** Every stream is taken (events.max_subscribers): the API answers 503 with Retry-After. */
export class EventStreamFullError extends GatewayError.of('event_stream_full') {
  readonly retryAfterS = 5;

  constructor(max: number) {
    super(`the gateway serves at most ${max} event streams at once; try again later`);
  }
}
