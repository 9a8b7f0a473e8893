import { Gauge, type Registry } from 'prom-client';

// The gateway's own facts as series of the metrics listener: what /healthz told the LAN before
// (version, clock state) now goes only where the owner scrapes. No series carries the gateway id
// as a label (Prometheus adds the target's labels itself); edge_gateway_info holds it once.

export interface GatewayFacts {
  version: string;
  /** null: left out (the listener is reachable beyond this box). */
  gatewayId: string | null;
  /** Whether the system clock is synchronised (a Pi has no RTC); null when it cannot be told. */
  clockSynchronized: () => boolean | null;
}

export function registerGatewayMetrics(registry: Registry, facts: GatewayFacts): void {
  const info = new Gauge({
    name: 'edge_gateway_info',
    help: 'Always 1; the labels say which gateway and version this is',
    labelNames: facts.gatewayId === null ? ['version'] : ['version', 'gateway_id'],
    registers: [registry],
  });
  info.set(
    facts.gatewayId === null ? { version: facts.version } : { version: facts.version, gateway_id: facts.gatewayId },
    1,
  );
  new Gauge({
    name: 'edge_gateway_clock_synchronized',
    help: '1 once the system clock is set over the network, 0 before (timestamps may be wrong); absent when it cannot be told',
    registers: [registry],
    collect() {
      const synced = facts.clockSynchronized();
      if (synced === null) this.reset();
      else this.set(synced ? 1 : 0);
    },
  });
}
