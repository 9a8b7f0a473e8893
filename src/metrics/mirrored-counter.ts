import { Counter, type Registry } from 'prom-client';

// A Prometheus counter whose values are kept elsewhere (plain numbers a part counts anyway, e.g.
// per packet or per request) and only grow: each scrape adds what they grew by, so nothing is
// counted twice and the hot path never touches prom-client. A label set is shown from the first
// scrape that reads it, at 0 until it grows.

/** One label set's count as its owner keeps it. */
export interface CountedSeries<T extends string> {
  labels: Readonly<Record<T, string | number>>;
  value: number;
}

/** A counter with any number of labels, read as label sets and their counts at each scrape. */
export function mirroredCounterSeries<T extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly T[],
  read: () => Iterable<CountedSeries<T>>,
): void {
  const seen = new Map<string, number>();
  new Counter<T>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const { labels, value } of read()) {
        const key = JSON.stringify(labelNames.map((n) => labels[n]));
        const before = seen.get(key);
        const grew = value - (before ?? 0);
        if (grew > 0 || before === undefined) this.inc(labels, grew);
        seen.set(key, value);
      }
    },
  });
}

/** A counter with one label at most, read as label → count (`{ total: n }` without a label). */
export function mirroredCounter(
  registry: Registry,
  name: string,
  help: string,
  read: () => Readonly<Record<string, number>>,
  labelName?: string,
): void {
  const labelNames = labelName ? [labelName] : [];
  mirroredCounterSeries(registry, name, help, labelNames, () =>
    Object.entries(read()).map(([label, value]) => ({ labels: labelName ? { [labelName]: label } : {}, value })),
  );
}
