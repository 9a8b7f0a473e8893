// autocannon (8.x) ships no types: what the HTTP benches use of it (its README, "API").
declare module 'autocannon' {
  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    pipelining?: number;
    /** Requests per second over all connections. */
    overallRate?: number;
  }

  /** A histogram's summary: `total` (sum), mean and percentiles such as p50 and p99. */
  export interface Histogram {
    total: number;
    average: number;
    p50: number;
    p99: number;
    max: number;
  }

  export interface Result {
    /** Milliseconds. */
    latency: Histogram;
    /** Requests per second; `total` is the number of requests. */
    requests: Histogram;
    /** Bytes per second; `total` is the number of bytes. */
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    /** Seconds. */
    duration: number;
  }

  /** Runs the load; the promise gives its summary. */
  export default function autocannon(options: Options): Promise<Result>;
}
