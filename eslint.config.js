// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/.next/**',
      '.data/**',
      '.tmp/**',
      'dist/**',
      'packages/*/dist/**',
      // The client's build stages its files here while it runs (packages/client/build.mjs).
      'packages/*/.build-*/**',
      'test-results/**',
      'playwright-report/**',
      'apps/console/next-env.d.ts',
      // Generated from docs/schema.graphql by `npm run graphql:console`.
      'apps/console/gql/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    // A pattern that can backtrack exponentially or polynomially freezes the process on a crafted input (issue 17).
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { regexp },
    rules: { 'regexp/no-super-linear-backtracking': 'error' },
  },
  {
    // Programs that talk to a person: the scripts, the e2e tests, the examples (console.log is their output).
    files: ['scripts/**/*.ts', 'e2e/**/*.ts', 'examples/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Examples a user runs with plain node (the README's receiver), and the client's build (run by npm ci).
    files: ['examples/**/*.mjs', 'packages/client/build.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        // Node 20's web globals, which the stream receiver uses (examples/stream-receiver.mjs).
        fetch: 'readonly',
        setTimeout: 'readonly',
        TextDecoderStream: 'readonly',
      },
    },
  },
  {
    // Packages never import a transport (DESIGN.md: dependency direction).
    files: ['packages/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            'fastify',
            'fastify/*',
            'graphql',
            '@apollo/*',
            'type-graphql',
            'next',
            'next/*',
            '@svc/server',
            '@svc/worker',
          ],
        },
      ],
    },
  },
  {
    // The console talks to the GraphQL API only.
    files: ['apps/console/**/*.ts', 'apps/console/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@svc/core', '@svc/core/*', '@svc/db', '@svc/db/*', 'typeorm', 'pg'] },
      ],
    },
  },
);
