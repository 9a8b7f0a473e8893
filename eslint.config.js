// typescript-eslint's recommended rules with type information, over src, test, web and bench (./run
// test runs it before the tests). A rule turned off or down is listed here with the reason.
import eslint from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// The layers of src, lowest first (docs/architecture.md, "Layers"). A module may import its own
// layer and those below it, never one above: each entry has a rank of its own, so two folders
// cannot import each other and a folder cycle cannot be written. A lower part that needs a higher
// one declares the small interface it needs in its own files and main.ts passes the implementation;
// what two parts share goes down to a layer below both. An entry is a folder of src with its
// subfolders, except the media/ subfolders listed on their own ('media' is the files directly in
// media/), or a file at src's root. A new folder goes in where its imports put it: above every
// layer it imports, below every layer that imports it.
const LAYERS = [
  'domain',
  'platform',
  'version.ts',
  'config',
  'daemon',
  'metrics',
  'store',
  'onvif',
  'media',
  'media/rtsp',
  'media/fmp4',
  'media/relay',
  'media/mux',
  'media/still',
  'media/footage',
  'detect',
  'media/recorder',
  'media/webrtc',
  'media/hls',
  'auth',
  'sync',
  'notify',
  'api',
  'main.ts',
  'cli.ts',
];

const layerName = (layer) => (layer === 'media' ? 'src/media/*.ts' : `src/${layer}`);

/** The files of a layer, as a flat-config `files` glob. */
function layerFiles(layer) {
  if (layer.endsWith('.ts')) return `src/${layer}`;
  return layer === 'media' ? 'src/media/*.ts' : `src/${layer}/**/*.ts`;
}

// How a relative import names a layer: a run of `./` or `../`, then the layer's folder (a media/
// subfolder also as a sibling, `../relay/`) or root file. Regular expressions rather than gitignore
// globs: `**/store/**` would match a package's path (`some-lib/store/x`) too, and `**/media/*` every
// file under media/ (a matched folder's contents match). The folder names of LAYERS are unique in
// src, so the name after the run is the layer.
const RELATIVE = String.raw`^(?:\./|(?:\.\./)+)`;
function layerImport(layer) {
  if (layer.endsWith('.ts')) return `${RELATIVE}${layer.replace(/\.ts$/, '')}\\.js$`;
  if (layer === 'media') return `${RELATIVE}media/[^/]+$`;
  if (layer.startsWith('media/')) return `${RELATIVE}(?:media/)?${layer.slice('media/'.length)}/`;
  return `${RELATIVE}${layer}/`;
}

const layerRules = LAYERS.map((layer, rank) => ({
  files: [layerFiles(layer)],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: LAYERS.slice(rank + 1).map((higher) => ({
          regex: layerImport(higher),
          message: `${layerName(layer)} is below ${layerName(higher)} in the layers of eslint.config.js, so it may not import it: declare the interface it needs in ${layerName(layer)} and let main.ts pass the implementation, or move what both use down to a layer below both.`,
        })),
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.runtime/', 'data/', 'coverage/', 'scripts/'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Fastify plugins, hooks and handlers are async by contract (Fastify awaits what they return),
      // as are the port interfaces the parts implement; many have nothing to await. The rule would
      // ask for callback-style plugins or `return Promise.resolve(x)` noise instead.
      '@typescript-eslint/require-await': 'off',
      // `_` marks what a signature or a destructuring must name but the code does not use.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // The web app has its own compiler settings (DOM, TSX): web/tsconfig.json.
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { project: './web/tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  {
    // The service worker has a worker's globals, not the DOM's: its own settings.
    files: ['web/sw/**/*.ts'],
    languageOptions: { parserOptions: { project: './web/sw/tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  {
    // The benches: Node runs them as they are, against the built dist/ (bench/tsconfig.json).
    files: ['bench/**/*.ts'],
    languageOptions: { parserOptions: { project: './bench/tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  {
    // React's hook rules hold for Preact's hooks too, and these two know hooks by their names, so
    // they read 'preact/hooks' as they read 'react'. Not the rest of the plugin's recommended set:
    // those are the React Compiler's checks, which know what useRef or useState return only when
    // imported from 'react'; here they take a ref's .current write for the mutation of a frozen
    // value and miss the setState calls they look for. Errors: a missed dependency is a stale value.
    files: ['web/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Vitest's asymmetric matchers (expect.any, expect.objectContaining, …) are typed `any`, and
      // tests put them inside expected values on purpose.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  ...layerRules,
  {
    // no-restricted-imports sees static imports and re-exports only, so src names its own modules
    // statically; cli.ts, at the top, loads the daemon and the simulator lazily to start quickly.
    files: ['src/**/*.ts'],
    ignores: ['src/cli.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/^\\./]',
          message: 'Import modules of src statically: the layer rule (eslint.config.js) does not see import().',
        },
        {
          selector: 'TSImportType[source.value=/^\\./]',
          message:
            'Import types of src with `import type`: the layer rule (eslint.config.js) does not see import("…") types.',
        },
      ],
    },
  },
);
