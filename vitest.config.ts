import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // type-graphql loads graphql's CommonJS build; resolve ours to the same file so there is one graphql realm.
  resolve: { alias: { graphql: require.resolve('graphql') } },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'apps/server/src/**/*.test.ts',
      'apps/worker/src/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    globalSetup: ['./scripts/vitest-global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
