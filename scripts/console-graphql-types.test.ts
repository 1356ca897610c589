import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateConsoleGraphqlTypes, OUTPUT_DIR } from './console-graphql-types.js';

describe("the console's GraphQL types (apps/console/gql)", () => {
  it('are what `npm run graphql:console` generates from docs/schema.graphql and the console documents', async () => {
    // Throws when a console document no longer matches the schema (an unknown field, a wrong argument type).
    const generated = await generateConsoleGraphqlTypes();
    const committed = readdirSync(OUTPUT_DIR).map((name) => path.join(OUTPUT_DIR, name));
    expect(committed.sort(), 'files in apps/console/gql: run npm run graphql:console').toEqual(
      [...generated.keys()].sort(),
    );
    for (const [file, content] of generated) {
      expect(existsSync(file)).toBe(true);
      expect(readFileSync(file, 'utf8'), `${path.basename(file)} is stale: run npm run graphql:console`).toBe(content);
    }
  }, 60_000);
});
