import { Histogram, type Registry } from 'prom-client';

// A Prometheus histogram whose buckets are counted elsewhere, in plain numbers, and read only when
// scraped. prom-client's own observe() hashes its labels and turns the bucket's bound into a
// property name on every call, which costs a busy API several µs a request (docs/performance.md);
// this costs nothing until a scrape. The text it exports is prom-client's own.

/** One label set's observations: counts per bucket (not cumulative; one per bound, in order), their sum and their count (which also holds those above the last bound). */
export interface BucketCounts<T extends string> {
  labels: Readonly<Record<T, string>>;
  counts: ArrayLike<number>;
  sum: number;
  count: number;
}

export interface PrecountedHistogramConfig<T extends string> {
  name: string;
  help: string;
  labelNames: readonly T[];
  /** Upper bounds, ascending; the same the counts are kept by. */
  buckets: readonly number[];
  registers: Registry[];
  read: () => Iterable<BucketCounts<T>>;
}

type Exported<T extends string> = Awaited<ReturnType<Histogram<T>['get']>>;

// prom-client's typings declare the type a numeric enum; at run time it is this text, which the
// Registry prints in the # TYPE line.
const HISTOGRAM = 'histogram' as unknown as Exported<string>['type'];

export class PrecountedHistogram<T extends string> extends Histogram<T> {
  readonly #name: string;
  readonly #help: string;
  readonly #bounds: readonly number[];
  readonly #read: () => Iterable<BucketCounts<T>>;

  constructor(config: PrecountedHistogramConfig<T>) {
    super({ name: config.name, help: config.help, labelNames: config.labelNames, buckets: [...config.buckets], registers: config.registers });
    this.#name = config.name;
    this.#help = config.help;
    this.#bounds = config.buckets;
    this.#read = config.read;
    // prom-client's constructor sets observe on the object itself, so a method would not take its place.
    this.observe = (): never => {
      throw new Error(`${config.name} is counted elsewhere: it cannot be observed`);
    };
  }

  override async get(): Promise<Exported<T>> {
    return this.#export();
  }

  /** What prom-client's Registry reads for the text format (the same values, already flat). */
  async getForPromString(): Promise<Exported<T>> {
    return this.#export();
  }

  #export(): Exported<T> {
    const bucket = `${this.#name}_bucket`;
    // prom-client's own values carry `le` beside the histogram's labels too.
    const values: Exported<string>['values'] = [];
    for (const { labels, counts, sum, count } of this.#read()) {
      let below = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        below += counts[i] ?? 0;
        values.push({ labels: { le: this.#bounds[i], ...labels }, value: below, metricName: bucket });
      }
      values.push(
        { labels: { le: '+Inf', ...labels }, value: count, metricName: bucket },
        { labels: { ...labels }, value: sum, metricName: `${this.#name}_sum` },
        { labels: { ...labels }, value: count, metricName: `${this.#name}_count` },
      );
    }
    return { name: this.#name, help: this.#help, type: HISTOGRAM, values, aggregator: 'sum', collect: () => undefined };
  }
}
