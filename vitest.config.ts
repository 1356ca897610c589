import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // type-graphql loads graphql's CommonJS build; resolve ours to the same file so there is one graphql realm (the
  // package name alone: graphql/validation/... are files of that build already).
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
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
    // Files share their fork's modules: importing the server's graph (type-graphql, TypeORM, Fastify) once per fork
    // instead of once per file took the run from about 395 s to 250 s on 2 cores. Tests keep no module state of
    // their own: each file starts its own harness, database and clock.
    // Two forks on 2 cores, although the machine sits about a third idle with two: with three, vitest's pool ended
    // the run early twice ("Terminating worker thread": tinypool terminated a fork that still had a task open, and the
    // report was never written), once in a fresh clone's whole run.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
  },
});
