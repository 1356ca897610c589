import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
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

/**
 * Calls a compiler must refuse, each under `// @ts-expect-error`: when the client's types stop refusing one, tsc
 * reports the directive as unused and the test fails. The valid calls beside them must compile.
 */
const CHECKED_CALLS = `
import { createClient } from '../../packages/client/src/index.js';

const svc = createClient({ baseUrl: 'http://127.0.0.1:1/v1', key: 'svc_sk_x' });
export async function calls(id: string, etag: string): Promise<void> {
  await svc.POST('/tenants', { body: { external_id: 'acme', name: 'Acme Inc' } });
  // @ts-expect-error a misspelled body field
  await svc.POST('/tenants', { body: { external_id: 'acme', name: 'Acme Inc', metdata: {} } });
  // @ts-expect-error a field the body does not have
  await svc.POST('/tenants', { body: { external_id: 'acme', name: 'Acme Inc', colour: 'red' } });
  // @ts-expect-error a field of the wrong type
  await svc.POST('/tenants', { body: { external_id: 'acme', name: 42 } });
  // @ts-expect-error a required field left out
  await svc.POST('/event_types', { body: { description: 'no name' } });
  const ifMatch = { path: { id }, header: { 'If-Match': etag } };
  await svc.PATCH('/endpoints/{id}', { params: ifMatch, body: { rate_per_second: 10 } });
  // @ts-expect-error a misspelled field in a change
  await svc.PATCH('/endpoints/{id}', { params: ifMatch, body: { rate_per_secnd: 10 } });
  // @ts-expect-error a misspelled option beside body
  await svc.POST('/tenants', { body: { external_id: 'acme', name: 'Acme Inc' }, bdy: {} });
  // @ts-expect-error a query parameter the list does not take
  await svc.GET('/messages', { params: { query: { tenant: id } } });
  // @ts-expect-error a misspelled option where every option is optional
  for await (const message of svc.list('/messages', { parms: {} })) void message;
  const { data } = await svc.GET('/messages/{id}/content', { params: { path: { id } }, parseAs: 'text' });
  const text: string = data;
  void text;
}
`;

describe('the client types check bodies', () => {
  it('refuse misspelled, unknown and mistyped fields (tsc --strict, every @ts-expect-error used)', async () => {
    const dir = path.join(ROOT, '.tmp', `client-calls-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(path.join(dir, 'calls.ts'), CHECKED_CALLS);
      const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
      const args = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'ES2022', '--module', 'NodeNext'];
      args.push('--moduleResolution', 'NodeNext', '--lib', 'ES2023,DOM', '--types', 'node', 'calls.ts');
      const result = await promisify(execFile)(process.execPath, [tsc, ...args], { cwd: dir }).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      );
      expect(result).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
