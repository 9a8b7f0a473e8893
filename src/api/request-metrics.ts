import type { onResponseHookHandler } from 'fastify';
import { Histogram, type Registry } from 'prom-client';
import { mirroredCounterSeries } from '../metrics/mirrored-counter.js';

// Every API answer is counted by method, route pattern and status, and timed by route. Each route
// has a tally of its own, reached from a hook of that route's own (made once, when the route is
// added): the counts are plain numbers read when scraped, the duration is observed in prom-client's
// histogram. The tallies are bounded: routes are fixed at start, methods are the HTTP parser's and
// statuses the three-digit codes.

/** Upper bounds of the request duration histogram, in seconds. */
export const DURATION_BUCKETS_S: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** The label of answers no route matched (the not-found handler's). */
export const UNMATCHED = 'unmatched';

/** One route's answers: counts by method and status; durations observed in the route's histogram series. */
export class RouteTally {
  readonly #answers = new Map<string, Map<number, number>>();
  readonly #durations: { observe(seconds: number): void };

  constructor(
    readonly route: string,
    durations: Histogram<'route'>,
  ) {
    this.#durations = durations.labels({ route });
  }

  record(method: string, status: number, seconds: number): void {
    let byStatus = this.#answers.get(method);
    if (byStatus === undefined) this.#answers.set(method, (byStatus = new Map<number, number>()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.#durations.observe(seconds);
  }

  *answers(): Iterable<{ method: string; status: number; count: number }> {
    for (const [method, byStatus] of this.#answers)
      for (const [status, count] of byStatus) yield { method, status, count };
  }
}

export interface RequestMetrics {
  /** The onResponse hook that tallies the answers of the route `url` (one tally per URL pattern). */
  hookFor(url: string): onResponseHookHandler;
  /** The tally of answers no route matched. */
  readonly unmatched: RouteTally;
}

export function requestMetrics(registry: Registry): RequestMetrics {
  const durations = new Histogram({
    name: 'edge_gateway_http_request_duration_seconds',
    help: 'API request handling time',
    labelNames: ['route'] as const,
    buckets: [...DURATION_BUCKETS_S],
    registers: [registry],
  });
  const tallies = new Map<string, RouteTally>();
  const tallyOf = (route: string): RouteTally => {
    let tally = tallies.get(route);
    if (tally === undefined) tallies.set(route, (tally = new RouteTally(route, durations)));
    return tally;
  };
  mirroredCounterSeries(
    registry,
    'edge_gateway_http_requests_total',
    'API requests answered, by route and status',
    ['method', 'route', 'status'],
    function* () {
      for (const tally of tallies.values())
        for (const { method, status, count } of tally.answers())
          yield { labels: { method, route: tally.route, status }, value: count };
    },
  );
  return {
    hookFor(url) {
      const tally = tallyOf(url);
      return (request, reply, done) => {
        tally.record(request.method, reply.statusCode, reply.elapsedTime / 1000);
        done();
      };
    },
    unmatched: tallyOf(UNMATCHED),
  };
}
