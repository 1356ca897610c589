import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalyticsQuery, parseInput, type ReplayView } from '@svc/core';
import { post } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * Bulk replays with the real engine: dry run, a full replay delivering each dead letter once more (and charged
 * once), the max_cost bound stopping midway, the key's spending limit, redacted content skipped, cancel while a
 * batch runs, the active-replay limit, and replays never changing message statuses.
 */
let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 20, max_active_replays: 3 });
});
afterAll(async () => {
  await stack.close();
});

const get = (path: string) => stack.h.request('GET', path);

/** An endpoint whose first `count` messages fail for good (400), then answers 204. */
async function deadLetters(
  path: string,
  count: number,
): Promise<{ endpointId: string; tenantId: string; messages: string[] }> {
  stack.script.set(path, [400]);
  const { endpointId, tenantId } = await stack.setup(path);
  const messages: string[] = [];
  for (let i = 0; i < count; i += 1) messages.push(await stack.publish(tenantId, { path, i }));
  await stack.until(`${count} dead letters at ${path}`, async () => {
    const page = await stack.h.services.deliveries.listDeliveries(
      { actor: stack.h.team },
      {
        endpoint_id: endpointId,
        status: 'failed',
        limit: 200,
      },
    );
    return page.data.length === count ? true : undefined;
  });
  stack.script.set(path, [204]);
  stack.h.clock.advance(1000);
  return { endpointId, tenantId, messages };
}

async function replayUntil(id: string, statuses: string[]): Promise<ReplayView> {
  return stack.until(
    `replay ${id} to be ${statuses.join(' or ')}`,
    async () => {
      const r = await stack.h.services.replays.getReplay({ actor: stack.h.team }, id);
      return statuses.includes(r.status) ? r : undefined;
    },
    30_000,
  );
}

const received = (path: string) => stack.received.filter((r) => r.path === path);

/**
 * Many dead letters without tripping the endpoint's circuit: messages with a one-second window wait at a paused
 * endpoint until they expire; then the endpoint is enabled again.
 */
async function expiredDeadLetters(path: string, count: number): Promise<{ endpointId: string }> {
  const { endpointId, tenantId } = await stack.setup(path, { status: 'paused' });
  const expiresAt = new Date(stack.h.clock.now().getTime() + 1000).toISOString();
  for (let i = 0; i < count; i += 1) {
    const r = await post(stack.h, '/messages', {
      tenant_id: tenantId,
      event_type: 'order.created',
      payload: { path, i },
      expires_at: expiresAt,
    });
    expect(r.status, r.text).toBe(202);
  }
  await stack.advance(2000);
  await stack.until(`${count} expired deliveries at ${path}`, async () => {
    const page = await stack.h.services.deliveries.listDeliveries(
      { actor: stack.h.team },
      { endpoint_id: endpointId, status: 'expired', limit: 200 },
    );
    return page.data.length === count ? true : undefined;
  });
  const endpoint = await get(`/endpoints/${endpointId}`);
  const enabled = await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
    body: { status: 'enabled' },
    ifMatch: endpoint.headers.get('etag')!,
  });
  expect(enabled.status, enabled.text).toBe(200);
  return { endpointId };
}

