import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DELIVERY_FROM, Sealer, shownStatusSql } from '@svc/core';
import { useFaultStack } from './fault-stack.js';
import {
  linesBesideLoopbackWarning,
  SEALING_KEY_REFUSAL,
  startServiceProcess,
  until,
  type ServiceProcess,
} from './processes.js';

/**
 * A wrong SVC_ENCRYPTION_KEY fails loudly and never fails a delivery (docs/upgrading.md, "The sealing key is checked
 * at start"; docs/operations.md, "A secret sealed with another key"): two worker processes over one database, one
 * with the wrong key. At start the wrong one refuses in one line. At run time (the key changed under a running
 * worker) that worker hands its deliveries back unsent and stands down, and the worker with the right key delivers
 * every one of them; none fails.
 */
const stack = useFaultStack();

function workerIdOf(worker: ServiceProcess): string {
  const line = worker
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"worker started"'));
  return (JSON.parse(line!) as { worker_id: string }).worker_id;
}

async function statusesOf(messageIds: readonly string[]): Promise<Map<string, string>> {
  const rows: { message_id: string; status: string }[] = await stack.d.core.services.db.query(
    `SELECT d.message_id, ${shownStatusSql('now()')} AS status FROM ${DELIVERY_FROM} WHERE d.message_id = ANY($1)`,
    [messageIds],
  );
  return new Map(rows.map((r) => [r.message_id, r.status]));
}

