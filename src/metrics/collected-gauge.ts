import { Gauge, type Registry } from 'prom-client';

// A gauge without labels whose value is read when Prometheus scrapes (a count a part keeps anyway:
// open sessions, bytes held), so nothing is set on the hot path.

export function collectedGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}