describe('POST /replays', () => {
  it('dry run: the count and the price, with no key needed and nothing stored or charged', async () => {
    const { endpointId } = await deadLetters('/dry', 3);
    const charges = await stack.h.services.db.query('SELECT count(*)::int AS n FROM charges');
    const dry = await stack.h.request('POST', '/replays', {
      body: { endpoint_id: endpointId, dry_run: true, max_cost_usd: '0.0001' },
    });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.json).toMatchObject({
      dry_run: true,
      endpoint_id: endpointId,
      matched: 3,
      estimate: { deliveries: 3, skipped: 0, cost_usd: '0.00015' },
      within_max_cost: { deliveries: 2, cost_usd: '0.0001' },
    });
    const stored = await stack.h.services.db.query('SELECT count(*)::int AS n FROM replays WHERE endpoint_id = $1', [
      endpointId,
    ]);
    expect(stored[0].n).toBe(0);
    expect((await stack.h.services.db.query('SELECT count(*)::int AS n FROM charges'))[0].n).toBe(charges[0].n);
    const noKey = await stack.h.request('POST', '/replays', { body: { endpoint_id: endpointId } });
    expect(noKey.status).toBe(422);
    expect(noKey.json.error.field).toBe('Idempotency-Key');
  });

  it('replays every dead letter once as a paid generation, then completes with webhooks.replay.completed', async () => {
    const { endpointId, messages } = await deadLetters('/full', 4);
    const before = received('/full').length;
    const r = await post(stack.h, '/replays', { endpoint_id: endpointId });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({
      endpoint_id: endpointId,
      status: 'running',
      paying_key_id: stack.h.team.keyId,
      counts: { matched: 4 },
      estimate: { deliveries: 4, skipped: 0, cost_usd: '0.0002' },
    });
    expect(r.json.id).toMatch(/^wdr_/);
    const done = await replayUntil(r.json.id, ['completed']);
    expect(done).toMatchObject({
      reason: null,
      counts: { matched: 4, created: 4, skipped: 0, succeeded: 4, failed: 0, pending: 0 },
      cost_usd: '0.0002',
    });
    // Each message arrives once more, with its own webhook-id.
    const replayed = received('/full').slice(before);
    expect(replayed).toHaveLength(4);
    expect(new Set(replayed.map((x) => x.headers['webhook-id']))).toEqual(new Set(messages));
    const generations = await get(`/deliveries?endpoint_id=${endpointId}&kind=replay`);
    expect(generations.json.data).toHaveLength(4);
    expect(
      generations.json.data.every(
        (d: { replay_id: string; generation: number }) => d.replay_id === r.json.id && d.generation === 1,
      ),
    ).toBe(true);
    const charged = await stack.h.services.db.query(
      `SELECT count(*)::int AS n, sum(amount_micros)::int AS micros FROM charges WHERE resource_id = ANY($1::text[])`,
      [generations.json.data.map((d: { id: string }) => d.id)],
    );
    expect(charged[0]).toEqual({ n: 4, micros: 200 });
    for (const id of messages) expect((await stack.messageStatus(id)).status).toBe('failed');
    const events = await stack.eventsUntil('webhooks.replay.completed', (d) => d['replay_id'] === r.json.id);
    expect(events.find((d) => d['replay_id'] === r.json.id)).toEqual({
      replay_id: r.json.id,
      deliveries: 4,
      succeeded: 4,
      failed: 0,
    });
    // Analytics count each replay generation as a delivery when it is created (4 originals + 4 replays).
    await stack.h.services.analytics.rollUp();
    const window = {
      created_after: new Date(stack.h.clock.now().getTime() - 3_600_000).toISOString(),
      created_before: new Date(stack.h.clock.now().getTime() + 3_600_000).toISOString(),
    };
    const analytics = await stack.h.services.analytics.getAnalytics(
      { actor: stack.h.team },
      parseInput(AnalyticsQuery, { ...window, endpoint_id: endpointId }),
    );
    const totals = analytics.rows.reduce(
      (sum: { deliveries: number; succeeded: number }, row: { deliveries: number; succeeded: number }) => ({
        deliveries: sum.deliveries + row.deliveries,
        succeeded: sum.succeeded + row.succeeded,
      }),
      { deliveries: 0, succeeded: 0 },
    );
    expect(totals).toEqual({ deliveries: 8, succeeded: 4 });
    // A second replay finds nothing left: the newest generations succeeded.
    const again = await post(stack.h, '/replays', { endpoint_id: endpointId, dry_run: true });
    expect(again.json.matched).toBe(0);
  });

  it('stops at max_cost_usd midway (completed, reason max_cost_reached) and skips redacted content', async () => {
    const { endpointId, messages } = await deadLetters('/bounded', 5);
    await post(stack.h, `/messages/${messages[0]}/redact`, {});
    const r = await post(stack.h, '/replays', { endpoint_id: endpointId, max_cost_usd: '0.00010' });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({ max_cost_usd: '0.0001', estimate: { deliveries: 4, skipped: 1 } });
    const done = await replayUntil(r.json.id, ['completed']);
    expect(done).toMatchObject({
      reason: 'max_cost_reached',
      counts: { matched: 5, created: 2, skipped: 1, succeeded: 2, failed: 0 },
      cost_usd: '0.0001',
    });
  });

  it("stops at the key's spending limit: failed, reason spending_limit, webhooks.replay.failed", async () => {
    const { endpointId } = await deadLetters('/limited', 3);
    const key = await stack.h.services.teams.createKey(stack.h.team.teamId, { spendingLimitMicros: 50n });
    const r = await post(stack.h, '/replays', { endpoint_id: endpointId }, { key: key.secret });
    expect(r.status, r.text).toBe(202);
    const stopped = await replayUntil(r.json.id, ['failed']);
    expect(stopped).toMatchObject({ reason: 'spending_limit', counts: { created: 1 }, cost_usd: '0.00005' });
    const events = await stack.eventsUntil('webhooks.replay.failed', (d) => d['replay_id'] === r.json.id);
    expect(events.find((d) => d['replay_id'] === r.json.id)).toEqual({
      replay_id: r.json.id,
      deliveries: 1,
      reason: 'spending_limit',
    });
  });

  it('refuses an unknown or disabled endpoint, a window over 30 days, a bad amount, and a 4th active replay (max_active_replays 3 here)', async () => {
    const bad = [
      [{ endpoint_id: 'wde_00000000000000000000000000' }, 422, 'endpoint_id'],
      // A malformed ID is refused by its shape, before any other field (docs/api-choices.md, "Hostile input").
      [{ endpoint_id: 'x' }, 422, 'endpoint_id'],
      [{ endpoint_id: 'wde_00000000000000000000000000', max_cost_usd: '1.2345678' }, 422, 'max_cost_usd'],
      [
        {
          endpoint_id: 'wde_00000000000000000000000000',
          created_after: '2026-01-01T00:00:00Z',
          created_before: '2026-03-01T00:00:00Z',
        },
        422,
        'created_after',
      ],
    ] as const;
    for (const [body, status, field] of bad) {
      const r = await post(stack.h, '/replays', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.error.field, JSON.stringify(body)).toBe(field);
    }
    // A replay stays active while its generations wait at a paused endpoint: one such endpoint per replay.
    let refused: Awaited<ReturnType<typeof post>> | null = null;
    const paused: string[] = [];
    for (let i = 0; i < 4 && refused === null; i += 1) {
      const { endpointId } = await deadLetters(`/crowded-${i}`, 1);
      paused.push(endpointId);
      const endpoint = await get(`/endpoints/${endpointId}`);
      await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
        body: { status: 'paused' },
        ifMatch: endpoint.headers.get('etag')!,
      });
      const r = await post(stack.h, '/replays', { endpoint_id: endpointId });
      if (r.status !== 202) refused = r;
      else await replayUntil(r.json.id, ['delivering']);
    }
    expect(refused?.status).toBe(409);
    expect(refused?.json.error.code).toBe('quota_exceeded');
    const active = await stack.h.services.db.query(
      `SELECT count(*)::int AS n FROM replays WHERE team_id = $1 AND status IN ('running', 'delivering')`,
      [stack.h.team.teamId],
    );
    expect(active[0].n).toBe(3);
    // Enabled again, their generations are delivered and the replays complete (the next test starts one).
    for (const endpointId of paused) {
      const endpoint = await get(`/endpoints/${endpointId}`);
      await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
        body: { status: 'enabled' },
        ifMatch: endpoint.headers.get('etag')!,
      });
    }
    await stack.advance(31_000);
    await stack.until('the crowded replays to complete', async () => {
      const [row] = await stack.h.services.db.query(
        `SELECT count(*)::int AS n FROM replays WHERE team_id = $1 AND status IN ('running', 'delivering')`,
        [stack.h.team.teamId],
      );
      return row.n === 0 ? true : undefined;
    });
  });
});