describe('a worker with the wrong SVC_ENCRYPTION_KEY', () => {
  it('refuses to start, in one line naming the key IDs only, beside a worker with the right key', async () => {
    const good = await stack.d.startWorker('right-key');
    const wrongKey = randomBytes(32).toString('base64');
    const wrong = await startServiceProcess('worker', { ...stack.d.env, SVC_ENCRYPTION_KEY: wrongKey }, 'wrong-key');
    const server = await startServiceProcess(
      'server',
      { ...stack.d.env, SVC_ENCRYPTION_KEY: wrongKey, PORT: '0', HOST: '127.0.0.1' },
      'wrong-key-server',
    );
    expect({ worker: await wrong.exited(), server: await server.exited() }).toEqual({ worker: 1, server: 1 });
    for (const refused of [wrong, server]) {
      // One line, beside the loopback warning every process of this deployment prints.
      expect(linesBesideLoopbackWarning(refused)).toEqual([expect.stringMatching(SEALING_KEY_REFUSAL)]);
      expect(refused.output()).not.toContain(wrongKey);
      expect(refused.output()).not.toContain(stack.d.env['SVC_ENCRYPTION_KEY']);
    }
    // The worker with the right key delivers meanwhile.
    const endpoint = await stack.d.endpoint(`${stack.receiver.baseUrl}/start-check`);
    const published = await stack.d.publish(endpoint.tenantId, { start: true });
    expect(published.status, published.text).toBe(202);
    await until('the delivery', async () =>
      (await statusesOf([published.json.id])).get(published.json.id) === 'succeeded' ? true : undefined,
    );
    await good.stop();
  }, 120_000);

  it('met at run time (the key changed under it): hands its deliveries back and stands down; the right key delivers them all, none failed', async () => {
    const { d, receiver } = stack;
    const endpoints = [];
    for (let i = 0; i < 6; i += 1) endpoints.push(await d.endpoint(`${receiver.baseUrl}/rekeyed-${i}`));
    const old = await d.startWorker('old-key', { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' });
    await old.waitFor('metrics served');

    // The operator re-seals every secret under a new key while the old worker runs on (its key is now wrong).
    const oldSealer = new Sealer(Buffer.from(d.env['SVC_ENCRYPTION_KEY']!, 'base64'));
    const newKey = randomBytes(32);
    const newSealer = new Sealer(newKey);
    const db = d.core.services.db;
    const secrets: { endpoint_id: string; secret_version: number; secret_sealed: Buffer }[] = await db.query(
      'SELECT endpoint_id, secret_version, secret_sealed FROM endpoint_secrets',
    );
    for (const row of secrets) {
      const context = `endpoint:${row.endpoint_id}:secret:${row.secret_version}`;
      await db.query('UPDATE endpoint_secrets SET secret_sealed = $3 WHERE endpoint_id = $1 AND secret_version = $2', [
        row.endpoint_id,
        row.secret_version,
        newSealer.seal(oldSealer.open(row.secret_sealed, context), context),
      ]);
    }
    await db.query('DELETE FROM sealing_key_check');

    const messages: string[] = [];
    for (const endpoint of endpoints)
      for (let n = 0; n < 3; n += 1) {
        const published = await d.publish(endpoint.tenantId, { n });
        expect(published.status, published.text).toBe(202);
        messages.push(published.json.id as string);
      }
    // The old worker meets the new key's secrets: it says so, counts them, and claims nothing more for a while.
    await old.waitFor('cannot open secrets sealed with key', 30_000);
    expect(old.output()).toContain(`cannot open secrets sealed with key ${newSealer.keyId}`);
    const port = (
      JSON.parse(
        old
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"metrics served"'))!,
      ) as { port: number }
    ).port;
    const scraped = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(Number(/^svc_sealing_key_mismatches_total (\d+)$/m.exec(scraped)?.[1])).toBeGreaterThan(0);
    expect(scraped).toMatch(/^svc_worker_standing_down 1$/m);
    expect([...(await statusesOf(messages)).values()].filter((s) => s === 'failed')).toEqual([]);
    expect(receiver.requests.filter((r) => r.path.startsWith('/rekeyed-'))).toHaveLength(0);

    // A worker with the new key starts (it records the new key's check value) and delivers every one.
    const fresh = await d.startWorker('new-key', { SVC_ENCRYPTION_KEY: newKey.toString('base64') });
    const statuses = await until(
      'every delivery to end',
      async () => {
        const now = await statusesOf(messages);
        return [...now.values()].every((s) => ['succeeded', 'failed', 'expired', 'canceled'].includes(s))
          ? now
          : undefined;
      },
      60_000,
      250,
    );
    expect(new Set(statuses.values())).toEqual(new Set(['succeeded']));
    // Each message went out once: nothing was sent by the old worker, nothing twice.
    const sent = receiver.requests.filter((r) => r.path.startsWith('/rekeyed-')).map((r) => r.headers['webhook-id']);
    expect(sent.sort()).toEqual([...messages].sort());
    const attempts: { number: number; n: number }[] = await db.query(
      `SELECT a.number, count(*)::int AS n FROM attempts a JOIN deliveries x ON x.id = a.delivery_id
        WHERE x.message_id = ANY($1) GROUP BY a.number`,
      [messages],
    );
    expect(attempts).toEqual([{ number: 1, n: messages.length }]);
    // The team sees why its deliveries waited: an event per endpoint, naming the worker and both keys.
    const team = { actor: { teamId: (await teamOf(endpoints[0]!.tenantId)) as string, keyId: 'none' } };
    const events = await until('the mismatch events', async () => {
      const page = await d.core.services.events.listEvents(team, {
        type: 'webhooks.worker.sealing_key_mismatch',
        limit: 200,
      });
      return page.data.length > 0 ? page : undefined;
    });
    expect(events.data[0]!.data).toMatchObject({
      worker_id: workerIdOf(old),
      sealed_key_id: newSealer.keyId,
      worker_key_id: oldSealer.keyId,
    });
    // After its pause (10 s, on the real clock) the old worker rejoins; with nothing left it cannot open, it stays.
    await old.waitFor('rejoined delivery after standing down', 30_000);
    const rejoined = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(rejoined).toMatch(/^svc_worker_standing_down 0$/m);
    await Promise.all([old.stop(), fresh.stop()]);
  }, 150_000);
});

async function teamOf(tenantId: string): Promise<string> {
  const rows: { team_id: string }[] = await stack.d.core.services.db.query(
    'SELECT team_id FROM tenants WHERE id = $1',
    [tenantId],
  );
  return rows[0]!.team_id;
}
