// Benchmark: the event stream (GET /v1/events) with many subscribers while alerts are made; see
// bench/support/web-events.mjs. Prints a table, then one JSON line.
import { measureEvents } from './support/web-events.mjs';

const { table, json } = await measureEvents();
console.log(table);
console.log(JSON.stringify({ bench: 'web-events', ...json }));
process.exit(0);
