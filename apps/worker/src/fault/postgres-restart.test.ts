import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedCluster } from '@svc/db';
import { startDeployment, type Deployment } from './deployment.js';
import { killStartedProcesses, until, type ServiceProcess } from './processes.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * Postgres restarts under load: this file runs its own cluster (restarting the shared one would disturb other
 * test files), a real server process and two worker processes. Publishing goes on while Postgres is down (and
 * fails), succeeds again once it is back, the workers reconnect by themselves, and every accepted message is
 * delivered.
 */
let dataDir: string;
let cluster: EmbeddedCluster | null = null;
let clusterDirs: string[] = [];
let databaseUrl: string;
let d: Deployment;
let receiver: Receiver;
let workers: ServiceProcess[] = [];

async function startCluster(port?: number): Promise<EmbeddedCluster> {
  const started = await startEmbeddedPostgres({ dataDir, persistent: true, ...(port ? { port } : {}) });
  clusterDirs = [dataDir, started.dataDir];
  return started;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'svc-fault-pg-'));
  cluster = await startCluster();
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('CREATE DATABASE fault');
  await admin.end();
  const url = new URL(cluster.url);
  url.pathname = '/fault';
  databaseUrl = url.toString();
  receiver = await startReceiver();
  d = await startDeployment({ databaseUrl, jobExpirySeconds: 2 });
  workers = await Promise.all([d.startWorker('worker-1'), d.startWorker('worker-2')]);
}, 60_000);

afterAll(async () => {
  await killStartedProcesses();
  await d?.close().catch(() => undefined);
  await receiver?.close();
  await cluster?.stop();
  for (const dir of clusterDirs) rmSync(dir, { recursive: true, force: true });
});

describe('Postgres restarts under load', () => {
  it('publishing resumes, workers reconnect, and every accepted message is delivered', async () => {
    // A short timeout keeps the lease short (timeout + 30 s): an attempt whose settlement died with the database
    // is attempted again once it lapses.
    const { tenantId } = await d.endpoint(`${receiver.baseUrl}/restart`, { timeout_seconds: 1 });
    // The tenant's second endpoint is ordered: its order holds through the restart too.
    const ordered = await d.api('POST', '/endpoints', {
      tenant_id: tenantId,
      url: `${receiver.baseUrl}/restart-ordered`,
      timeout_seconds: 1,
      ordering: 'ordered',
    });
    expect(ordered.status, ordered.text).toBe(201);
    const accepted: string[] = [];
    let failed = 0;
    let phase: 'before' | 'down' | 'after' = 'before';
    const acceptedAfter: string[] = [];
    let publishing = true;
    let n = 0;
    const publishers = Array.from({ length: 2 }, async () => {
      while (publishing) {
        n += 1;
        const answer = await d.publish(tenantId, { n }).catch(() => null);
        if (answer?.status === 202) {
          accepted.push(answer.json.id as string);
          if (phase === 'after') acceptedAfter.push(answer.json.id as string);
        } else {
          failed += 1;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    });

    await until('messages accepted before the restart', () => (accepted.length >= 20 ? true : undefined));
    const port = Number(new URL(databaseUrl).port);
    phase = 'down';
    await cluster!.stop();
    cluster = null;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    cluster = await startCluster(port);
    phase = 'after';
    await until('messages accepted after the restart', () => (acceptedAfter.length >= 20 ? true : undefined), 30_000);
    publishing = false;
    await Promise.all(publishers);
    expect(failed).toBeGreaterThan(0);

    // Nothing crashed: the same processes are still running.
    for (const p of [d.server, ...workers])
      expect(p.child.exitCode, `${p.name}:\n${p.output().slice(-2000)}`).toBe(null);

    await until(
      'every delivery to finish',
      async () => {
        const rows: { pending: string }[] = await d.core.services.db.query(
          `SELECT count(*) FILTER (WHERE status NOT IN ('succeeded', 'failed', 'expired', 'canceled')) AS pending
             FROM deliveries`,
        );
        return Number(rows[0]!.pending) === 0 ? true : undefined;
      },
      50_000,
      250,
    );
    const statuses: { status: string; n: string }[] = await d.core.services.db.query(
      'SELECT status, count(*) AS n FROM deliveries GROUP BY status',
    );
    // Every message stored (accepted, or stored while its answer was lost) succeeded.
    expect(statuses.map((s) => s.status)).toEqual(['succeeded']);
    for (const path of ['/restart', '/restart-ordered']) {
      const received = new Set(receiver.received(path).map((r) => String(r.headers['webhook-id'])));
      for (const id of accepted) expect(received.has(id), `${path} ${id}`).toBe(true);
    }
    // In order, one at a time: numbers never go down (one repeats only as the redelivery of an attempt whose
    // settlement died with the database), and none is missing.
    const numbers = receiver.received('/restart-ordered').map((r) => Number(r.headers['svc-sequence']));
    for (let i = 1; i < numbers.length; i += 1) expect(numbers[i]!).toBeGreaterThanOrEqual(numbers[i - 1]!);
    expect(new Set(numbers).size).toBe(numbers.at(-1));
    expect(receiver.maxConcurrent('/restart-ordered')).toBe(1);
  }, 120_000);
});
