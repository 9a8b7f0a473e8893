// typescript-eslint's recommended rules with type information, over src and test (./run test runs
// it before the tests). A rule turned off or down is listed here with the reason.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.runtime/', 'data/', 'coverage/', 'bench/', 'scripts/'] },
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
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
  {
    // The web app has its own compiler settings (DOM, TSX): web/tsconfig.json.
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { project: './web/tsconfig.json', tsconfigRootDir: import.meta.dirname } },
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
);
