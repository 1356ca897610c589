import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '@svc/db';

/** Starts one throwaway Postgres cluster for the whole run; each test file creates its own database in it. */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env['SVC_TEST_DATABASE_URL']) return async () => undefined;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-test-pg-'));
  const cluster = await startEmbeddedPostgres({ dataDir, persistent: false });
  process.env['SVC_TEST_DATABASE_URL'] = cluster.url;
  return async () => {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
