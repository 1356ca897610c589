import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_VERSION } from '@svc/core';
import { startHarness, type Harness } from '../../../apps/server/src/testing/harness.js';

const run = promisify(execFile);
const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(PACKAGE, '../..');
// Outside the checkout: nothing of the monorepo (its node_modules included) can be found from there.
const PROJECT = mkdtempSync(path.join(tmpdir(), 'svc-client-consumer-'));

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
  rmSync(PROJECT, { recursive: true, force: true });
});

/** A consumer's program: strict TypeScript against the installed package only. */
const program = (baseUrl: string, key: string) => `
import { createClient, SvcApiError, verify, WebhookVerificationError, type Schema } from '@svc/client';

const svc = createClient({ baseUrl: ${JSON.stringify(baseUrl)}, key: ${JSON.stringify(key)} });
const { data: tenant, etag } = await svc.POST('/tenants', { body: { external_id: 'packed', name: 'Packed Inc' } });
const typed: Schema<'Tenant'> = tenant;
await svc.POST('/event_types', { body: { name: 'order.created', description: 'An order was made' } });
const published: string[] = [];
for (let i = 0; i < 5; i += 1) {
  const { data } = await svc.POST('/messages', {
    body: { tenant_id: tenant.id, event_type: 'order.created', payload: { order: i } },
  });
  published.push(data.id);
}
const { data: read } = await svc.GET('/messages/{id}', { params: { path: { id: published[0]! } } });
const pages: string[] = [];
const listed: string[] = [];
await svc.GET('/messages', { params: { query: { tenant_id: tenant.id, limit: 2 } } }).then(({ data }) => pages.push(String(data.data.length)));
for await (const message of svc.list('/messages', { params: { query: { tenant_id: tenant.id, limit: 2 } } }))
  listed.push(message.id);
let error: unknown;
try {
  await svc.PATCH('/tenants/{id}', { params: { path: { id: tenant.id }, header: { 'If-Match': '"wd:stale:0"' } }, body: { name: 'Renamed' } });
} catch (caught) {
  error = caught;
}
// @ts-expect-error a misspelled body field is a compile error
void (() => svc.POST('/tenants', { body: { external_id: 'x', name: 'x', nmae: 'x' } }));
let unverified = '';
try {
  verify({ 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }, '{}', 'whsec_' + btoa('k'.repeat(32)));
} catch (caught) {
  if (caught instanceof WebhookVerificationError) unverified = caught.name;
}
console.log(JSON.stringify({
  tenant: typed.external_id,
  etag: etag === '"wd:' + tenant.id + ':1"',
  published: published.length,
  read: read.id === published[0],
  firstPage: pages[0],
  listed: listed.join(',') === published.join(','),
  error: error instanceof SvcApiError ? { status: error.status, code: error.code } : String(error),
  unverified,
}));
`;

describe('the packed package, installed into a project of its own', () => {
  it('packs, installs offline from the tarball, compiles with tsc --strict and works against the server', async () => {
    const packed = path.join(PROJECT, 'pack');
    mkdirSync(packed);
    // npm pack builds it first (the package's prepare script).
    await run('npm', ['pack', '-w', '@svc/client', '--pack-destination', packed], { cwd: ROOT });
    const [tarball] = readdirSync(packed);
    expect(tarball).toMatch(/^svc-client-.+\.tgz$/);

    // What a published package has: a version that follows the API's (YYYY.MMDD.patch of SERVICE_VERSION), a
    // licence, a README, exports with types, and nothing that needs the monorepo (no dependencies at all).
    const { stdout: listing } = await run('tar', ['-tzf', path.join(packed, tarball!)]);
    const files = listing.trim().split('\n').sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'package/LICENSE',
        'package/README.md',
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/vendor/openapi-fetch.d.ts',
        'package/dist/THIRD_PARTY_NOTICES.md',
      ]),
    );
    expect(files.filter((file) => !file.startsWith('package/dist/') && !/^package\/[^/]+$/.test(file))).toEqual([]);
    expect(files.some((file) => /\.test\.|\/src\//.test(file))).toBe(false);
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
    const [year, month, day] = SERVICE_VERSION.split('-').map(Number);
    expect(manifest.version).toMatch(new RegExp(`^${year}\\.${month! * 100 + day!}\\.\\d+$`));
    expect(manifest.license).toBe('MIT');
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});

    // A project of its own, offline: the tarball is all it gets.
    writeFileSync(
      path.join(PROJECT, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: {} }),
    );
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(packed, tarball!)], {
      cwd: PROJECT,
    });
    writeFileSync(path.join(PROJECT, 'main.ts'), program(h.baseUrl, h.team.key));
    writeFileSync(
      path.join(PROJECT, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'DOM'],
          types: [],
          outDir: 'out',
          skipLibCheck: false,
        },
        files: ['main.ts'],
      }),
    );
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: PROJECT }).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout, failed: true }),
    );
    expect(compiled).not.toHaveProperty('failed');

    const { stdout } = await run(process.execPath, ['out/main.js'], { cwd: PROJECT });
    // The figures the issue asks to see, in the test's output.
    console.warn(`packed client (${tarball}) against the server: ${stdout.trim()}`);
    expect(JSON.parse(stdout)).toEqual({
      tenant: 'packed',
      etag: true,
      published: 5,
      read: true,
      firstPage: '2',
      listed: true,
      error: { status: 412, code: 'revision_conflict' },
      unverified: 'WebhookVerificationError',
    });
  }, 180_000);
});
