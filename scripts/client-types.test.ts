import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../apps/server/src/testing/harness.js';
import { clientTypesSource, CLIENT_TYPES_PATH } from './client-types.js';
import { ROOT } from './local-runtime.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** The first line where two texts differ, with both versions of it (a 13,000-line diff helps nobody). */
function firstDifference(committed: string, current: string): string | undefined {
  if (committed === current) return undefined;
  const a = committed.split('\n');
  const b = current.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}: checked in ${JSON.stringify(a[at])}, served ${JSON.stringify(b[at])}`;
}

describe('the client types', () => {
  it('are what the served OpenAPI document generates (npm run client:generate)', async () => {
    const response = await h.request('GET', '/openapi.json', { key: null });
    expect(response.status).toBe(200);
    const committed = readFileSync(path.join(ROOT, CLIENT_TYPES_PATH), 'utf8');
    const current = await clientTypesSource(response.json);
    expect(
      firstDifference(committed, current),
      `${CLIENT_TYPES_PATH} is out of date: run npm run client:generate and commit it`,
    ).toBeUndefined();
    // Formatting 13,000 generated lines takes seconds, more on a loaded machine.
  }, 120_000);

  it('notice a route the document gains', async () => {
    const document = (await h.request('GET', '/openapi.json', { key: null })).json;
    document.paths['/tenants/{id}/archive'] = { post: document.paths['/tenants'].post };
    const committed = readFileSync(path.join(ROOT, CLIENT_TYPES_PATH), 'utf8');
    expect(firstDifference(committed, await clientTypesSource(document))).toMatch(/^line \d+: /);
  }, 120_000);
});
