// npm run bench -- NAME [args]: runs bench/NAME.mjs against the built gateway (dist/).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const name = process.argv[2];
const available = readdirSync(path.join(root, 'bench')).filter((f) => f.endsWith('.mjs') && f !== 'gateway-process.mjs').map((f) => f.slice(0, -4));
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- NAME   (NAME: ${available.join(', ')})`);
  process.exit(2);
}
if (!existsSync(path.join(root, 'dist/cli.js'))) {
  console.error('build first: npm run build');
  process.exit(2);
}
await import(pathToFileURL(path.join(root, 'bench', `${name}.mjs`)).href);