describe('POST /replays/{id}/cancel', () => {
  it('stops a running replay between batches: the generations created run, no more are made', async () => {
    // More dead letters than one batch takes, so there is a second batch to stop.
    const { endpointId } = await expiredDeadLetters('/cancel', 101);
    // Hold the paying key's spend row: the first batch waits in its charge, inside its transaction.
    const holder = stack.h.services.db.createQueryRunner();
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM key_monthly_spend WHERE key_id = $1 FOR UPDATE`, [stack.h.team.keyId]);
    const r = await post(stack.h, '/replays', { endpoint_id: endpointId });
    expect(r.status).toBe(202);
    await stack.until('the batch to wait for the spend row', async () => {
      const rows = await stack.h.services.db.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%key_monthly_spend%'`,
      );
      return rows.length > 0 ? true : undefined;
    });
    const cancel = post(stack.h, `/replays/${r.json.id}/cancel`, {});
    // The cancel waits for the replay row the batch holds (not a fixed pause: on a busy machine the request can take
    // longer to get there, and the batch would commit before it).
    await stack.until('the cancel to wait for the replay row', async () => {
      const rows = await stack.h.services.db.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM replays WHERE id%FOR UPDATE%'`,
      );
      return rows.length > 0 ? true : undefined;
    });
    await holder.query('COMMIT');
    await holder.release();
    const canceled = await cancel;
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.json).toMatchObject({ status: 'canceled', reason: 'canceled' });
    const again = await post(stack.h, `/replays/${r.json.id}/cancel`, {});
    expect(again.json.status).toBe('canceled');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await replayUntil(r.json.id, ['canceled']);
    expect(after.counts).toMatchObject({ matched: 101, created: 100 });
    const generations = await stack.h.services.db.query(
      'SELECT count(*)::int AS n FROM deliveries WHERE replay_id = $1',
      [r.json.id],
    );
    expect(generations[0].n).toBe(100);
  });
});

