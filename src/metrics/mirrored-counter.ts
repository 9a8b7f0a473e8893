import { Counter, type Registry } from 'prom-client';

// A Prometheus counter whose values are kept elsewhere (plain numbers a part counts anyway, e.g.
// per packet) and only grow: each scrape adds what they grew by, so nothing is counted twice and
// the hot path never touches prom-client. A label is shown from the first scrape, at 0 until it grows.

export function mirroredCounter(registry: Registry, name: string, help: string, read: () => Readonly<Record<string, number>>, labelName?: string): void {
  const seen = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames: labelName ? [labelName] : [],
    registers: [registry],
    collect() {
      for (const [label, value] of Object.entries(read())) {
        const grew = value - (seen.get(label) ?? 0);
        if (grew > 0 || !seen.has(label)) {
          if (labelName) this.inc({ [labelName]: label }, grew);
          else this.inc(grew);
        }
        seen.set(label, value);
      }
    },
  });
}
