import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';

/**
 * Replay refusals that need a finished delivery and a limit or a billing state: 429 queue_full at the team's
 * pending-delivery limit, 402 billing_required without a payment card. The engine is driven through its claim and
 * settle services (no worker), so each delivery finishes exactly when the test says.
 */
let h: Harness;
let tenantId: string;
let endpointId: string;

beforeAll(async () => {
  h = await startHarness({ limits: { max_pending_deliveries: 2 } });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'limits', name: 'Limits' })).json.id;
  await post(h, '/event_types', { name: 'limit.event' });
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/l' })).json.id;
});
afterAll(async () => {
  await h.close();
});

const fail: AttemptResult = { kind: 'response', status: 400, retryAfterSeconds: null };

async function failedDelivery(): Promise<string> {
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'limit.event', payload: { n: 1 } });
  expect(message.status, message.text).toBe(202);
  const [row] = await h.services.db.query('SELECT id FROM deliveries WHERE message_id = $1', [message.json.id]);
  const [claimed] = await new EngineSteps(h.services).claim([row.id]);
  await new EngineSteps(h.services).settle([
    { attempt: claimed!, result: fail, durationMs: 5, responseBody: null, jitter: 0 },
  ]);
  return row.id;
}

describe('replay refusals', () => {
  it('answers 429 queue_full when the team is at its pending-delivery limit, creating nothing', async () => {
    const failed = await failedDelivery();
    const waiting = [
      await post(h, '/messages', { tenant_id: tenantId, event_type: 'limit.event', payload: 2 }),
      await post(h, '/messages', { tenant_id: tenantId, event_type: 'limit.event', payload: 3 }),
    ];
    for (const r of waiting) expect(r.status, r.text).toBe(202);
    const refused = await post(h, `/deliveries/${failed}/replay`, {});
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('queue_full');
    expect(refused.headers.get('retry-after')).toBe('5');
    const generations = await h.services.db.query('SELECT count(*)::int AS n FROM deliveries WHERE replay_of = $1', [
      failed,
    ]);
    expect(generations[0].n).toBe(0);
    for (const r of waiting) await post(h, `/messages/${r.json.id}/cancel`, {});
    const accepted = await post(h, `/deliveries/${failed}/replay`, {});
    expect(accepted.status, accepted.text).toBe(202);
    await post(h, `/messages/${accepted.json.message_id}/redact`, {});
  });

  it('holds the pending-delivery limit when replays race each other and an admission', async () => {
    const dead = [await failedDelivery(), await failedDelivery(), await failedDelivery(), await failedDelivery()];
    // Nothing pending: the limit (2) leaves room for two of the five requests fired at once.
    const answers = await Promise.all([
      ...dead.map((id) => post(h, `/deliveries/${id}/replay`, {})),
      post(h, '/messages', { tenant_id: tenantId, event_type: 'limit.event', payload: 'race' }),
    ]);
    const accepted = answers.filter((a) => a.status === 202);
    expect(accepted).toHaveLength(2);
    for (const refused of answers.filter((a) => a.status !== 202)) expect(refused.json.error.code).toBe('queue_full');
    const [pending] = await h.services.db.query(
      `SELECT count(*)::int AS n FROM deliveries WHERE team_id = $1 AND status IN ('queued', 'in_flight', 'retry_wait')`,
      [h.team.teamId],
    );
    expect(pending.n).toBe(2);
    // Leave nothing pending for the next test.
    const messages = await h.services.db.query(
      `SELECT DISTINCT message_id FROM deliveries WHERE team_id = $1 AND status IN ('queued', 'retry_wait')`,
      [h.team.teamId],
    );
    for (const m of messages) await post(h, `/messages/${m.message_id}/redact`, {});
  });

  it('answers 402 billing_required when the team has no payment card, charging and creating nothing', async () => {
    const failed = await failedDelivery();
    await h.services.teams.setPaymentCard(h.team.teamId, false);
    try {
      const refused = await post(h, `/deliveries/${failed}/replay`, {});
      expect(refused.status).toBe(402);
      expect(refused.json.error.code).toBe('billing_required');
      const generations = await h.services.db.query('SELECT count(*)::int AS n FROM deliveries WHERE replay_of = $1', [
        failed,
      ]);
      expect(generations[0].n).toBe(0);
    } finally {
      await h.services.teams.setPaymentCard(h.team.teamId, true);
    }
  });

  it('charges an endpoint test as ingestion plus delivery (svc.test, origin test)', async () => {
    const spend = async () =>
      (
        await h.services.db.query('SELECT coalesce(sum(amount_micros), 0)::int AS n FROM charges WHERE team_id = $1', [
          h.team.teamId,
        ])
      )[0].n as number;
    const before = await spend();
    const test = await post(h, `/endpoints/${endpointId}/test`, {});
    expect(test.status, test.text).toBe(202);
    expect(test.json).toMatchObject({ event_type: 'svc.test', origin: 'test' });
    expect((await spend()) - before).toBe(10 + 50);
  });
});
