// Lint gate: typescript-eslint's type-aware recommended rules over everything we run (src, test, scripts, bench, root files).
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/**', 'coverage/**', 'data/**', 'node_modules/**', 'bench/results/**', 'test-results/**', 'public/**', 'views/**'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        // Type information from tsconfig.json (the files tsc checks).
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Declaration merging re-types library globals (passport's Express.User): `declare global { namespace Express }`
      // and an interface that only extends another are the way to do it, so both are allowed in declarations.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      // `_`-prefixed names mark a parameter or destructured field that must exist but is unused on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // supertest (and fetch's json()) type every response body as `any`, and so do Jest's asymmetric matchers
    // (expect.any, expect.stringMatching); specs assert shapes at run time. `any` written in a spec is still an
    // error (no-explicit-any), and test/support stays fully checked.
    files: ['test/**/*-spec.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Test doubles written `async () => value` stand in for async collaborators: an await-less async is the point there.
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // Plain JavaScript (Jest configs, the .cjs binaries stand-in, this file): outside tsconfig, so no type information.
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // CommonJS files load their dependencies with require().
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // common/ is shared by every feature, so it imports none of them (config/ and database/ are infrastructure, not features);
  // a feature plugs into common through a token or callback instead.
  ...['src/common/*.ts', 'src/common/*/*.ts', 'src/common/*/*/*.ts'].map((files, depth) => ({
    files: [files],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./){${depth + 1}}(?!config/|database/|\\.\\./test/)`,
              message:
                'src/common must not depend on a feature module: move the shared type into common/ or let the feature provide a token.',
            },
          ],
        },
      ],
    },
  })),
);
