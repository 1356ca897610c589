import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness } from '../testing/harness.js';
import { graphqlClient } from '../graphql/test-client.js';

// Four admissions: a team stores at most 4 messages at once (the spec), so all of them are admitted once the lock goes.
const BOUNDS = { admissions: 4, bytes: 400_000 };

let h: Harness;
let tenantId: string;
beforeAll(async () => {
  h = await startHarness({ admissionQueue: BOUNDS });
  await post(h, '/event_types', { name: 'queue.test' });
  tenantId = (await post(h, '/tenants', { external_id: 'queue', name: 'Queue' })).json.id;
});
afterAll(async () => {
  await h.close();
});

/** Holds the team's admission queue lock in a transaction of its own, so that the batch in flight waits for it. */
async function holdQueueLock(): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: h.databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('admission-queue:' || $1, 0))`, [h.team.teamId]);
  return {
    async release() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

const publish = (payload: unknown, idempotencyKey = uniqueKey()) =>
  post(h, '/messages', { tenant_id: tenantId, event_type: 'queue.test', payload }, { idempotencyKey });

/** Waits until the server process holds `count` admissions (the batch waiting for the lock and those behind it). */
async function heldAdmissions(count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const metrics = await (await fetch(`${h.rootUrl}/metrics`)).text();
    if (new RegExp(`^svc_admissions_held ${count}$`, 'm').test(metrics)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the server did not come to hold ${count} admissions`);
}

describe("a server process's admission queue is bounded", () => {
  it(`answers 503 temporarily_unavailable with Retry-After past ${BOUNDS.admissions} waiting admissions`, async () => {
    const lock = await holdQueueLock();
    const held: Promise<ApiResponse>[] = [];
    try {
      for (let i = 0; i < BOUNDS.admissions; i += 1) held.push(publish({ n: i }));
      await heldAdmissions(BOUNDS.admissions);
      const key = uniqueKey();
      const refused = await publish({ n: 'one too many' }, key);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.json.error).toEqual({
        code: 'temporarily_unavailable',
        message: expect.stringContaining(`holding ${BOUNDS.admissions} admissions waiting to be stored`),
      });
      // GraphQL's publishMessage waits in the same queue.
      const gql = await graphqlClient(h)(
        `mutation($t: ID!) { publishMessage(input: { tenantId: $t, eventType: "queue.test", payload: "{}" }) { id } }`,
        { t: tenantId },
      );
      expect(gql.body.errors[0].extensions.code).toBe('temporarily_unavailable');
      await lock.release();
      // What waited is stored; the refusal used nothing, so the same key runs once there is room.
      expect((await Promise.all(held)).map((answer) => answer.status)).toEqual(Array(BOUNDS.admissions).fill(202));
      expect((await publish({ n: 'one too many' }, key)).status).toBe(202);
    } finally {
      await lock.release().catch(() => undefined);
    }
  });

  it(`counts the bytes of the bodies held: at most ${BOUNDS.bytes.toLocaleString('en-US')}`, async () => {
    const big = (n: number) => ({ n, pad: 'x'.repeat(150_000) });
    const lock = await holdQueueLock();
    const held: Promise<ApiResponse>[] = [];
    try {
      held.push(publish(big(1)), publish(big(2)));
      await heldAdmissions(2);
      const refused = await publish(big(3));
      expect(refused.status).toBe(503);
      expect(refused.json.error.message).toContain('400,000 bytes of message bodies');
      // A small body still fits.
      held.push(publish({ n: 'small' }));
      await lock.release();
      expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([202, 202, 202]);
    } finally {
      await lock.release().catch(() => undefined);
    }
  });
});
