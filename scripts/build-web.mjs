// Builds the web app (web/) into dist/web: esbuild bundles web/src/main.tsx (Preact, TSX) with
// content-hashed names under assets/, index.html names them, the files of web/public (the web app
// manifest, the icons) are copied as they are, the service worker (web/sw/sw.ts) becomes /sw.js
// with the list of this build's shell written into it, and every text file gets a .br and a .gz
// beside it for @fastify/static's preCompressed. Prints the compressed size of what the first
// screen loads (goal ≤ 150 KB, docs/web-app.md) and of the lazy chunks (hls.js).
//   node scripts/build-web.mjs [--out DIR]
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const outIndex = process.argv.indexOf('--out');
const out = outIndex > 0 ? path.resolve(process.argv[outIndex + 1]) : path.join(root, 'dist/web');
const assets = path.join(out, 'assets');

rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });

const common = {
  bundle: true,
  target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
  minify: true,
  sourcemap: false,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
};
const result = await build({
  ...common,
  entryPoints: [path.join(root, 'web/src/main.tsx')],
  splitting: true,
  format: 'esm',
  outdir: assets,
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  define: { 'process.env.NODE_ENV': '"production"' },
});
refuseServerCode(result.metafile);

// The manifest and the icons, under the names index.html and the manifest give them.
cpSync(path.join(root, 'web/public'), out, { recursive: true });

// What index.html loads: the entry script and its stylesheet; the chunks it imports statically
// come with it (modulepreload), and so does the app the entry imports dynamically (main.tsx: the
// entry starts the session while the app's file is still on its way). Dynamic imports further
// down (hls.js) load later, only when needed.
const outputs = result.metafile.outputs;
const rel = (file) => path.relative(out, path.resolve(root, file)).split(path.sep).join('/');
const entry = Object.entries(outputs).find(([, o]) => o.entryPoint);
if (!entry) throw new Error('esbuild wrote no entry point');
const [entryFile, entryMeta] = entry;
const css = entryMeta.cssBundle ? rel(entryMeta.cssBundle) : null;
const firstScreen = new Set([rel(entryFile), ...(css ? [css] : [])]);
// Static imports everywhere; the entry's dynamic import (the app) too.
const loadedWith = (file) =>
  (outputs[file]?.imports ?? []).filter(
    (i) => i.kind === 'import-statement' || (file === entryFile && i.kind === 'dynamic-import'),
  );
const queue = [entryFile];
while (queue.length) {
  for (const imp of loadedWith(queue.pop())) {
    const name = rel(imp.path);
    if (!firstScreen.has(name)) {
      firstScreen.add(name);
      queue.push(imp.path);
    }
  }
}

const template = readFileSync(path.join(root, 'web/index.html'), 'utf8');
const preloads = [...firstScreen]
  .filter((f) => f.endsWith('.js') && f !== rel(entryFile))
  .map((f) => `<link rel="modulepreload" href="/${f}">`);
const html = template
  .replace('<!--styles-->', css ? `<link rel="stylesheet" href="/${css}">` : '')
  .replace('<!--scripts-->', [...preloads, `<script type="module" src="/${rel(entryFile)}"></script>`].join('\n    '));
writeFileSync(path.join(out, 'index.html'), html);
firstScreen.add('index.html');

// The service worker: a classic script (module workers are recent in Firefox and Safari) at the
// root, so its scope is the whole app, under a name that never changes (a page registers it by
// that name). What it keeps for opening offline, written into it: the first screen's files and the
// tab's icon; not hls.js, which plays nothing without the gateway.
const shell = ['index.html', ...[...firstScreen].filter((f) => f !== 'index.html').sort(), 'icons/icon-192.png'];
const buildId = createHash('sha256');
for (const file of shell) buildId.update(file).update(readFileSync(path.join(out, file)));
const worker = await build({
  ...common,
  entryPoints: [path.join(root, 'web/sw/sw.ts')],
  format: 'iife',
  outfile: path.join(out, 'sw.js'),
  define: {
    SHELL_FILES: JSON.stringify(shell.map((f) => `/${f}`)),
    BUILD_ID: JSON.stringify(buildId.digest('hex').slice(0, 16)),
  },
});
refuseServerCode(worker.metafile);

// Precompressed copies: @fastify/static picks one by Accept-Encoding.
const sizes = [];
for (const file of listFiles(out)) {
  if (!/\.(js|css|html|svg|json|webmanifest|txt)$/.test(file)) continue;
  const body = readFileSync(path.join(out, file));
  const br = brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
  const gz = gzipSync(body, { level: 9 });
  writeFileSync(path.join(out, `${file}.br`), br);
  writeFileSync(path.join(out, `${file}.gz`), gz);
  sizes.push({ file, raw: body.length, br: br.length, gz: gz.length, first: firstScreen.has(file) });
}

const kb = (n) => (n / 1024).toFixed(1);
sizes.sort((a, b) => Number(b.first) - Number(a.first) || b.raw - a.raw);
console.log(`web app → ${path.relative(root, out) || out}`);
console.log('file'.padEnd(40), 'raw KB'.padStart(8), 'br KB'.padStart(8), 'gz KB'.padStart(8), ' loaded');
for (const s of sizes)
  console.log(
    s.file.padEnd(40),
    kb(s.raw).padStart(8),
    kb(s.br).padStart(8),
    kb(s.gz).padStart(8),
    s.first ? ' first screen' : ' on demand',
  );
const first = sizes.filter((s) => s.first);
const sum = (key) => first.reduce((n, s) => n + s[key], 0);
const goal = 150 * 1024;
console.log(
  `first screen: ${kb(sum('br'))} KB brotli, ${kb(sum('gz'))} KB gzip (goal ≤ ${kb(goal)} KB compressed): ${sum('gz') <= goal ? 'met' : 'NOT met'}`,
);

// The API types come from the server's schema files by type-only imports: a value import would
// pull server code (and node: modules) into the page. Refuse the build if one slipped in.
function refuseServerCode(metafile) {
  const serverInputs = Object.keys(metafile.inputs).filter((f) => f.startsWith('src/') || f.startsWith('node:'));
  if (serverInputs.length > 0) throw new Error(`server code in the web bundle: ${serverInputs.join(', ')}`);
}

function listFiles(dir) {
  return readdirSync(dir, { recursive: true })
    .map((f) => String(f))
    .filter((f) => statSync(path.join(dir, f)).isFile())
    .map((f) => f.split(path.sep).join('/'));
}
