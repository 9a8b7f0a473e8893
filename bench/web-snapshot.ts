// Benchmark of GET /v1/devices/{id}/snapshot with 16 cameras on a page (bench/support/web-snapshot.ts
// says what is measured). Prints the table, then one JSON line {"bench":"web-snapshot",...}.
import { measureSnapshot } from './support/web-snapshot.ts';

const { table, json } = await measureSnapshot();
console.log(table);
console.log(JSON.stringify({ bench: 'web-snapshot', ...json }));
