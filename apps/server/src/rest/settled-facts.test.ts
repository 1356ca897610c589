import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';

/**
 * A settlement records one analytics fact per attempt, and counts the delivery the attempt finished in that same row
 * when both fall in one UTC hour (docs/analytics.md, "Facts"); across an hour's end they stay two rows, each in its
 * own hour. The hourly counts are the same either way.
 */
let h: Harness;
let tenantId: string;
let endpointId: string;
const ok: AttemptResult = { kind: 'response', status: 200, retryAfterSeconds: null };

beforeAll(async () => {
  h = await startHarness();
  await post(h, '/event_types', { name: 'facts.test' });
  tenantId = (await post(h, '/tenants', { external_id: 'facts', name: 'Facts' })).json.id;
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/facts' })).json
    .id;
});
afterAll(async () => {
  await h.close();
});

async function deliverOnce(startAt: string, finishAt: string): Promise<string> {
  h.clock.set(startAt);
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'facts.test', payload: {} });
  expect(message.status).toBe(202);
  const [delivery]: { id: string }[] = await h.services.db.query(`SELECT id FROM deliveries WHERE message_id = $1`, [
    message.json.id,
  ]);
  const steps = new EngineSteps(h.services);
  const [attempt] = await steps.claim([delivery!.id]);
  h.clock.set(finishAt);
  await steps.settle([{ attempt: attempt!, result: ok, durationMs: 5, responseBody: null, jitter: 0 }]);
  return message.json.id as string;
}

async function factsOf(messageId: string) {
  return (await h.services.db.query(
    `SELECT at, attempts, succeeded FROM analytics_facts
      WHERE message_id = $1 AND endpoint_id = $2 AND (attempts IS NOT NULL OR succeeded IS NOT NULL) ORDER BY at`,
    [messageId, endpointId],
  )) as { at: Date; attempts: number | null; succeeded: number | null }[];
}

describe("a settlement's analytics facts", () => {
  it('one row for an attempt and the delivery it finished within the hour', async () => {
    const messageId = await deliverOnce('2026-11-02T10:20:00.000Z', '2026-11-02T10:20:00.400Z');
    expect(await factsOf(messageId)).toEqual([{ at: new Date('2026-11-02T10:20:00.000Z'), attempts: 1, succeeded: 1 }]);
  });

  it("two rows, each in its own hour, when the attempt started before the hour's end and finished after it", async () => {
    const messageId = await deliverOnce('2026-11-02T10:59:59.800Z', '2026-11-02T11:00:00.300Z');
    expect(await factsOf(messageId)).toEqual([
      { at: new Date('2026-11-02T10:59:59.800Z'), attempts: 1, succeeded: null },
      { at: new Date('2026-11-02T11:00:00.300Z'), attempts: null, succeeded: 1 },
    ]);
  });
});
