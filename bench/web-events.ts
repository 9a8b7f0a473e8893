// Benchmark: the event stream (GET /v1/events) with many subscribers while alerts are made; see
// bench/support/web-events.ts. Prints a table, then one JSON line.
import { measureEvents } from './support/web-events.ts';

const { table, json } = await measureEvents();
console.log(table);
console.log(JSON.stringify({ bench: 'web-events', ...json }));
process.exit(0);
