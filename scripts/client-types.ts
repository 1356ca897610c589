/**
 * `npm run client:generate`: writes the client's types (packages/client/src/generated/openapi.ts) from the OpenAPI
 * document the server serves at GET /v1/openapi.json. The script starts a throwaway Postgres and a real server (the
 * test harness) and reads the document over HTTP, so the types come from what is served, not from a copy.
 * A test (packages/client/src/generated.test.ts) fails when the checked-in file differs from what the served
 * document generates now, so a route change that does not regenerate fails the run.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import prettier from 'prettier';
import { ROOT } from './local-runtime.js';

export const CLIENT_TYPES_PATH = 'packages/client/src/generated/openapi.ts';

const HEADER =
  COMMENT_HEADER.replace(
    ' */',
    ' *\n * Regenerate with `npm run client:generate` (from GET /v1/openapi.json of the running server).\n */',
  ) + '\n';

/** The TypeScript source openapi-typescript makes of the document, formatted like the rest of the repository. */
export async function clientTypesSource(document: unknown): Promise<string> {
  // A field with a default may be left out of a request (defaultNonNullable would make it required).
  const ast = await openapiTS(document as OpenAPI3, { silent: true, defaultNonNullable: false });
  const config = await prettier.resolveConfig(path.join(ROOT, CLIENT_TYPES_PATH));
  return prettier.format(HEADER + astToString(ast), { ...config, parser: 'typescript' });
}

async function main(): Promise<void> {
  const { default: startTestCluster } = await import('./vitest-global-setup.js');
  const { startHarness } = await import('../apps/server/src/testing/harness.js');
  const stopCluster = await startTestCluster();
  try {
    const h = await startHarness();
    try {
      const response = await h.request('GET', '/openapi.json', { key: null });
      if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
      writeFileSync(path.join(ROOT, CLIENT_TYPES_PATH), await clientTypesSource(response.json));
      console.log(`Wrote ${CLIENT_TYPES_PATH}`);
    } finally {
      await h.close();
    }
  } finally {
    await stopCluster();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'scripts/client-types.ts')) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