describe('a replay whose job keeps failing', () => {
  it('gives up after the bounded retries: the replay ends failed (job_failed) with webhooks.replay.failed', async () => {
    const { endpointId } = await deadLetters('/gives-up', 1);
    // Every batch of this endpoint's replays fails as it moves the replay's cursor (as if Postgres refused it).
    const db = stack.h.services.db;
    await db.query(`CREATE FUNCTION test_refuse_batch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'batch refused by the test'; END $$`);
    await db.query(`CREATE TRIGGER test_refuse_batch BEFORE UPDATE ON replays FOR EACH ROW
      WHEN (NEW.endpoint_id = '${endpointId}' AND NEW.status = 'running') EXECUTE FUNCTION test_refuse_batch()`);
    const givenUp = async () =>
      (await stack.h.services.metrics.jobsGivenUp.get()).values.find((v) => v.labels.queue === 'replay.batch')?.value ??
      0;
    const before = await givenUp();
    try {
      const r = await post(stack.h, '/replays', { endpoint_id: endpointId });
      expect(r.status, r.text).toBe(202);
      // Each retry waits longer (5 s doubling, with jitter): the test moves the queue's clock instead of waiting.
      const failed = await stack.until(
        'the replay to fail',
        async () => {
          const replay = await stack.h.services.replays.getReplay({ actor: stack.h.team }, r.json.id);
          if (replay.status === 'failed') return replay;
          await stack.advance(90_000);
          await new Promise((resolve) => setTimeout(resolve, 200));
          return undefined;
        },
        60_000,
      );
      expect(failed).toMatchObject({ status: 'failed', reason: 'job_failed', counts: { created: 0 } });
      const events = await stack.eventsUntil('webhooks.replay.failed', (d) => d['replay_id'] === r.json.id);
      expect(events.find((d) => d['replay_id'] === r.json.id)).toEqual({
        replay_id: r.json.id,
        deliveries: 0,
        reason: 'job_failed',
      });
      expect(await givenUp()).toBe(before + 1);
      // pg-boss keeps the job as failed after its first try and 4 retries, with the error.
      const jobs = await db.query(
        `SELECT state, retry_count, output->>'message' AS error FROM pgboss.job
          WHERE name = 'replay.batch' AND data->>'replay_id' = $1`,
        [r.json.id],
      );
      expect(jobs).toEqual([{ state: 'failed', retry_count: 4, error: expect.stringContaining('batch refused') }]);
    } finally {
      await db.query('DROP TRIGGER test_refuse_batch ON replays');
      await db.query('DROP FUNCTION test_refuse_batch()');
    }
  });

  it('a replay whose job pg-boss failed without the give-up step (a worker killed on its last try) ends failed at the next sweep', async () => {
    const { endpointId } = await deadLetters('/stranded', 2);
    const other = await deadLetters('/waiting', 1);
    await stack.stopWorker();
    try {
      const stranded = await post(stack.h, '/replays', { endpoint_id: endpointId });
      expect(stranded.status, stranded.text).toBe(202);
      const waiting = await post(stack.h, '/replays', { endpoint_id: other.endpointId });
      expect(waiting.status, waiting.text).toBe(202);
      // What pg-boss does to an active job whose worker died on its last allowed try: the job fails, no handler runs.
      const db = stack.h.services.db;
      await db.query(
        `UPDATE pgboss.job SET state = 'failed', completed_on = now()
          WHERE name = 'replay.batch' AND data->>'replay_id' = $1`,
        [stranded.json.id],
      );
      expect(await stack.h.services.replays.giveUpStranded()).toBe(1);
      const failed = await stack.h.services.replays.getReplay({ actor: stack.h.team }, stranded.json.id);
      expect(failed).toMatchObject({ status: 'failed', reason: 'job_failed' });
      const events = await stack.eventsUntil('webhooks.replay.failed', (d) => d['replay_id'] === stranded.json.id);
      expect(events.find((d) => d['replay_id'] === stranded.json.id)).toEqual({
        replay_id: stranded.json.id,
        deliveries: 0,
        reason: 'job_failed',
      });
      // The replay whose job still waits is left alone, and a second sweep finds nothing.
      expect((await stack.h.services.replays.getReplay({ actor: stack.h.team }, waiting.json.id)).status).toBe(
        'running',
      );
      expect(await stack.h.services.replays.giveUpStranded()).toBe(0);
    } finally {
      await stack.startWorker();
    }
  });
});
