// npm run bench -- NAME [args]: runs bench/NAME.ts (Node strips its types) against the built gateway
// (dist/). What the benches share is in bench/support/.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const name = process.argv[2];
const available = readdirSync(path.join(root, 'bench'))
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -'.ts'.length))
  .sort();
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- NAME [args]   (NAME: ${available.join(', ')})`);
  process.exit(2);
}
if (!existsSync(path.join(root, 'dist/cli.js'))) {
  console.error('build first: npm run build');
  process.exit(2);
}
await import(pathToFileURL(path.join(root, 'bench', `${name}.ts`)).href);
