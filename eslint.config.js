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
  },
);
