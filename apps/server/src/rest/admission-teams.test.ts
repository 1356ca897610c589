import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness, type TestTeam } from '../testing/harness.js';

let h: Harness;
let busy: { team: TestTeam; tenantId: string };
let quiet: { team: TestTeam; tenantId: string };

async function teamWithTenant(team: TestTeam, name: string) {
  await post(h, '/event_types', { name: 'teams.test' }, { key: team.key });
  const tenant = await post(h, '/tenants', { external_id: name, name }, { key: team.key });
  return { team, tenantId: tenant.json.id as string };
}

beforeAll(async () => {
  h = await startHarness({ realClock: true });
  busy = await teamWithTenant(h.team, 'busy');
  quiet = await teamWithTenant(await h.newTeam('quiet'), 'quiet');
});
afterAll(async () => {
  await h.close();
});

/** Holds a team's admission queue lock in a transaction of its own, as a bulk replay batch of the team does. */
async function holdQueueLock(teamId: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: h.databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('admission-queue:' || $1, 0))`, [teamId]);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await client.query('COMMIT');
      await client.end();
    },
  };
}

const publish = (of: typeof busy, payload: unknown, idempotencyKey = uniqueKey()) =>
  post(
    h,
    '/messages',
    { tenant_id: of.tenantId, event_type: 'teams.test', payload },
    {
      key: of.team.key,
      idempotencyKey,
    },
  );

/** Whether the promise has settled after `ms`. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  return settled;
}

describe('admission does not couple teams', () => {
  it("another team's publish is admitted while a team's queue lock is held; the busy team's after it is released", async () => {
    const lock = await holdQueueLock(busy.team.teamId);
    try {
      // Sent together, so that the server's batching window holds both.
      const waiting = [publish(busy, { n: 1 }), publish(busy, { n: 2 })];
      const other = publish(quiet, { n: 'quiet' });
      const answer = await other;
      expect(answer.status).toBe(202);
      // More of the quiet team meanwhile, each admitted on its own while the busy team still waits.
      for (let n = 0; n < 3; n += 1) expect((await publish(quiet, { n })).status).toBe(202);
      expect(await settledWithin(Promise.all(waiting), 300)).toBe(false);
      await lock.release();
      const admitted = await Promise.all(waiting);
      expect(admitted.map((a) => a.status)).toEqual([202, 202]);
      for (const a of admitted)
        expect((await h.request('GET', `/messages/${a.json.id}`, { key: busy.team.key })).status).toBe(200);
    } finally {
      await lock.release();
    }
  });

  it('two requests of a busy team with one Idempotency-Key are admitted once: the second replays the first', async () => {
    const lock = await holdQueueLock(busy.team.teamId);
    let answers: ApiResponse[];
    try {
      const key = uniqueKey();
      const twins = [publish(busy, { twin: true }, key), publish(busy, { twin: true }, key)];
      expect((await publish(quiet, { beside: 'twins' })).status).toBe(202);
      expect(await settledWithin(Promise.all(twins), 200)).toBe(false);
      await lock.release();
      answers = await Promise.all(twins);
    } finally {
      await lock.release();
    }
    expect(answers.map((a) => a.status)).toEqual([202, 202]);
    expect(answers[1]!.json.id).toBe(answers[0]!.json.id);
  });

  it('a busy team whose lock is free again goes back to the shared batches', async () => {
    const lock = await holdQueueLock(busy.team.teamId);
    const waited = publish(busy, { n: 'waited' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await lock.release();
    expect((await waited).status).toBe(202);
    const both = await Promise.all([publish(busy, { n: 'after' }), publish(quiet, { n: 'after' })]);
    expect(both.map((a) => a.status)).toEqual([202, 202]);
  });
});
